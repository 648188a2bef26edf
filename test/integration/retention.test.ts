// Retention across the years (issue 21): under a business's five-year policy, DELETE /entity seals
// the person — gone from the API at once, its externalId free, the record kept — and the record's
// retention workflow purges it when the period ends, on Temporal's time-skipping test server where
// years pass in moments: not a day before, later while a legal hold binds it, and afterwards no
// table and no file holds the person's name or document number; only audit entries remain, and
// the chain is intact.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createRetentionActivities } from '../../activities/retention.ts';
import { chainChecker } from '../../domain/audit-chain.ts';
import { retentionHoldChangedSignal, retentionWorkflowId } from '../../contract/retention.ts';
import { createFileStore } from '../../runtime/file-store.ts';
import { createLogger } from '../../runtime/logger.ts';
import { linkAll } from '../../store/audit-chainer.ts';
import { auditOfEntity, chainHead, chainOf } from '../../store/audit-log.ts';
import { addHold, releaseHold, sealedRecords, setRetentionPolicy } from '../../store/retention.ts';
import { failedRequirementRecords } from '../../store/requirement-batches.ts';
import { workflowBundle } from '../../worker.ts';
import { retentionWorkflow } from '../../workflows/index.ts';
import { startTimeSkipping } from '../helpers/infra.ts';
import { pdfOf, uniqueName, uniqueNumber, whereFound } from '../helpers/person-data.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { canonicalPayload } from '../helpers/ukyc.ts';
import { decidedPerson, subscribe } from '../helpers/world.ts';

const DAY = 86_400_000;
const YEAR = 365 * DAY;

