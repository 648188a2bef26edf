// One shared record's steps under the conditions that used to break them: overlapping attempts of
// one record, an activity retried after it had finished, a batch canceled in PostgreSQL while its
// workflow never heard of it, and a provider whose look-up lags behind an import whose answer was
// lost. Activities run as they do in a worker (Temporal's activity environment), against real
// PostgreSQL and the simulator over HTTP.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createShareActivities } from '../../activities/share.ts';
import { createSumsubClient } from '../../provider/sumsub/client.ts';
import { createBatch, pendingRowNumbers } from '../../store/batches.ts';
import { deleteEntity } from '../../onboarding/entities.ts';
import { completeRecord } from '../../onboarding/share-records.ts';
import { beforeImport } from '../../onboarding/share-records.ts';
import { setRecordEntity, setRecordImported, shareRefKey } from '../../store/share-records.ts';
import type { ShareRef } from '../../contract/share-record.ts';
import { createSyncImport } from '../../store/sync-imports.ts';
import { LOOKUP_PENDING_FAILURE, RECOVER_LOOKUP_MAX_ATTEMPTS } from '../../contract/share-record.ts';
import { bulkEntities, bulkTokens } from '../helpers/bulk.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

describe('share record steps', () => {
  let stack: Stack;
  let share: ReturnType<typeof createShareActivities>;
  const run = <A extends unknown[], R>(fn: (...args: A) => Promise<R>, attempt = 1, ...args: A) => new MockActivityEnvironment({ attempt }).run(fn, ...args);

  before(async () => {
    stack = await startStack({ workers: true }); // the simulator and our account at it
    const provider = createSumsubClient({ baseUrl: stack.sim!.url, appToken: stack.recipient!.appToken, secretKey: stack.recipient!.secretKey });
    share = createShareActivities({ db: stack.db, provider, defaultLevel: stack.config.provider.defaultLevel });
  });
  after(() => stack.close());

  /** A business with one stored batch of `rows` complete applicants; returns the batch id and the tokens. */
  async function batchOf(rows: number, label: string) {
    const { businessId } = await stack.newBusiness({ name: label });
    const externalIds = Array.from({ length: rows }, (_, i) => `${label}-${i}`);
    await bulkEntities(stack.db, businessId, externalIds);
    const tokens = bulkTokens(
      stack.sim!,
      `${label}-donor`,
      stack.recipient!.clientId,
      externalIds.map(() => 'complete'),
    );
    const batch = await createBatch(stack.db, {
      businessId,
      provider: 'sumsub',
      idempotencyKey: randomUUID(),
      contentSha256: randomUUID(),
      fileName: null,
      rows: externalIds.map((externalId, i) => ({
        rowNumber: i + 2,
        externalId,
        shareToken: tokens[i]!,
        applicantLevel: null,
        cardProcessorPublicToken: null,
      })),
    });
    return { batchId: batch.id, businessId, tokens };
  }

  const counters = async (batchId: string) =>
    (await stack.db.query<{ s: number; f: number }>('SELECT successful_records AS s, failed_records AS f FROM import_batches WHERE id = $1', [batchId]))[0]!;

  it('counts a record once when two attempts complete it at the same moment (20 records, each raced)', async () => {
    const { batchId, businessId } = await batchOf(20, 'race');
    const entities = await stack.db.query<{ id: string }>('SELECT id FROM entities WHERE business_id = $1 ORDER BY external_id', [businessId]);
    await Promise.all(
      entities.map(async ({ id: entityId }, i) => {
        const ref: ShareRef = { kind: 'batch', batchId, rowNumber: i + 2 };
        await setRecordEntity(stack.db, ref, entityId);
        await setRecordImported(stack.db, ref, `applicant-${randomUUID()}`, { status: 'APPROVED' });
        const results = await Promise.all([completeRecord(stack.db, ref, 'sumsub', new Date()), completeRecord(stack.db, ref, 'sumsub', new Date())]);
        assert.deepEqual(results.map((r) => r.outcome).sort(), ['already-done', 'succeeded']);
      }),
    );
    const c = await counters(batchId);
    assert.equal(Number(c.s) + Number(c.f), 20, 'each record counted once');
    const [events] = await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE source_key LIKE $1', [`vouch-batch-${batchId}-%`]);
    assert.equal(Number(events!.n), 20, 'one event per record');
    const [accounts] = await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM kyc_accounts WHERE source_ref LIKE $1', [`vouch-batch-${batchId}-%`]);
    assert.equal(Number(accounts!.n), 20);
  });

  it('answers a retried attempt with the outcome it stored: succeeded stays succeeded, failed keeps its category', async () => {
    const { businessId, tokens } = await batchOf(1, 'retried');
    const requestId = randomUUID();
    await createSyncImport(stack.db, {
      requestId,
      businessId,
      externalId: 'retried-0',
      shareToken: tokens[0]!,
      cardProcessorPublicToken: null,
      idempotencyKey: null,
      requestSha256: 'x',
    });
    const ref: ShareRef = { kind: 'sync', requestId };
    assert.deepEqual(await run(share.processShare, 1, ref), { outcome: 'succeeded' });
    assert.deepEqual(await run(share.processShare, 2, ref), { outcome: 'succeeded' }, 'the retry of a finished record');
    assert.equal(stack.sim!.state.stats.imports[tokens[0]!]?.attempts, 1, 'no second provider call');

    const failedId = randomUUID();
    await createSyncImport(stack.db, {
      requestId: failedId,
      businessId,
      externalId: 'no-such-entity',
      shareToken: 'x',
      cardProcessorPublicToken: null,
      idempotencyKey: null,
      requestSha256: 'y',
    });
    const failedRef: ShareRef = { kind: 'sync', requestId: failedId };
    assert.deepEqual(await run(share.processShare, 1, failedRef), { outcome: 'failed', category: 'ENTITY_NOT_FOUND' });
    assert.deepEqual(await run(share.processShare, 2, failedRef), { outcome: 'failed', category: 'ENTITY_NOT_FOUND' });
  });

  it('starts no row of a batch canceled in PostgreSQL, even though its workflow was never told', async () => {
    const { batchId, tokens } = await batchOf(3, 'canceled');
    assert.deepEqual(await run(share.processShare, 1, { kind: 'batch', batchId, rowNumber: 2 }), { outcome: 'succeeded' });
    await stack.db.query("UPDATE import_batches SET status = 'canceled', canceled_at = now() WHERE id = $1", [batchId]);
    assert.deepEqual(await run(share.processShare, 1, { kind: 'batch', batchId, rowNumber: 3 }), { outcome: 'skipped' });
    assert.equal(stack.sim!.state.stats.imports[tokens[1]!], undefined, 'the canceled row never reached the provider');
    const [row] = await stack.db.query<{ status: string }>('SELECT status FROM import_records WHERE batch_id = $1 AND row_number = 3', [batchId]);
    assert.equal(row!.status, 'pending', 'left unprocessed');
    assert.deepEqual(await pendingRowNumbers(stack.db, batchId, 0, 10), [], 'its run finds no next page');
  });

  it('spends no share token on an entity deleted after an earlier attempt resolved it: ENTITY_NOT_FOUND, for good', async () => {
    const { batchId, businessId, tokens } = await batchOf(2, 'deleted-between');
    const entities = await stack.db.query<{ id: string }>('SELECT id FROM entities WHERE business_id = $1 ORDER BY external_id', [businessId]);
    const gone: ShareRef = { kind: 'batch', batchId, rowNumber: 2 };
    const kept: ShareRef = { kind: 'batch', batchId, rowNumber: 3 };
    // an earlier attempt resolved both entities, then failed before its provider call (the provider down)
    await setRecordEntity(stack.db, gone, entities[0]!.id);
    await setRecordEntity(stack.db, kept, entities[1]!.id);
    assert.deepEqual(await deleteEntity(stack.db, businessId, entities[0]!.id), { removed: [] });
    assert.deepEqual(await run(share.processShare, 2, gone), { outcome: 'failed', category: 'ENTITY_NOT_FOUND' });
    assert.equal(stack.sim!.state.stats.imports[tokens[0]!], undefined, 'the token was never sent');
    const [row] = await stack.db.query<{ status: string; retryable: boolean; import_attempts: number }>(
      'SELECT status, retryable, import_attempts FROM import_records WHERE batch_id = $1 AND row_number = 2',
      [batchId],
    );
    assert.deepEqual({ ...row }, { status: 'failed', retryable: false, import_attempts: 0 });
    assert.deepEqual(await run(share.processShare, 2, kept), { outcome: 'succeeded' }, 'the row whose entity is there (the passing case)');
    assert.equal(stack.sim!.state.stats.imports[tokens[1]!]?.attempts, 1);
  });

  describe('after "token already used"', () => {
    /** A row whose import happened at the provider but whose answer was lost (imported directly with our externalUserId). */
    async function lostAnswer(label: string) {
      const { batchId, businessId, tokens } = await batchOf(1, label);
      const ref: ShareRef = { kind: 'batch', batchId, rowNumber: 2 };
      const [entity] = await stack.db.query<{ id: string }>('SELECT id FROM entities WHERE business_id = $1', [businessId]);
      const provider = createSumsubClient({ baseUrl: stack.sim!.url, appToken: stack.recipient!.appToken, secretKey: stack.recipient!.secretKey });
      await beforeImport(stack.db, ref, businessId, entity!.id);
      await provider.importApplicant({ shareToken: tokens[0]!, levelName: stack.config.provider.defaultLevel, externalUserId: shareRefKey(ref) });
      await beforeImport(stack.db, ref, businessId, entity!.id); // the retry that heard "already used"
      return ref;
    }

    it('looks again while the provider does not list the applicant yet, and succeeds once it does', async () => {
      const ref = await lostAnswer('lag');
      stack.sim!.state.faults = { ...stack.sim!.state.faults, lookupLagMs: 60_000 };
      try {
        await assert.rejects(
          run(share.recoverShare, 1, ref),
          (err: unknown) => err instanceof ApplicationFailure && err.type === LOOKUP_PENDING_FAILURE && !err.nonRetryable,
        );
        await assert.rejects(
          run(share.recoverShare, RECOVER_LOOKUP_MAX_ATTEMPTS - 1, ref),
          (err: unknown) => err instanceof ApplicationFailure && err.type === LOOKUP_PENDING_FAILURE,
        );
      } finally {
        stack.sim!.state.faults = { ...stack.sim!.state.faults, lookupLagMs: 0 };
      }
      assert.deepEqual(await run(share.recoverShare, 3, ref), { outcome: 'succeeded' }, 'the applicant we imported is found: the row succeeds');
    });

    it('decides at once when the request that heard "already used" was our first (someone else used it)', async () => {
      const { batchId, tokens } = await batchOf(1, 'theirs');
      const ref: ShareRef = { kind: 'batch', batchId, rowNumber: 2 };
      stack.sim!.state.shareTokens.get(tokens[0]!)!.usedAt = Date.now();
      assert.deepEqual(await run(share.processShare, 1, ref), { outcome: 'token_used' });
      assert.deepEqual(await run(share.recoverShare, 1, ref), { outcome: 'failed', category: 'TOKEN_ALREADY_USED' });
    });

    it('concludes TOKEN_ALREADY_USED only on its last look-up', async () => {
      const ref = await lostAnswer('used');
      stack.sim!.state.faults = { ...stack.sim!.state.faults, lookupLagMs: 60_000 };
      try {
        assert.deepEqual(await run(share.recoverShare, RECOVER_LOOKUP_MAX_ATTEMPTS, ref), { outcome: 'failed', category: 'TOKEN_ALREADY_USED' });
      } finally {
        stack.sim!.state.faults = { ...stack.sim!.state.faults, lookupLagMs: 0 };
      }
    });
  });
});
