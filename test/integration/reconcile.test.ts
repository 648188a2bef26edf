// The reconciler (run by the housekeeping workflow every minute): whatever lost its workflow — a
// batch whose workflow never started or was terminated, a delivery an earlier release's retry
// workflow owned and lost, the webhook dispatcher itself, a KYB submission whose owner was decided while
// its workflow was gone — gets one again, and the work completes once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createBatch } from '../../store/batches.ts';
import { createSubscription } from '../../store/subscriptions.ts';
import { batchWorkflowId } from '../../contract/batch-import.ts';
import { universalKybWorkflowId } from '../../contract/universal-kyb.ts';
import { webhookDispatcherWorkflowId } from '../../contract/webhook-dispatcher.ts';
import { webhookRetryWorkflowId } from '../../contract/webhook-retry.ts';
import { documentsForm } from '../helpers/ukyc.ts';
import { housekeepingWorkflow } from '../../workflows/index.ts';
import { bulkEntities, bulkTokens } from '../helpers/bulk.ts';
import { recordTestEvent } from '../helpers/events.ts';
import { csvOf, upload, waitForBatch } from '../helpers/imports.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { approveDirectly } from '../helpers/decisions.ts';
import { eventually } from '../helpers/eventually.ts';
import { entity } from '../helpers/world.ts';

