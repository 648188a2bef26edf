// The worker polls its task queue with the real workflow bundle, and the schedules (housekeeping,
// audit checkpoints) and their workflows do their job against the real database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HOUSEKEEPING_RUN, HOUSEKEEPING_SCHEDULE_ID } from '../../contract/housekeeping.ts';
import canonicalize from 'canonicalize';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AUDIT_CHECKPOINT_SCHEDULE_ID } from '../../contract/audit-checkpoint.ts';
import { auditCheckpointWorkflow, housekeepingWorkflow } from '../../workflows/index.ts';
import { ensureAuditCheckpointSchedule, ensureHousekeepingSchedule } from '../../temporal/schedules.ts';
import { takeRateToken } from '../../store/rate-limit.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

describe('Temporal wiring', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ workers: true });
  });
  after(() => stack.close());

  it('has workers polling the general queue (workflows, activities) and the provider queue (activities)', async () => {
    const svc = stack.temporal.workflowService;
    const describe = (name: string, taskQueueType: number /* 1 workflow, 2 activity */) =>
      svc.describeTaskQueue({ namespace: 'default', taskQueue: { name, kind: 1 /* NORMAL */ }, taskQueueType });
    const t = stack.config.temporal;
    await eventually(
      'pollers on every task queue',
      async () => {
        const [wf, act, provider] = await Promise.all([describe(t.taskQueue, 1), describe(t.taskQueue, 2), describe(t.providerTaskQueue, 2)]);
        return wf.pollers.length > 0 && act.pollers.length > 0 && provider.pollers.length > 0;
      },
      { timeoutMs: 20_000, everyMs: 200 },
    );
  });

  it('runs housekeeping, which purges request-count windows older than a minute and keeps the current ones', async () => {
    const bucket = `test-${Date.now()}`;
    await takeRateToken(stack.db, bucket, 10, 1000, Date.now() - 5 * 60_000);
    await takeRateToken(stack.db, bucket, 10, 1000, Date.now());
    const result = await stack.temporal.workflow.execute('housekeepingWorkflow', {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: `housekeeping-test-${bucket}`,
    });
    assert.ok((result as { rateLimitWindowsPurged: number }).rateLimitWindowsPurged >= 1);
    const left = await stack.db.query('SELECT window_start FROM rate_limit_windows WHERE bucket = $1', [bucket]);
    assert.equal(left.length, 1);
  });

  it('creates the housekeeping schedule once and updates it on later starts', async () => {
    await ensureHousekeepingSchedule(stack.temporal, stack.config);
    await ensureHousekeepingSchedule(stack.temporal, stack.config);
    const description = await stack.temporal.schedule.getHandle(HOUSEKEEPING_SCHEDULE_ID).describe();
    assert.equal(description.action.type, 'startWorkflow');
    assert.equal(description.action.workflowType, 'housekeepingWorkflow');
    assert.deepEqual(description.action.args, [HOUSEKEEPING_RUN], 'one run an hour, a pass a minute');
    assert.deepEqual(
      description.spec.intervals?.map((i) => i.every),
      [3_600_000],
    );
    assert.equal(description.action.type === 'startWorkflow' && description.action.workflowRunTimeout, 70 * 60_000, 'a stranded run ends');
  });

  it('makes each housekeeping pass of a run, a given interval apart', async () => {
    const handle = await stack.temporal.workflow.start(housekeepingWorkflow, {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: `housekeeping-passes-${Date.now()}`,
      args: [{ passes: 3, everyMs: 50 }],
    });
    const result = await handle.result();
    assert.deepEqual(result.failedSteps, []);
    const scheduled = (await handle.fetchHistory()).events?.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'purgeRateLimitWindows',
    ).length;
    assert.equal(scheduled, 3);
  });

  it('signs every moved audit chain head on its schedule: stored outside the database, listed to the business, verifiable with openssl', async () => {
    await ensureAuditCheckpointSchedule(stack.temporal, stack.config);
    await ensureAuditCheckpointSchedule(stack.temporal, stack.config);
    const schedule = await stack.temporal.schedule.getHandle(AUDIT_CHECKPOINT_SCHEDULE_ID).describe();
    assert.equal(schedule.action.type === 'startWorkflow' && schedule.action.workflowType, 'auditCheckpointWorkflow');
    assert.deepEqual(
      schedule.spec.intervals?.map((i) => i.every),
      [60 * 60_000],
      'every AUDIT_CHECKPOINT_EVERY_MINUTES (60)',
    );
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'Checkpointed' });
    assert.equal((await stack.request('POST', '/entity', { key, json: { externalId: 'cp-1', type: 'INDIVIDUAL' } })).status, 201);
    const result = await stack.temporal.workflow.execute(auditCheckpointWorkflow, {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: `audit-checkpoint-test-${businessId}`,
    });
    assert.ok(result.checkpoints >= 1);
    const listed = await stack.request('GET', '/audit-log/checkpoints', { key, headers: { 'Accept-Version': 'v1.0' } });
    assert.equal(listed.status, 200, listed.text);
    const [checkpoint] = listed.body.items;
    const log = await stack.request('GET', '/audit-log?limit=100', { key, headers: { 'Accept-Version': 'v1.0' } });
    const last = log.body.items.at(-1);
    assert.deepEqual([checkpoint.businessId, checkpoint.seq, checkpoint.hash], [businessId, last.seq, last.hash], 'the head as the business reads it');
    assert.equal(listed.body.meta.totalItems, 1);
    // stored in the file store, where the database's role cannot reach
    const stored = await readFile(
      path.join(stack.config.files.dir, 'audit-checkpoints', businessId, readdirSync(path.join(stack.config.files.dir, 'audit-checkpoints', businessId))[0]!),
      'utf8',
    );
    assert.deepEqual(JSON.parse(stored), checkpoint);
    // anyone with the published key checks it with openssl alone
    const keys = await stack.request('GET', '/audit-log/checkpoint-keys', { key });
    assert.equal(keys.status, 200, keys.text);
    const publicKey = keys.body.keys.find((k: { keyId: string }) => k.keyId === checkpoint.keyId);
    const dir = mkdtempSync(path.join(tmpdir(), 'vouch-checkpoint-'));
    const { signature, ...content } = checkpoint;
    writeFileSync(path.join(dir, 'key.pem'), publicKey.publicKeyPem);
    writeFileSync(path.join(dir, 'content.json'), canonicalize(content)!);
    writeFileSync(path.join(dir, 'sig'), Buffer.from(signature, 'base64'));
    const out = execFileSync('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', 'key.pem', '-rawin', '-in', 'content.json', '-sigfile', 'sig'], {
      cwd: dir,
    });
    assert.match(out.toString(), /Signature Verified Successfully/);
    writeFileSync(path.join(dir, 'content.json'), canonicalize({ ...content, seq: content.seq - 1 })!);
    assert.throws(() =>
      execFileSync('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', 'key.pem', '-rawin', '-in', 'content.json', '-sigfile', 'sig'], {
        cwd: dir,
        stdio: 'pipe',
      }),
    );
    // the head did not move: the next run signs nothing of this business
    await stack.temporal.workflow.execute(auditCheckpointWorkflow, {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: `audit-checkpoint-again-${businessId}`,
    });
    assert.equal((await stack.request('GET', '/audit-log/checkpoints', { key, headers: { 'Accept-Version': 'v1.0' } })).body.meta.totalItems, 1);
  });
});
