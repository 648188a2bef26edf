// What is deleted is gone (issue 18, interface 4.3: DELETE /entity "permanently and irreversibly
// deletes the entity"). A person is verified by every path — universal KYC with an uploaded
// document, token sharing, the hosted SDK (played by the sandbox), and as a declared owner with
// documents — each with a name and a document number found nowhere else; after DELETE, every text
// column of every table and every file of the file store is searched for them and nothing is found.
// And the races: an upload finishing as its entity is deleted, a batch row whose entity is deleted
// while the provider imports it, a retry after the entity was made again.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { request } from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEntities, csvOf, donorAt, upload, waitForBatch, type Donor } from '../helpers/imports.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { pdfOf, uniqueName, uniqueNumber, whereFound as findPersonData } from '../helpers/person-data.ts';
import { canonicalPayload, documentsForm, FILES, filesForm } from '../helpers/ukyc.ts';
import { eventually } from '../helpers/eventually.ts';
import { subscribe } from '../helpers/world.ts';

describe('deleting an entity', () => {
  let stack: Stack;
  let key: string;
  let businessId: string;
  let donor: Donor;
  let receiver: Receiver;
  let n = 0;

  before(async () => {
    stack = await startStack({
      workers: true,
      providerCallbacks: true,
      env: {
        WEBHOOK_ALLOW_INSECURE_URLS: 'true',
        BATCH_PROVIDER_MAX_ATTEMPTS: '2',
        BATCH_PROVIDER_RETRY_INITIAL_MS: '100',
        API_RATE_LIMIT_PER_SECOND: '100000',
        // a download larger than the sockets' buffers, so a reader that reads nothing holds it
        UPLOAD_MAX_FILE_BYTES: String(64 * 1024 * 1024),
        DOWNLOAD_DEADLINE_SECONDS: '2',
      },
    });
    receiver = await startReceiver();
    ({ apiKey: key, businessId } = await stack.newBusiness({ name: 'Deletion' }));
    donor = donorAt(stack);
    await subscribe(stack, key, receiver.url, ['account_status_change', 'kyb_status_change']);
  });
  after(async () => {
    await receiver.close();
    await stack.close();
  });

  const person = async (type: 'INDIVIDUAL' | 'BUSINESS' = 'INDIVIDUAL', externalId = `del-${n++}`) =>
    (await createEntities(stack, key, [externalId], type))[0]!;
  const decided = async (entityId: string) => {
    await eventually(`a decision for ${entityId}`, () => receiver.received.some((r) => JSON.parse(r.body.toString()).data.entityId === entityId), {
      timeoutMs: 30_000,
      everyMs: 100,
    });
  };
  const del = async (entityId: string) => assert.equal((await stack.request('DELETE', `/entity/${entityId}`, { key })).status, 204);

  const whereFound = (needle: string) => findPersonData(stack.db, [stack.config.files.dir, stack.config.files.uploadTmpDir], needle);

  it('leaves nothing of a person verified by every path: no row, no column, no file names them', async () => {
    const people: { entityId: string; name: string; number: string }[] = [];

    // universal KYC: the data, and an identity document whose bytes carry the name
    {
      const [name, number] = [uniqueName(), uniqueNumber()];
      const entityId = await person();
      const value = JSON.stringify(
        canonicalPayload((p) => {
          p.identity.firstName = name;
          p.identity.fullName = `${name} Example`;
          p.document[0].number = number;
        }),
      );
      assert.equal(
        (await stack.request('POST', `/entity/${entityId}/requirement`, { key, json: { requirementSlug: 'ukyc-canonical-kyc-data', value } })).status,
        201,
      );
      const up = await stack.request('POST', `/entity/${entityId}/requirement-slug/ukyc-id-document/upload`, {
        key,
        form: filesForm([{ bytes: pdfOf(name, number), name: `${name}.pdf` }]),
      });
      assert.equal(up.status, 201, up.text);
      await decided(entityId);
      assert.equal((await stack.request('GET', `/entity/${entityId}/signed-payload`, { key })).status, 200);
      people.push({ entityId, name, number });
    }
    // token sharing: an applicant at the provider with the person's data, shared and imported
    {
      const [name, number] = [uniqueName(), uniqueNumber()];
      const externalId = `del-share-${n++}`;
      const entityId = await person('INDIVIDUAL', externalId);
      const applicant = stack.sim!.state.addScenarioApplicant(donor.account.clientId, 'complete');
      applicant.info = {
        ...applicant.info,
        firstName: name,
        idDocs: [{ idDocType: 'PASSPORT', country: 'GBR', number, issuedDate: '2020-01-01', validUntil: '2035-01-01' }],
      };
      const { token } = await donor.api.createShareToken({ applicantId: applicant.id, forClientId: stack.recipient!.clientId });
      const res = await stack.request('POST', '/entity/kyc/import/sync', { key, json: { externalId, shareToken: token } });
      assert.equal(res.status, 200, res.text);
      await decided(entityId);
      people.push({ entityId, name, number });
    }
    // hosted SDK, played by the sandbox: the applicant's data comes back through the provider's callback
    {
      const [name, number] = [uniqueName(), uniqueNumber()];
      const entityId = await person();
      const res = await stack.request('POST', `/sandbox/entity/${entityId}/kyc/complete`, {
        key,
        json: { reviewAnswer: 'GREEN', person: { firstName: name, idDocument: { type: 'PASSPORT', country: 'GBR', number } } },
      });
      assert.equal(res.status, 202, res.text);
      await decided(entityId);
      people.push({ entityId, name, number });
    }
    // a declared owner of a business, with the owner's passport uploaded
    let company: string;
    let link: string;
    {
      const [name, number] = [uniqueName(), uniqueNumber()];
      company = await person('BUSINESS');
      const profile = await stack.request('POST', '/ukyb', {
        key,
        json: {
          entityId: company,
          business: {
            legalName: 'Gone Ltd',
            registrationNumber: '1',
            country: 'GBR',
            address: { country: 'GBR', postCode: 'EC1A 1BB', street: 'King Street' },
          },
          ubos: [{ externalId: `del-owner-${n++}`, firstName: name, lastName: 'Owner', dob: '1980-01-01', nationality: 'GBR', ownershipPercentage: 100 }],
        },
      });
      assert.equal(profile.status, 201, profile.text);
      const owner = profile.body.ubos[0].entityId as string;
      const doc = await stack.request('POST', '/ukyb/documents', {
        key,
        form: documentsForm({ entityId: company, memberId: owner, documentType: 'PASSPORT' }, [{ bytes: pdfOf(name, number), name: 'passport.pdf' }]),
      });
      assert.equal(doc.status, 201, doc.text);
      const fileId = (await stack.request('GET', `/entity/${company}/documents`, { key })).body.ubos[0].documents.PASSPORT[0].fileId;
      link = (await stack.request('GET', `/entity/${owner}/file/${fileId}/presigned-url`, { key })).body.url;
      assert.equal((await fetch(link)).status, 200);
      people.push({ entityId: owner, name, number });
    }

    for (const p of people) {
      assert.notDeepEqual(await whereFound(p.name), [], `${p.name} is stored before the delete (the search finds what is there)`);
    }
    for (const p of people) await del(p.entityId);
    await del(company);
    for (const p of people) {
      assert.deepEqual(await whereFound(p.name), [], `the name of deleted entity ${p.entityId}`);
      assert.deepEqual(await whereFound(p.number), [], `the document number of deleted entity ${p.entityId}`);
      assert.equal((await stack.request('GET', `/entity/${p.entityId}`, { key })).status, 404);
    }
    assert.equal((await fetch(link)).status, 404, 'a download link issued before the delete');
    const [due] = await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM file_store_cleanup');
    assert.equal(Number(due!.n), 0, 'every byte removed at once, nothing left for housekeeping');
  });

  it('an upload that finishes as its entity is deleted answers 404 and leaves no bytes behind', async () => {
    const entityId = await person();
    const boundary = `----race-${randomUUID()}`;
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="late.pdf"\r\nContent-Type: application/pdf\r\n\r\n`);
    const tail = Buffer.concat([pdfOf('late'), Buffer.from(`\r\n--${boundary}--\r\n`)]);
    const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = request(`${stack.url}/entity/${entityId}/requirement-slug/ukyc-id-document/upload`, {
        method: 'POST',
        headers: { 'x-vouch-api-key': key, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + tail.length) },
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }));
      });
      req.on('error', reject);
      req.write(head);
      // the upload is under way (checked, its slot taken, its file being received) when the entity goes
      setTimeout(() => {
        void del(entityId).then(() => req.end(tail), reject);
      }, 300);
    });
    const res = await answer;
    assert.deepEqual([res.status, res.body.code], [404, '0702000100']);
    assert.deepEqual(await readdir(path.join(stack.config.files.dir, businessId, entityId)).catch(() => []), [], 'no bytes in the file store');
    assert.equal((await stack.db.query('SELECT 1 FROM files WHERE entity_id = $1', [entityId])).length, 0);
    assert.equal((await stack.db.query('SELECT 1 FROM file_store_cleanup')).length, 0, 'and nothing left for housekeeping to find');
  });

  it('a download under way as its entity is deleted is cut off by the download deadline; its link answers 404 from then on', async () => {
    const entityId = await person();
    const size = 48 * 1024 * 1024;
    const big = Buffer.concat([FILES.pdf, Buffer.alloc(size - FILES.pdf.length, 0x20)]);
    const up = await stack.request('POST', `/entity/${entityId}/requirement-slug/ukyc-id-document/upload`, {
      key,
      form: filesForm([{ bytes: big, name: 'big.pdf' }]),
    });
    assert.equal(up.status, 201, up.text);
    const [file] = await stack.db.query<{ id: string }>('SELECT id FROM files WHERE entity_id = $1', [entityId]);
    const link = (await stack.request('GET', `/entity/${entityId}/file/${file!.id}/presigned-url`, { key })).body.url as string;
    // a reader that takes the headers and then reads nothing (its socket unread, it would not even
    // notice the connection closing) until well past the deadline, then reads what reached it
    const download = await new Promise<{ status: number; readLater(afterMs: number): Promise<{ received: number; complete: boolean }> }>((resolve, reject) => {
      const req = request(link, (res) => {
        res.pause();
        resolve({
          status: res.statusCode!,
          readLater: (afterMs) =>
            new Promise((done) => {
              let received = 0;
              res.on('data', (c: Buffer) => (received += c.length));
              res.on('error', () => undefined); // the connection cut under it
              res.on('close', () => done({ received, complete: res.complete }));
              setTimeout(() => res.resume(), afterMs);
            }),
        });
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(download.status, 200);
    const reading = download.readLater(4000);
    await del(entityId);
    assert.equal((await fetch(link)).status, 404, 'the link, used after the delete');
    const outcome = await reading;
    assert.equal(outcome.complete, false, 'the stalled download was cut off');
    assert.ok(outcome.received < size, `not every byte went out (${outcome.received} of ${size})`);
    assert.deepEqual(await readdir(path.join(stack.config.files.dir, businessId, entityId)).catch(() => []), [], 'no bytes in the file store');
  });

  it('a batch row whose entity is deleted while the provider imports it fails for good as ENTITY_NOT_FOUND, keeping nothing of the person', async () => {
    const externalId = `del-batch-${n++}`;
    const entityId = await person('INDIVIDUAL', externalId);
    const token = await donor.token();
    const sim = stack.sim!;
    await fetch(`${sim.url}/_sim/faults`, { method: 'PUT', body: JSON.stringify({ latencyMs: 1500, pathPattern: 'reusableIdentity' }) });
    try {
      const res = await upload(stack, key, csvOf('externalId,shareToken', [[externalId, token]]));
      assert.equal(res.status, 201, res.text);
      await eventually('the import with the provider', () => sim.state.stats.delayed > 0, { timeoutMs: 5000, everyMs: 25 });
      await del(entityId);
      const status = await waitForBatch(stack, key, res.body.batchId);
      assert.deepEqual(
        status.summary.errors.map((e: any) => [e.errorDetail.category, e.errorDetail.retryable]),
        [['ENTITY_NOT_FOUND', false]],
      );
      assert.equal(sim.state.stats.imports[token]?.attempts, 1, 'the token was sent once, not retried');
      assert.equal((await stack.db.query('SELECT 1 FROM kyc_persons WHERE entity_id = $1', [entityId])).length, 0);
    } finally {
      await fetch(`${sim.url}/_sim/faults`, { method: 'PUT', body: '{}' });
    }
  });

  it("a batch's retry looks each row's entity up again: deleted and made again, the row lands on the new entity", async () => {
    const externalId = `del-retry-${n++}`;
    const first = await person('INDIVIDUAL', externalId);
    const token = await donor.token();
    await fetch(`${stack.sim!.url}/_sim/faults`, { method: 'PUT', body: JSON.stringify({ errorRate: 1, pathPattern: 'reusableIdentity' }) });
    let batchId: string;
    try {
      const res = await upload(stack, key, csvOf('externalId,shareToken', [[externalId, token]]));
      batchId = res.body.batchId;
      const status = await waitForBatch(stack, key, batchId);
      assert.deepEqual(
        status.summary.errors.map((e: any) => e.errorDetail.category),
        ['PROVIDER_UNAVAILABLE'],
      );
    } finally {
      await fetch(`${stack.sim!.url}/_sim/faults`, { method: 'PUT', body: '{}' });
    }
    await del(first);
    const second = await person('INDIVIDUAL', externalId);
    assert.equal((await stack.request('POST', `/entity/kyc/import/batch/${batchId}/retry`, { key })).status, 202);
    const status = await waitForBatch(stack, key, batchId);
    assert.equal(status.summary.successfulRecords, 1, JSON.stringify(status));
    const [row] = await stack.db.query<{ entity_id: string }>('SELECT entity_id FROM import_records WHERE batch_id = $1', [batchId]);
    assert.equal(row!.entity_id, second);
    assert.equal((await stack.request('GET', `/entity/${second}`, { key })).body.verifiedBy, 'sumsub');
  });
});