describe('the reconciler', () => {
  let stack: Stack;
  let receiver: Receiver;
  before(async () => {
    stack = await startStack({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', PROVIDER_RATE_LIMIT_PER_SECOND: '50' } });
    stack.sim!.state.updateClient(stack.recipient!.clientId, { limits: { postPer5s: 1e9, getPer5s: 1e9 } });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await stack.close();
  });

  const housekeeping = () =>
    stack.temporal.workflow.execute(housekeepingWorkflow, { taskQueue: stack.config.temporal.taskQueue, workflowId: `housekeeping-test-${randomUUID()}` });
  /** As if the last change were minutes ago: what the reconciler waits for before it looks. */
  const age = (table: 'import_batches' | 'webhook_deliveries', id: string) =>
    stack.db.query(
      table === 'import_batches'
        ? "UPDATE import_batches SET updated_at = now() - interval '5 minutes' WHERE id = $1"
        : "UPDATE webhook_deliveries SET next_attempt_at = now() - interval '5 minutes' WHERE id = $1",
      [id],
    );

  async function fixture(label: string, rows: number) {
    const { apiKey, businessId } = await stack.newBusiness({ name: label });
    const externalIds = Array.from({ length: rows }, (_, i) => `${label}-${i}`);
    await bulkEntities(stack.db, businessId, externalIds);
    const tokens = bulkTokens(
      stack.sim!,
      `${label}-donor`,
      stack.recipient!.clientId,
      externalIds.map(() => 'complete'),
    );
    return { apiKey, businessId, externalIds, tokens };
  }

  it('starts the workflow of a batch that was stored but never started', async () => {
    const f = await fixture('never-started', 5);
    const batch = await createBatch(stack.db, {
      businessId: f.businessId,
      provider: 'sumsub',
      idempotencyKey: randomUUID(),
      contentSha256: randomUUID(),
      fileName: null,
      rows: f.externalIds.map((externalId, i) => ({
        rowNumber: i + 2,
        externalId,
        shareToken: f.tokens[i]!,
        applicantLevel: null,
        cardProcessorPublicToken: null,
      })),
    });
    await age('import_batches', batch.id);
    const result = await housekeeping();
    assert.equal(result.batchesRestarted, 1, JSON.stringify(result));
    const status = await waitForBatch(stack, f.apiKey, batch.id);
    assert.equal(status.status, 'completed');
    assert.equal(status.summary.successfulRecords, 5);
  });

  it('restarts a batch whose workflow an operator terminated, and imports each record once', async () => {
    const f = await fixture('terminated', 40);
    stack.sim!.state.faults = { ...stack.sim!.state.faults, latencyMs: 300, pathPattern: 'reusableIdentity' };
    try {
      const res = await upload(
        stack,
        f.apiKey,
        csvOf(
          'externalId,shareToken',
          f.externalIds.map((e, i) => [e, f.tokens[i]!]),
        ),
      );
      assert.equal(res.status, 201, res.text);
      const batchId: string = res.body.batchId;
      await eventually(
        'five records processed',
        async () => (await stack.request('GET', `/entity/kyc/import/batch/${batchId}`, { key: f.apiKey })).body.processedRecords >= 5,
      );
      await stack.temporal.workflow.getHandle(batchWorkflowId(batchId)).terminate('test: an operator terminates the run');
      // The terminated run's activities already with the provider still finish, and each finished record
      // touches the batch (so the reconciler, rightly, waits): age it and look again until it is quiet.
      const restarted = await eventually(
        'the batch restarted once it is quiet',
        async () => {
          await age('import_batches', batchId);
          return (await housekeeping()).batchesRestarted;
        },
        { timeoutMs: 10_000, everyMs: 250 },
      );
      assert.equal(restarted, 1, 'restarted once the batch is quiet');
      assert.equal((await housekeeping()).batchesRestarted, 0, 'and not again while its new run lives');
      const status = await waitForBatch(stack, f.apiKey, batchId, 60_000);
      assert.equal(status.status, 'completed');
      assert.equal(status.summary.successfulRecords, 40, JSON.stringify(status.summary.errors.slice(0, 2)));
      for (const t of f.tokens) assert.equal(stack.sim!.state.stats.imports[t]?.succeeded, 1, 'each token imported once');
    } finally {
      stack.sim!.state.faults = { ...stack.sim!.state.faults, latencyMs: 0, pathPattern: '' };
    }
  });

  it('leaves an unfinished batch whose workflow is alive alone', async () => {
    const f = await fixture('alive', 1);
    stack.sim!.state.faults = { ...stack.sim!.state.faults, latencyMs: 3000, pathPattern: 'reusableIdentity' };
    try {
      const res = await upload(stack, f.apiKey, csvOf('externalId,shareToken', [[f.externalIds[0]!, f.tokens[0]!]]));
      assert.equal(res.status, 201, res.text);
      await new Promise((r) => setTimeout(r, 500));
      await age('import_batches', res.body.batchId);
      assert.equal((await housekeeping()).batchesRestarted, 0);
      assert.equal((await waitForBatch(stack, f.apiKey, res.body.batchId)).status, 'completed');
      assert.equal(stack.sim!.state.stats.imports[f.tokens[0]!]?.attempts, 1);
    } finally {
      stack.sim!.state.faults = { ...stack.sim!.state.faults, latencyMs: 0, pathPattern: '' };
    }
  });

  const deliveryOf = async (deliveryId: string) =>
    (
      await stack.db.query<{ status: string; mode: string; attempts: number }>('SELECT status, mode, attempts FROM webhook_deliveries WHERE id = $1', [
        deliveryId,
      ])
    )[0]!;

  it('keeps a failed delivery waiting in PostgreSQL, with no workflow of its own, and sends it at its slot', async () => {
    const { businessId } = await stack.newBusiness({ name: 'waiting-retry' });
    await createSubscription(stack.db, businessId, { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: receiver.url });
    receiver.answer({ status: 503 }, { status: 200 });
    const before = receiver.received.length;
    const eventId = await recordTestEvent(stack.db, businessId, 'waiting-retry');
    await receiver.waitFor(before + 1); // the first attempt, refused
    const [d] = await stack.db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE event_id = $1', [eventId]);
    await eventually('the refused attempt recorded', async () => (await deliveryOf(d!.id)).attempts >= 1, { timeoutMs: 5000, everyMs: 25 });
    assert.deepEqual(await deliveryOf(d!.id), { status: 'pending', mode: 'waiting', attempts: 1 });
    await assert.rejects(stack.temporal.workflow.getHandle(webhookRetryWorkflowId(d!.id, 1)).describe(), /not found/i, 'no workflow was started for it');
    await eventually('delivered at its slot (5 s ± 20 %)', async () => (await deliveryOf(d!.id)).status === 'delivered', { timeoutMs: 20_000 });
    const got = receiver.received.slice(before).map((r) => JSON.parse(r.body.toString()).data.eventId);
    assert.deepEqual(got, [eventId, eventId], 'the refused attempt, then the delivery');
  });

  it("hands a delivery whose retry workflow (an earlier release's) is lost to the dispatchers", async () => {
    const { businessId } = await stack.newBusiness({ name: 'lost-retry' });
    await createSubscription(stack.db, businessId, { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: receiver.url });
    receiver.answer({ status: 200 });
    const before = receiver.received.length;
    // left by an earlier release: waiting for a retry workflow that is gone
    const eventId = await stack.db.tx(async (q) => {
      const id = await recordTestEvent(q, businessId, 'lost-retry');
      await q.query(
        "UPDATE webhook_deliveries SET mode = 'workflow', run_attempts = 1, attempts = 1, next_attempt_at = now() - interval '5 minutes' WHERE event_id = $1",
        [id],
      );
      return id;
    });
    const result = await housekeeping();
    assert.ok(result.deliveriesRestarted >= 1, JSON.stringify(result));
    await receiver.waitFor(before + 1);
    assert.equal(JSON.parse(receiver.received.at(-1)!.body.toString()).data.eventId, eventId);
    // (the receiver has the request before the dispatcher records its answer: wait for the record)
    const recorded = async () =>
      (
        await stack.db.query<{ status: string; run: number; run_attempts: number }>(
          'SELECT status, run, run_attempts FROM webhook_deliveries WHERE event_id = $1',
          [eventId],
        )
      )[0]!;
    await eventually('the delivery recorded', async () => (await recorded()).status === 'delivered', { timeoutMs: 5000, everyMs: 25 });
    const d = await recorded();
    assert.deepEqual([d.run, d.run_attempts], [2, 2], "a new run (the lost workflow's own run owns it no more), its place in the schedule kept");
  });

  it('starts the webhook dispatcher again when it is gone', async () => {
    const dispatcher = stack.temporal.workflow.getHandle(webhookDispatcherWorkflowId(stack.config.webhooks.taskQueue));
    await dispatcher.terminate('test: the dispatcher is gone');
    const { businessId } = await stack.newBusiness({ name: 'no-dispatcher' });
    await createSubscription(stack.db, businessId, { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: receiver.url });
    receiver.answer({ status: 200 });
    const before = receiver.received.length;
    const eventId = await recordTestEvent(stack.db, businessId, 'no-dispatcher');
    // (a terminated workflow's activity learns of it at its next heartbeat, so the old dispatcher
    // may still send this one: what matters is that a dispatcher runs again)
    const result = await housekeeping();
    assert.deepEqual(result.failedSteps, []);
    assert.equal((await dispatcher.describe()).status.name, 'RUNNING');
    await receiver.waitFor(before + 1);
    assert.equal(JSON.parse(receiver.received.at(-1)!.body.toString()).data.eventId, eventId);
  });

  it('settles, once, a KYB submission whose owner was decided while its workflow was gone', async () => {
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'kyb-lost-wake' });
    await createSubscription(stack.db, businessId, { notificationChannel: 'WEBHOOK', notificationTypes: ['kyb_status_change'], webhookUrl: receiver.url });
    receiver.answer({ status: 200 });
    const company = await entity(stack, key, 'lost-wake-co', 'BUSINESS');
    const profile = await stack.request('POST', '/ukyb', {
      key,
      json: {
        entityId: company,
        business: {
          legalName: 'Lost Wake Ltd',
          registrationNumber: '7',
          country: 'GBR',
          address: { country: 'GBR', postCode: 'EC1A 1BB', street: 'King Street' },
        },
        ubos: [{ externalId: 'lost-wake-owner', firstName: 'Ada', lastName: 'Lovelace', dob: '1980-12-10', nationality: 'GBR', ownershipPercentage: 50 }],
      },
    });
    assert.equal(profile.status, 201, profile.text);
    const owner = profile.body.ubos[0].entityId as string;
    const document = async (fields: Record<string, string>) => {
      const form = documentsForm(fields);
      assert.equal((await stack.request('POST', '/ukyb/documents', { key, form })).status, 201);
    };
    for (const requirementSlug of ['ukyb-certificate-of-incorporation', 'ukyb-proof-of-address', 'ukyb-register-of-shareholders'])
      await document({ entityId: company, requirementSlug });
    await document({ entityId: company, memberId: owner, documentType: 'ID_CARD' });
    const submitted = await stack.request('POST', '/ukyb/submit', { key, json: { entityId: company } });
    assert.equal(submitted.status, 202, submitted.text);
    const submissionId = submitted.body.submissionId as string;
    await stack.temporal.workflow.getHandle(universalKybWorkflowId(submissionId)).terminate('test: the workflow is gone');
    // the owner is decided with no wake reaching the submission (as when a worker dies between the two)
    await approveDirectly(stack.db, owner, `lost-wake-${randomUUID()}`);
    const before = receiver.received.length;
    assert.equal((await housekeeping()).kybSubmissionsWoken, 0, 'a fresh submission is left to its workflow');
    await stack.db.query("UPDATE kyb_submissions SET created_at = now() - interval '5 minutes' WHERE id = $1", [submissionId]);
    const result = await housekeeping();
    assert.equal(result.kybSubmissionsWoken, 1, JSON.stringify(result));
    await receiver.waitFor(before + 1);
    const event = JSON.parse(receiver.received.at(-1)!.body.toString());
    assert.deepEqual([event.eventType, event.data.entityId, event.data.status], ['kyb_status_change', company, 'APPROVED']);
    assert.equal((await housekeeping()).kybSubmissionsWoken, 0, 'settled: nothing left to wake');
    const [{ n }] = (await stack.db.query<{ n: string }>("SELECT count(*) AS n FROM events WHERE entity_id = $1 AND event_type = 'kyb_status_change'", [
      company,
    ])) as [{ n: string }];
    assert.equal(Number(n), 1);
  });
});
