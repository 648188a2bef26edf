// Universal KYC over HTTP against real workers: the canonical KYC data and the person's document
// uploads, the submission's workflow waiting durably for both (in either order) and deciding by the
// reliance rules, the deadline's outcome, and the signed account_status_change webhook. Every
// refusal names its field and leaves nothing behind; personal data never reaches the history.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { universalKycWorkflowId } from '../../contract/universal-kyc.ts';
import { publicKeyOf } from '../../domain/webhook-signature.ts';
import { verifyWebhook } from '../../receiver/verify-webhook.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, testKeyRing, type Stack } from '../helpers/stack.ts';
import { canonicalPayload, FILES, filesForm } from '../helpers/ukyc.ts';
import * as world from '../helpers/world.ts';

const DEADLINE_SECONDS = 4;

describe('universal KYC', () => {
  let stack: Stack;
  let key: string;
  let businessId: string;
  let otherKey: string;
  let receiver: Receiver;
  let n = 0;

  before(async () => {
    stack = await startStack({
      workers: true,
      env: {
        WEBHOOK_ALLOW_INSECURE_URLS: 'true',
        UKYC_SUBMISSION_DEADLINE_SECONDS: String(DEADLINE_SECONDS),
        UPLOAD_MAX_FILES: '3',
        UPLOAD_MAX_FILE_BYTES: String(64 * 1024),
      },
    });
    receiver = await startReceiver();
    ({ apiKey: key, businessId } = await stack.newBusiness({ name: 'UKYC' }));
    ({ apiKey: otherKey } = await stack.newBusiness({ name: 'Other' }));
    for (const k of [key, otherKey]) {
      await world.subscribe(stack, k, receiver.url);
    }
  });
  after(async () => {
    await receiver.close();
    await stack.close();
  });

  const entity = (type: 'INDIVIDUAL' | 'BUSINESS' = 'INDIVIDUAL', k = key, requirements?: unknown[]) =>
    world.entity(stack, k, `ukyc-${type}-${n++}`, type, requirements);
  const submit = (entityId: string, payload: unknown, k = key) =>
    stack.request('POST', `/entity/${entityId}/requirement`, {
      key: k,
      json: { requirementSlug: 'ukyc-canonical-kyc-data', value: typeof payload === 'string' ? payload : JSON.stringify(payload) },
    });
  const upload = (entityId: string, slug: string, files: { bytes: Buffer; name: string }[], k = key, query = '') =>
    stack.request('POST', `/entity/${entityId}/requirement-slug/${slug}/upload${query}`, { key: k, form: filesForm(files) });
  const passport = () => [{ bytes: FILES.pdf, name: 'passport.pdf' }];
  const decisions = async (entityId: string, count: number, timeoutMs = 30_000) => {
    const mine = await world.eventually(
      `${count} decisions for ${entityId}`,
      () => {
        const got = receiver.received.filter((r) => JSON.parse(r.body.toString()).data.entityId === entityId);
        return got.length >= count && got;
      },
      { timeoutMs, everyMs: 100 },
    );
    return mine.map((r) => ({ raw: r, data: JSON.parse(r.body.toString()).data }));
  };
  const requirementStatuses = async (entityId: string) =>
    ((await stack.request('GET', `/entity/${entityId}`, { key })).body.submittedRequirements as any[]).map((r) => `${r.requirementSlug}:${r.status}`).sort();
  const storedFiles = (entityId: string) => {
    const dir = path.join(stack.config.files.dir, businessId, entityId);
    return existsSync(dir) ? readdirSync(dir) : [];
  };

  it(
    'decides data then an identity document: APPROVED by signed webhook, requirements APPROVED,' + ' verifiedBy the client provider, a signed payload',
    async () => {
      const person = await entity();
      const submitted = await submit(person, canonicalPayload());
      assert.equal(submitted.status, 201, submitted.text);
      assert.deepEqual([submitted.body.status, submitted.body.waitingFor], ['PENDING', ['ukyc-id-document']]);
      assert.ok(Date.parse(submitted.body.deadlineAt) > Date.now());
      const uploaded = await upload(person, 'ukyc-id-document', passport());
      assert.equal(uploaded.status, 201, uploaded.text);
      assert.deepEqual(
        uploaded.body.files.map((f: any) => [f.fileName, f.contentType, f.size]),
        [['passport.pdf', 'application/pdf', FILES.pdf.length]],
      );
      assert.equal(uploaded.body.submissionId, submitted.body.submissionId);
      const [d] = await decisions(person, 1);
      assert.equal(d!.data.status, 'APPROVED');
      assert.match(d!.data.message, /submitted KYC data/);
      assert.equal(verifyWebhook(d!.raw.body, d!.raw.headers['vouch-signature'], testKeyRing().map(publicKeyOf)), true);
      const read = (await stack.request('GET', `/entity/${person}`, { key })).body;
      assert.equal(read.verifiedBy, 'onfido');
      assert.deepEqual(
        read.enabledFeatures.map((f: any) => f.slug),
        ['card-issuance-api-access'],
      );
      assert.deepEqual(await requirementStatuses(person), ['ukyc-canonical-kyc-data:APPROVED', 'ukyc-id-document:APPROVED']);
      const payload = (await stack.request('GET', `/entity/${person}/signed-payload`, { key })).body;
      assert.deepEqual(
        [payload.firstName, payload.lastName, payload.dob, payload.idDocumentType, payload.idDocumentNumber],
        ['Zoë', "O'Neill-Brown", '1988-04-12', 'PASSPORT', 'PA1234567'],
      );
      assert.equal(payload.residentialAddress.town, 'Dublin');
      // the bytes are in the file store, not in PostgreSQL
      const [file] = storedFiles(person);
      assert.deepEqual(readFileSync(path.join(stack.config.files.dir, businessId, person, file!)), FILES.pdf);
      const [row] = await stack.db.query('SELECT storage_key, content_type, size FROM files WHERE entity_id = $1', [person]);
      assert.deepEqual([row!.content_type, row!.size], ['application/pdf', FILES.pdf.length]);
    },
  );

  it('decides files uploaded before the data as well (they wait for it), with every accepted type', async () => {
    const person = await entity();
    const early = await upload(person, 'ukyc-id-document', [
      { bytes: FILES.png, name: 'front.png' },
      { bytes: FILES.jpeg, name: 'back.jpg' },
    ]);
    assert.equal(early.status, 201, early.text);
    assert.equal(early.body.submissionId, null, 'no submission yet');
    assert.equal((await upload(person, 'ukyc-proof-of-address-document', [{ bytes: FILES.heic, name: 'bill.heic' }])).status, 201);
    const submitted = await submit(person, canonicalPayload());
    assert.deepEqual(submitted.body.waitingFor, []);
    const [d] = await decisions(person, 1);
    assert.equal(d!.data.status, 'APPROVED');
    assert.deepEqual(await requirementStatuses(person), [
      'ukyc-canonical-kyc-data:APPROVED',
      'ukyc-id-document:APPROVED',
      'ukyc-id-document:APPROVED',
      'ukyc-proof-of-address-document:APPROVED',
    ]);
    const types = await stack.db.query<{ content_type: string }>('SELECT content_type FROM files WHERE entity_id = $1 ORDER BY content_type', [person]);
    assert.deepEqual(
      types.map((t) => t.content_type),
      ['image/heic', 'image/jpeg', 'image/png'],
    );
  });

  it("relies on the client's provider: REJECTED stands (FINAL), and insufficient data is REJECTED by the same rules as token sharing", async () => {
    const cases: [(p: any) => void, string[], string][] = [
      [(p) => (p.provider.status = 'REJECTED'), ['PROVIDER_REJECTED'], 'FINAL'],
      [(p) => (p.liveness = { result: 'REJECTED', checkedAt: new Date().toISOString() }), ['LIVENESS_REJECTED'], 'FINAL'],
      [(p) => (p.provider.status = 'NOT_EXECUTED'), ['PROVIDER_CHECK_NOT_EXECUTED'], 'RETRY'],
      [(p) => (p.document = [{ type: 'UTILITY_BILL', number: 'UB-1', country: 'IRL', issuingDate: '2025-01-01' }]), ['MISSING_IDENTITY_DOCUMENT'], 'RETRY'],
    ];
    for (const [change, labels, type] of cases) {
      const person = await entity();
      assert.equal((await submit(person, canonicalPayload(change))).status, 201);
      assert.equal((await upload(person, 'ukyc-id-document', passport())).status, 201);
      const [d] = await decisions(person, 1);
      assert.deepEqual([d!.data.status, d!.data.rejectLabels, d!.data.reviewRejectType], ['REJECTED', labels, type]);
      assert.deepEqual(await requirementStatuses(person), ['ukyc-canonical-kyc-data:REJECTED', 'ukyc-id-document:REJECTED']);
    }
    // a WARNING and liveness not run are the client's call: relied upon
    const person = await entity();
    await submit(
      person,
      canonicalPayload((p) => ((p.provider.status = 'WARNING'), (p.liveness = { result: 'NOT_EXECUTED' }))),
    );
    await upload(person, 'ukyc-id-document', passport());
    assert.equal((await decisions(person, 1))[0]!.data.status, 'APPROVED');
  });

  it('uses the latest data of an open submission, and marks the earlier SUPERSEDED', async () => {
    const person = await entity();
    const first = await submit(
      person,
      canonicalPayload((p) => (p.provider.status = 'REJECTED')),
    );
    const second = await submit(person, canonicalPayload());
    assert.equal(second.body.submissionId, first.body.submissionId, 'one open submission per person');
    await upload(person, 'ukyc-id-document', passport());
    assert.equal((await decisions(person, 1))[0]!.data.status, 'APPROVED');
    assert.deepEqual(await requirementStatuses(person), [
      'ukyc-canonical-kyc-data:APPROVED',
      'ukyc-canonical-kyc-data:SUPERSEDED',
      'ukyc-id-document:APPROVED',
    ]);
  });

  it(
    'decides a submission without an identity document at its deadline: REJECTED ' + 'MISSING_IDENTITY_DOCUMENT_FILE (RETRY), and a new submission starts over',
    async () => {
      const person = await entity();
      const submitted = await submit(person, canonicalPayload());
      const [d] = await decisions(person, 1, (DEADLINE_SECONDS + 20) * 1000);
      assert.deepEqual([d!.data.status, d!.data.rejectLabels, d!.data.reviewRejectType], ['REJECTED', ['MISSING_IDENTITY_DOCUMENT_FILE'], 'RETRY']);
      assert.match(d!.data.moderationComment, /4 seconds/);
      assert.deepEqual(await requirementStatuses(person), ['ukyc-canonical-kyc-data:REJECTED']);
      const [s] = await stack.db.query('SELECT status FROM ukyc_submissions WHERE id = $1', [submitted.body.submissionId]);
      assert.equal(s!.status, 'expired');
      const again = await submit(person, canonicalPayload());
      assert.notEqual(again.body.submissionId, submitted.body.submissionId);
      await upload(person, 'ukyc-id-document', passport());
      const all = await decisions(person, 2);
      assert.deepEqual(
        all.map((x) => x.data.status),
        ['REJECTED', 'APPROVED'],
      );
    },
  );

  it('keeps personal data out of the workflow history', async () => {
    const person = await entity();
    const submitted = await submit(
      person,
      canonicalPayload((p) => ((p.identity.firstName = 'Quillon'), (p.identity.fullName = "Quillon O'Neill-Brown"))),
    );
    await upload(person, 'ukyc-id-document', passport());
    await decisions(person, 1);
    const handle = stack.temporal.workflow.getHandle(universalKycWorkflowId(submitted.body.submissionId));
    await handle.result();
    const history = JSON.stringify(await handle.fetchHistory());
    for (const secret of ['Quillon', '1988-04-12', 'PA1234567', 'Grafton'])
      assert.equal(history.includes(Buffer.from(secret).toString('base64')) || history.includes(secret), false, secret);
    assert.ok(
      history.includes(Buffer.from(JSON.stringify(submitted.body.submissionId)).toString('base64')) || history.includes(submitted.body.submissionId),
      'the history does name the submission',
    );
  });

  it('refuses each rule of the payload with the failing field in parameter, and records nothing', async () => {
    const person = await entity();
    const cases: [unknown, string][] = [
      ['not json', 'value'],
      ['[1]', 'value'],
      [canonicalPayload((p) => delete p.externalUserId), 'externalUserId'],
      [canonicalPayload((p) => (p.identity.dob = '2015-01-01')), 'identity.dob'],
      [canonicalPayload((p) => (p.identity.firstName = 'Дмитрий')), 'identity.firstName'],
      [canonicalPayload((p) => (p.identity.nationality = 'XYZ')), 'identity.nationality'],
      [canonicalPayload((p) => (p.document[0].expiryDate = '2020-01-01')), 'document[0].expiryDate'],
      [canonicalPayload((p) => (p.document = [])), 'document'],
      [canonicalPayload((p) => (p.liveness = { result: 'APPROVED' })), 'liveness.checkedAt'],
      [canonicalPayload((p) => (p.provider.name = 'acme')), 'provider.name'],
      [canonicalPayload((p) => (p.cardProcessorPublicToken = '4111111111111111')), 'cardProcessorPublicToken'],
      [canonicalPayload((p) => (p.address.extra = 'x')), 'address.extra'],
    ];
    for (const [payload, parameter] of cases) {
      const res = await submit(person, payload);
      assert.equal(res.status, 400, `${parameter}: ${res.text}`);
      assert.equal(res.body.parameter, parameter, res.text);
    }
    const wrongSlug = await stack.request('POST', `/entity/${person}/requirement`, { key, json: { requirementSlug: 'ukyc-id-document', value: '{}' } });
    assert.deepEqual([wrongSlug.status, wrongSlug.body.parameter], [400, 'requirementSlug']);
    assert.equal((await stack.db.query('SELECT 1 FROM ukyc_submissions WHERE entity_id = $1', [person])).length, 0);
    assert.deepEqual(await requirementStatuses(person), []);
  });

  it("refuses another business's entity, a BUSINESS without a person, a taken card processor token, and a business without the webhook", async () => {
    const theirs = await entity('INDIVIDUAL', otherKey);
    assert.equal((await submit(theirs, canonicalPayload())).status, 404);
    assert.equal((await upload(theirs, 'ukyc-id-document', passport())).status, 404);
    const business = await entity('BUSINESS');
    const res = await submit(business, canonicalPayload());
    // the submission takes no memberId: the answer points at the person's own entity, not at a parameter it does not take
    assert.deepEqual([res.status, res.body.code, res.body.parameter], [400, '0707000300', 'entityId']);
    assert.doesNotMatch(res.body.message, /memberId/);
    assert.match(res.body.message, /INDIVIDUAL entity/);
    // a card processor token another entity holds
    const holder = await stack.request('POST', '/entity', {
      key,
      json: { externalId: `holder-${n++}`, type: 'INDIVIDUAL', requirements: [{ requirementSlug: 'card-processor-public-token', value: '123456789' }] },
    });
    await stack.db.query('UPDATE entities SET card_processor_public_token = $2 WHERE id = $1', [holder.body.id, '123456789']);
    const person = await entity();
    const taken = await submit(
      person,
      canonicalPayload((p) => (p.cardProcessorPublicToken = '123456789')),
    );
    assert.deepEqual([taken.status, taken.body.parameter], [409, 'cardProcessorPublicToken']);
    const { apiKey: unsubscribed } = await stack.newBusiness({ name: 'No webhook' });
    const lonely = await entity('INDIVIDUAL', unsubscribed);
    for (const r of [await submit(lonely, canonicalPayload(), unsubscribed), await upload(lonely, 'ukyc-id-document', passport(), unsubscribed)]) {
      assert.equal(r.status, 409, r.text);
      assert.match(r.body.message, /account_status_change/);
    }
  });

  it('refuses uploads that are empty, of another type, too large or too many, or for an unknown slug, member or entity, storing nothing', async () => {
    const person = await entity();
    const cases: [Promise<Awaited<ReturnType<typeof upload>>>, number, string][] = [
      [upload(person, 'ukyc-id-document', [{ bytes: FILES.text, name: 'passport.pdf' }]), 415, '0708000500'],
      [
        upload(person, 'ukyc-id-document', [
          { bytes: FILES.pdf, name: 'a.pdf' },
          { bytes: FILES.text, name: 'b.pdf' },
        ]),
        415,
        '0708000500',
      ],
      [upload(person, 'ukyc-id-document', [{ bytes: Buffer.alloc(0), name: 'empty.pdf' }]), 400, '0708000200'],
      [upload(person, 'ukyc-id-document', [{ bytes: Buffer.concat([FILES.pdf, Buffer.alloc(70 * 1024)]), name: 'big.pdf' }]), 400, '0708000300'],
      [
        upload(
          person,
          'ukyc-id-document',
          Array.from({ length: 4 }, (_, i) => ({ bytes: FILES.pdf, name: `${i}.pdf` })),
        ),
        400,
        '0708000400',
      ],
      [stack.request('POST', `/entity/${person}/requirement-slug/ukyc-id-document/upload`, { key, form: filesForm(passport(), 'file') }), 400, '0708000100'],
      [upload(person, 'ukyc-selfie', passport()), 404, '0708000600'],
      [upload('00000000-0000-4000-8000-000000000000', 'ukyc-id-document', passport()), 404, '0702000100'],
      [upload(person, 'ukyc-id-document', passport(), key, `?memberId=${person}`), 400, '0707000300'],
    ];
    for (const [pending, status, code] of cases) {
      const res = await pending;
      assert.equal(res.status, status, res.text);
      assert.equal(res.body.code, code, res.text);
    }
    const business = await entity('BUSINESS');
    const stranger = await entity();
    const notMember = await upload(business, 'ukyc-id-document', passport(), key, `?memberId=${stranger}`);
    assert.deepEqual([notMember.status, notMember.body.code], [404, '0707000200']);
    assert.equal((await stack.db.query('SELECT 1 FROM files WHERE entity_id = ANY($1)', [[person, stranger]])).length, 0);
    assert.deepEqual(storedFiles(person), []);
  });

  it("stores a declared member's files under the member, and removes an entity's files with it", async () => {
    const member = await entity();
    const business = await entity('BUSINESS', key, [{ requirementSlug: 'kyb-ubo-declaration', value: { members: [{ entityId: member, role: 'DIRECTOR' }] } }]);
    const res = await upload(business, 'ukyc-id-document', passport(), key, `?memberId=${member}`);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.entityId, member);
    assert.equal(storedFiles(member).length, 1);
    assert.equal((await stack.request('DELETE', `/entity/${member}`, { key })).status, 204);
    assert.deepEqual(storedFiles(member), []);
  });
});
