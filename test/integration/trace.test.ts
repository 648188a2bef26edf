// `vouch trace` (issue 21), run as an operator runs it — the admin CLI in a child process against
// the stack's database and Temporal server — for an entity id, its externalId (held by two
// businesses) and its batch id: the record, the decision WITH its outcome and rule labels, the
// history, the audit entries, the batch's run with its Temporal Web UI link; a sealed record with
// its hold; an unknown id fails with exit code 2.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { csvOf, donorAt, upload, waitForBatch } from '../helpers/imports.ts';
import { root } from '../helpers/processes.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, testEnv, type Stack } from '../helpers/stack.ts';
import { hostname, userInfo } from 'node:os';
import { linkAll } from '../../store/audit-chainer.ts';
import { keyedDigest } from '../../domain/digests.ts';
import { subscribe } from '../helpers/world.ts';

const UI = 'http://temporal-ui.example:8080';

describe('vouch trace', () => {
  let stack: Stack;
  let receiver: Receiver;
  let businessId: string;
  let otherBusinessId: string;
  let entityId: string;
  let otherEntityId: string;
  let batchId: string;
  const externalId = `trace-${randomUUID().slice(0, 8)}`;

  /** The admin CLI, as a child process; resolves once its output is all read ('close', not 'exit'). */
  const vouch = (...args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['cli/vouch.ts', ...args], {
        cwd: root,
        env: {
          ...process.env,
          DATABASE_URL: stack.config.database.url,
          TEMPORAL_ADDRESS: testEnv('TEMPORAL_ADDRESS'),
          TEMPORAL_UI_URL: UI,
          VOUCH_OPERATOR: 'trace-test',
          LOG_LEVEL: 'silent',
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
  const traced = async (...args: string[]) => {
    const res = await vouch('trace', ...args);
    assert.equal(res.code, 0, res.stderr + res.stdout);
    return JSON.parse(res.stdout);
  };

  before(async () => {
    stack = await startStack({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', PROVIDER_RATE_LIMIT_PER_SECOND: '200' } });
    receiver = await startReceiver();
    const a = await stack.newBusiness({ name: 'Trace A' });
    const b = await stack.newBusiness({ name: 'Trace B' });
    businessId = a.businessId;
    otherBusinessId = b.businessId;
    await subscribe(stack, a.apiKey, receiver.url);
    const created = await stack.request('POST', '/entity', { key: a.apiKey, json: { externalId, type: 'INDIVIDUAL' } });
    const other = await stack.request('POST', '/entity', { key: b.apiKey, json: { externalId, type: 'INDIVIDUAL' } });
    assert.deepEqual([created.status, other.status], [201, 201]);
    entityId = created.body.id;
    otherEntityId = other.body.id;
    // shared data without an address: REJECTED, with its rule labels
    const token = await donorAt(stack).token('missing-address');
    const res = await upload(stack, a.apiKey, csvOf('externalId,shareToken', [[externalId, token]]));
    assert.equal(res.status, 201, res.text);
    batchId = res.body.batchId;
    assert.equal((await waitForBatch(stack, a.apiKey, batchId)).status, 'completed');
    await receiver.waitFor(1);
  });
  after(async () => {
    await receiver.close();
    await stack.close();
  });

  const batchRunUrl = (runId: string) => `${UI}/namespaces/default/workflows/batch-import-${batchId}/${runId}/history`;

  it('traces an entity by its id: record, decision with outcome and labels, history, audit, the batch run with its UI link', async () => {
    const out = await traced(entityId);
    assert.equal(out.found, 'entity id');
    assert.equal(out.entities.length, 1);
    const t = out.entities[0];
    assert.deepEqual([t.entity.id, t.entity.businessId, t.entity.externalId, t.entity.sealedAt, t.entity.holds], [entityId, businessId, externalId, null, []]);

    assert.equal(t.decisions.length, 1);
    const d = t.decisions[0];
    assert.deepEqual([d.decision, d.path, d.source, d.reviewRejectType], ['REJECTED', 'token-sharing', 'batch', 'RETRY']);
    assert.ok(d.rejectLabels.length > 0, JSON.stringify(d));
    assert.ok(d.moderationComment);
    const decisionEvent = t.history.find((i: any) => i.kind === 'event' && i.eventType === 'account_status_change');
    assert.equal(d.eventId, decisionEvent.eventId);

    const stages = t.history.filter((i: any) => i.kind === 'verification.stage').map((i: any) => [i.stage, i.provenance]);
    assert.deepEqual(stages, [
      ['STARTED', { source: 'batch', batchId, rowNumber: 2 }],
      ['DECIDED', { source: 'batch', batchId, rowNumber: 2 }],
    ]);
    assert.ok(t.audit.some((e: any) => e.action === 'decision.recorded'));

    // the batch's runs (a continue-as-new chain): the last completed, each with its link
    const runs = t.runs.filter((r: any) => r.workflowId === `batch-import-${batchId}`);
    assert.ok(runs.length > 0, JSON.stringify(t.runs));
    assert.equal(runs.at(-1).status, 'COMPLETED');
    for (const run of runs) assert.equal(run.url, batchRunUrl(run.runId));
    // the run that recorded the decision is the one the audit log names
    const decided = t.audit.find((e: any) => e.action === 'decision.recorded');
    assert.deepEqual([decided.actorType, decided.actorId], ['workflow', `batch-import-${batchId}`]);
    assert.ok(t.runs.some((r: any) => r.runId === decided.runId));
    assert.ok(!t.runs.some((r: any) => r.workflowId === `person-verification-${entityId}`), 'no run the entity never had');
    assert.deepEqual(t.pending.submissions, []);
    assert.deepEqual(t.pending.runs, []);
  });

  it('traces an externalId in every business that has it, or in one with --business', async () => {
    const out = await traced(externalId);
    assert.equal(out.found, 'externalId');
    assert.deepEqual(
      out.entities.map((e: any) => [e.entity.id, e.entity.businessId]).sort(),
      [
        [entityId, businessId],
        [otherEntityId, otherBusinessId],
      ].sort(),
    );
    const one = await traced(externalId, '--business', otherBusinessId);
    assert.deepEqual(
      one.entities.map((e: any) => e.entity.id),
      [otherEntityId],
    );
    assert.deepEqual(one.entities[0].decisions, []);
  });

  it('traces a batch: its rows with their outcome, the entities it touched, its run', async () => {
    const out = await traced(batchId);
    assert.equal(out.found, 'batch id');
    const { batch, rows, entities, runs } = out.batch;
    assert.deepEqual([batch.id, batch.businessId, batch.status, batch.runs], [batchId, businessId, 'completed', 1]);
    assert.deepEqual(
      rows.items.map((r: any) => [r.rowNumber, r.status, r.entityId, r.decision]),
      [[2, 'succeeded', entityId, 'REJECTED']],
    );
    assert.deepEqual(entities, [entityId]);
    assert.ok(runs.length > 0);
    for (const run of runs) assert.deepEqual([run.workflowId, run.url], [`batch-import-${batchId}`, batchRunUrl(run.runId)]);
    assert.equal(runs.at(-1).status, 'COMPLETED');
    assert.deepEqual(out.batch.pending.rows, []);
  });

  it('reads as text with --text', async () => {
    const res = await vouch('trace', entityId, '--text');
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stderr, '', "nothing but the trace: no warning on the operator's terminal");
    assert.match(res.stdout, new RegExp(`^ENTITY ${entityId} \\(INDIVIDUAL\\)`, 'm'));
    assert.match(res.stdout, /^DECISIONS \(1\)\n {2}\S+ {2}REJECTED RETRY \[/m);
    assert.match(res.stdout, /STARTED batch \S+ row 2/);
    assert.ok(res.stdout.includes(`${UI}/namespaces/default/workflows/batch-import-${batchId}/`), res.stdout);
    assert.throws(() => JSON.parse(res.stdout));
  });

  it('finds a sealed record and says when it is purged and what holds it', async () => {
    await stack.db.query("UPDATE entity_records SET sealed_at = now(), purge_after = now() + interval '5 years' WHERE id = $1", [otherEntityId]);
    await stack.db.query("INSERT INTO legal_holds (id, business_id, entity_id, reason, placed_by) VALUES ($1, $2, $3, 'subpoena 42', 'trace-test')", [
      randomUUID(),
      otherBusinessId,
      otherEntityId,
    ]);
    const out = await traced(otherEntityId);
    const e = out.entities[0].entity;
    assert.ok(e.sealedAt && e.purgeAfter > e.sealedAt);
    assert.deepEqual(
      e.holds.map((h: any) => [h.reason, h.placedBy, h.releasedAt]),
      [['subpoena 42', 'trace-test', null]],
    );
    // by externalId too: the sealed record is still found, beside the live one
    assert.equal((await traced(externalId)).entities.length, 2);
  });

  it("records each read in the entity's record before printing it: the operator named, the host's login beside", async () => {
    const count = async () => {
      await linkAll(stack.db);
      return (
        await stack.db.query<{ actor_type: string; actor_id: string; details: string }>(
          "SELECT actor_type, actor_id, details FROM audit_log WHERE business_id = $1 AND entity_id = $2 AND action = 'operator.read' ORDER BY seq",
          [businessId, entityId],
        )
      ).map((r) => ({ ...r, details: JSON.parse(r.details) }));
    };
    const before = (await count()).length;
    await traced(entityId);
    const reads = await count();
    assert.equal(reads.length, before + 1);
    const last = reads.at(-1)!;
    assert.deepEqual([last.actor_type, last.actor_id, last.details.command], ['operator', 'trace-test', 'trace']);
    // the host's login and name, by their digests under the entity's key (the business reads this log: not our hosts)
    const [{ key: digestKey }] = (await stack.db.query<{ key: Buffer }>('SELECT key FROM entity_digest_keys WHERE entity_id = $1', [entityId])) as [
      { key: Buffer },
    ];
    assert.equal(last.details.loginHmac, keyedDigest(digestKey, userInfo().username));
    assert.equal(last.details.hostHmac, keyedDigest(digestKey, hostname()));
    assert.ok(!JSON.stringify(last.details).includes(hostname()));
    // an entity of another business traced with it leaves its read in that business's record only
    await traced(externalId);
    assert.equal((await count()).length, before + 2);
    // the holds' reasons an operator lists are reads of each entity's record too
    const held = await vouch('hold', 'list', '--entity', otherEntityId);
    assert.equal(held.code, 0, held.stderr);
    await linkAll(stack.db);
    const holdReads = await stack.db.query<{ details: string }>(
      "SELECT details FROM audit_log WHERE business_id = $1 AND entity_id = $2 AND action = 'operator.read' AND subject_type = 'legal_hold'",
      [otherBusinessId, otherEntityId],
    );
    assert.equal(holdReads.length, JSON.parse(held.stdout).holds.length);
    assert.ok(holdReads.length >= 1);
  });

  it('fails with exit code 2 and says so when nothing has the id', async () => {
    for (const id of [randomUUID(), 'no-such-external-id']) {
      const res = await vouch('trace', id);
      assert.equal(res.code, 2, res.stdout + res.stderr);
      assert.match(res.stderr, /nothing found for/);
      assert.equal(res.stdout, '');
    }
    const narrowed = await vouch('trace', externalId, '--business', randomUUID());
    assert.equal(narrowed.code, 2, narrowed.stderr);
    const usage = await vouch('trace');
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /give one id/);
  });

  it('shows a delivery waiting for its retry slot in PostgreSQL: who attempts it next, and when', async () => {
    const [d] = await stack.db.query<{ id: string }>(
      'SELECT d.id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.entity_id = $1 ORDER BY d.created_at LIMIT 1',
      [entityId],
    );
    const slot = new Date(Date.now() + 3_600_000);
    await stack.db.query("UPDATE webhook_deliveries SET status = 'pending', mode = 'waiting', next_attempt_at = $2 WHERE id = $1", [d!.id, slot]);
    try {
      const t = (await traced(entityId)).entities[0];
      const waiting = t.pending.deliveries.find((x: any) => x.deliveryId === d!.id);
      assert.deepEqual([waiting.attemptedBy, waiting.nextAttemptAt], ['dispatcher, at its next retry slot', slot.toISOString()]);
      assert.ok(!t.runs.some((r: any) => r.workflowId.startsWith('webhook-retry-')), 'no retry workflow');
    } finally {
      await stack.db.query("UPDATE webhook_deliveries SET status = 'delivered' WHERE id = $1", [d!.id]);
    }
  });
});