describe('retention under a five-year policy', () => {
  let stack: Stack;
  let env: TestWorkflowEnvironment;
  let receiver: Receiver;
  let bundle: Awaited<ReturnType<typeof workflowBundle>>;
  let key: string;
  let businessId: string;
  let n = 0;

  before(async () => {
    stack = await startStack({ workers: true, env: { API_RATE_LIMIT_PER_SECOND: '100000', WEBHOOK_ALLOW_INSECURE_URLS: 'true' } });
    receiver = await startReceiver();
    ({ apiKey: key, businessId } = await stack.newBusiness({ name: 'Retention' }));
    await subscribe(stack, key, receiver.url);
    assert.ok(await setRetentionPolicy(stack.db, businessId, { years: 5 }));
    env = await startTimeSkipping();
    bundle = await workflowBundle(stack.config);
  });
  after(async () => {
    await env?.teardown();
    await receiver?.close();
    await stack?.close();
  });

  /** A worker of the time-skipping server with the real retention activities on the stack's database and file store, while fn runs. */
  async function withWorker(fn: () => Promise<void>): Promise<void> {
    const activities = createRetentionActivities({
      db: stack.db,
      log: createLogger('silent'),
      files: createFileStore(stack.config),
      start: { retention: async () => {} },
    });
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: 'retention', workflowBundle: bundle, activities });
    await worker.runUntil(fn);
  }

  const found = (needle: string) => whereFound(stack.db, [stack.config.files.dir, stack.config.files.uploadTmpDir], needle);

  /** A person verified by universal KYC, with an identity document whose bytes carry the name and number. */
  async function verifiedPerson(): Promise<{ entityId: string; externalId: string; name: string; number: string }> {
    const [name, number] = [uniqueName(), uniqueNumber()];
    const externalId = `ret-${n++}`;
    const payload = canonicalPayload((p) => {
      p.identity.firstName = name;
      p.identity.fullName = `${name} Example`;
      p.document[0].number = number;
    });
    const entityId = await decidedPerson(stack, key, { externalId, payload, document: { bytes: pdfOf(name, number), name: 'id.pdf' } });
    return { entityId, externalId, name, number };
  }

  const runRetention = (entityId: string) =>
    env.client.workflow.start(retentionWorkflow, { taskQueue: 'retention', workflowId: `${retentionWorkflowId(entityId)}-ts`, args: [{ entityId }] });
  const stillKept = async (entityId: string) => (await stack.db.query('SELECT 1 FROM entity_records WHERE id = $1', [entityId])).length === 1;

  it('a delete seals the record: 404 everywhere at once, the externalId free again, the data kept for five years', async () => {
    const p = await verifiedPerson();
    assert.equal((await stack.request('DELETE', `/entity/${p.entityId}`, { key })).status, 204);
    assert.equal((await stack.request('GET', `/entity/${p.entityId}`, { key })).status, 404);
    assert.equal((await stack.request('GET', `/entity/${p.entityId}/signed-payload`, { key })).status, 404);
    assert.equal((await stack.request('DELETE', `/entity/${p.entityId}`, { key })).status, 404, 'a second delete finds nothing');
    const list = await stack.request('GET', '/entity?limit=100', { key, headers: { 'Accept-Version': 'v1.0' } });
    assert.ok(!list.body.items.some((e: { id: string }) => e.id === p.entityId), 'not listed');
    const again = await stack.request('POST', '/entity', { key, json: { externalId: p.externalId, type: 'INDIVIDUAL' } });
    assert.equal(again.status, 201, 'its externalId is free again');
    assert.notDeepEqual(await found(p.name), [], 'the sealed record is kept');
    const [sealed] = (await sealedRecords(stack.db, new Date(), businessId)).filter((r) => r.entityId === p.entityId);
    assert.ok(sealed, 'the retention report lists it');
    const years = (Date.parse(sealed.purgeAfter) - Date.parse(sealed.sealedAt)) / YEAR;
    assert.ok(years > 4.99 && years < 5.01, `purged after five years (${years})`);
    const actions = (await linkAll(stack.db), await auditOfEntity(stack.db, businessId, p.entityId)).map((e) => e.action);
    assert.ok(actions.includes('entity.sealed') && !actions.includes('entity.deleted'), actions.join(' '));
  });

  it('purges the record five years on, not a day before, leaving nothing of the person but audit entries', async () => {
    const p = await verifiedPerson();
    assert.equal((await stack.request('DELETE', `/entity/${p.entityId}`, { key })).status, 204);
    await withWorker(async () => {
      const run = await runRetention(p.entityId);
      await env.sleep(5 * YEAR - 2 * DAY);
      assert.ok(await stillKept(p.entityId), 'kept two days before the end');
      assert.deepEqual(await run.result(), { purged: true });
    });
    assert.ok(!(await stillKept(p.entityId)));
    assert.deepEqual(await found(p.name), [], 'the name, nowhere');
    assert.deepEqual(await found(p.number), [], 'the document number, nowhere');
    // the digest key went with the record: the log's keyed digests of its externalId and data can no longer be matched to a guess
    assert.equal((await stack.db.query('SELECT 1 FROM entity_digest_keys WHERE entity_id = $1', [p.entityId])).length, 0);
    await linkAll(stack.db);
    const entries = await auditOfEntity(stack.db, businessId, p.entityId);
    assert.deepEqual(
      entries.filter((e) => e.action.startsWith('entity.')).map((e) => e.action),
      ['entity.created', 'entity.sealed', 'entity.purged'],
    );
    const created = entries.find((e) => e.action === 'entity.created')!;
    assert.match(String(created.details.externalIdHmac), /^[0-9a-f]{64}$/);
    assert.notEqual(created.details.externalIdHmac, createHash('sha256').update(p.externalId).digest('hex'), 'no plain hash to match a guess against');
  });

  it('a legal hold keeps the record past its date until released; a hold with an end, until it ends', async () => {
    const open = await verifiedPerson();
    const timed = await verifiedPerson();
    // placed while the entities are live: the delete seals them all the same
    const hold = await addHold(stack.db, { entityId: open.entityId, reason: 'regulator inquiry 2026-17', until: null, by: 'test' });
    assert.ok(hold);
    for (const p of [open, timed]) assert.equal((await stack.request('DELETE', `/entity/${p.entityId}`, { key })).status, 204);
    const start = await env.currentTimeMs();
    const timedHold = await addHold(stack.db, { entityId: timed.entityId, reason: 'litigation', until: new Date(start + 7 * YEAR), by: 'test' });
    assert.ok(timedHold);
    await withWorker(async () => {
      const [held, limited] = [await runRetention(open.entityId), await runRetention(timed.entityId)];
      await env.sleep(6 * YEAR);
      assert.ok(await stillKept(open.entityId), 'held without end: kept past its five years');
      assert.ok(await stillKept(timed.entityId), 'held until year 7: kept in year 6');
      assert.deepEqual(await limited.result(), { purged: true }, 'purged once its hold ended');
      assert.ok((await env.currentTimeMs()) >= start + 7 * YEAR, 'not before the hold ended');
      assert.ok(await releaseHold(stack.db, hold.id, 'test'));
      await held.signal(retentionHoldChangedSignal);
      assert.deepEqual(await held.result(), { purged: true }, 'purged once released');
    });
    for (const p of [open, timed]) {
      assert.deepEqual(await found(p.name), [], `the name of ${p.entityId}`);
      assert.deepEqual(await found(p.number), [], `the number of ${p.entityId}`);
    }
    const actions = (await linkAll(stack.db), await auditOfEntity(stack.db, businessId, open.entityId)).map((e) => e.action);
    for (const a of ['hold.added', 'entity.sealed', 'hold.released', 'entity.purged']) assert.ok(actions.includes(a), `${a} in ${actions.join(' ')}`);
    const check = chainChecker();
    for await (const e of chainOf(stack.db, businessId)) assert.equal(check.push(e), null);
    assert.equal(check.end(await chainHead(stack.db, businessId)), null, 'the audit chain is intact after the purges');
  });

  it("a value submitted in a batch for an entity since sealed is gone from the failed records, as a deleted entity's is", async () => {
    const p = await verifiedPerson();
    const name = uniqueName();
    const [batch] = await stack.db.query<{ id: string }>(
      `INSERT INTO requirement_batches (id, business_id, idempotency_key, content_sha256, total_records, status)
       VALUES (gen_random_uuid(), $1, gen_random_uuid()::text, 'x', 1, 'completed') RETURNING id`,
      [businessId],
    );
    await stack.db.query(
      `INSERT INTO requirement_batch_records (batch_id, row_number, given_entity_id, requirement_slug, value, target_entity_id, status, error_category)
       VALUES ($1, 1, $2::text, 'kyc-first-name', $3, $2::uuid, 'failed', 'INVALID_VALUE')`,
      [batch!.id, p.entityId, JSON.stringify(name)],
    );
    const csv = (await failedRequirementRecords(stack.db, batch!.id, null, true)).map((r) => JSON.stringify(r)).join('\n');
    assert.ok(csv.includes(name), 'shown while the entity lives');
    assert.equal((await stack.request('DELETE', `/entity/${p.entityId}`, { key })).status, 204);
    const after = (await failedRequirementRecords(stack.db, batch!.id, null, true)).map((r) => JSON.stringify(r)).join('\n');
    assert.ok(!after.includes(name), 'gone once it is sealed');
  });
});
