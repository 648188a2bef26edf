// A receiver down for a long time, then back: the dispatcher's first attempt fails and hands each
// delivery to its retry workflow; on Temporal's time-skipping test server the schedule's hours and
// days pass in moments, and every event is delivered, none lost.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createWebhookDispatcher } from '../../activities/webhook-dispatcher.ts';
import { createWebhookSender } from '../../activities/webhook-send.ts';
import { createWebhookActivities } from '../../activities/webhooks.ts';
import { DISABLE_AFTER_MS, RETRY_DELAYS_MS } from '../../domain/webhooks.ts';
import { loadConfig } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { createBusiness } from '../../store/businesses.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { recordTestEvent } from '../helpers/events.ts';
import { createSubscription } from '../../store/subscriptions.ts';
import { workflowBundle } from '../../worker.ts';
import { webhookRetryWorkflowId } from '../../contract/webhook-retry.ts';
import { webhookRetryWorkflow } from '../../workflows/index.ts';
import { startTimeSkipping } from '../helpers/infra.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { isolatedDatabaseUrl, testWebhookKeys } from '../helpers/stack.ts';

const EVENTS = 5;
// 7 failed attempts per event (the dispatcher's, then 6 of the retry workflow): about 27.5 hours of
// retries before the receiver is back.
const FAILURES = 7;

const durationMs = (d: { seconds?: unknown; nanos?: number | null }) => Number(d.seconds ?? 0) * 1000 + Math.round((d.nanos ?? 0) / 1e6);

describe('a receiver down for two days', () => {
  let env: TestWorkflowEnvironment;
  let db: Db;
  let receiver: Receiver;
  before(async () => {
    env = await startTimeSkipping();
    db = connectDb(await isolatedDatabaseUrl(), 3);
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
    receiver.answer(...Array.from({ length: EVENTS * FAILURES }, () => ({ status: 503 })), { status: 200 });
    for (let i = 0; i < EVENTS; i++) {
      await recordTestEvent(db, business.id, 'outage', { n: i });
    }
    const log = createLogger('silent');
    const send = createWebhookSender({ keys: testWebhookKeys(), allowInsecureUrls: true });
    // the first attempts, by the dispatcher in real time: all refused, all handed off
    const handedOff: { deliveryId: string; run: number }[] = [];
    const dispatcher = createWebhookDispatcher({
      db,
      log,
      send,
      settings: { maxInFlight: 10, perSubscription: 10, perBusiness: 10, leaseMs: 30_000, pollMs: 20 },
      disableAfterMs: DISABLE_AFTER_MS,
      handOff: async (ds) => void handedOff.push(...ds),
    });
    await dispatcher.run({ signal: new AbortController().signal, runForMs: 1000, heartbeat() {} });
    assert.equal(handedOff.length, EVENTS);
    const deliveries = handedOff.map((d) => d.deliveryId);

    const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
    const activities = createWebhookActivities({
      db,
      log,
      send,
      dispatcher: { maxInFlight: 1, perSubscription: 1, perBusiness: 1, leaseMs: 1, pollMs: 1 },
      disableAfterMs: DISABLE_AFTER_MS,
      startRetry: async () => {},
    });
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: 'outage', workflowBundle: await workflowBundle(config), activities });
    const results = await worker.runUntil(async () => {
      const handles = [];
      for (const d of handedOff) {
        handles.push(
          await env.client.workflow.start(webhookRetryWorkflow, {
            taskQueue: 'outage',
            workflowId: webhookRetryWorkflowId(d.deliveryId, d.run),
            args: [{ deliveryId: d.deliveryId }],
          }),
        );
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
      assert.deepEqual(
        mine.map((a) => a.succeeded),
        [...Array(FAILURES).fill(false), true],
      );
      assert.deepEqual(
        mine.map((a) => a.attempt),
        Array.from({ length: FAILURES + 1 }, (_, i) => i + 1),
      );
    }
    // the waits between attempts are the documented schedule, each within its ±20 % jitter (the
    // first one less the real time that passed between the dispatcher's attempt and the workflow's start)
    for (const d of handedOff) {
      const { events } = await env.client.workflow.getHandle(webhookRetryWorkflowId(d.deliveryId, d.run)).fetchHistory();
      const timers = events!.filter((e) => e.timerStartedEventAttributes).map((e) => durationMs(e.timerStartedEventAttributes!.startToFireTimeout!));
      assert.equal(timers.length, FAILURES);
      timers.forEach((ms, i) => {
        const base = RETRY_DELAYS_MS[i]!;
        assert.ok(ms <= base * 1.2 + 1 && ms >= base * 0.8 - (i === 0 ? 3000 : 1), `wait ${i + 1}: ${ms} ms`);
      });
    }
    const received = receiver.received.map((r) => JSON.parse(r.body.toString()).data.eventId);
    assert.equal(new Set(received).size, EVENTS, 'every event reached the receiver');
    const statuses = await db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = ANY($1::uuid[])', [deliveries]);
    assert.deepEqual(
      statuses.map((s) => s.status),
      Array(EVENTS).fill('delivered'),
    );
  });

  it('keeps a waiting delivery through any number of failures of our own infrastructure (database down)', async () => {
    const { business } = await createBusiness(db, { name: 'Infra', binSponsored: false, environment: 'sandbox' });
    await createSubscription(db, business.id, { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: receiver.url });
    receiver.answer({ status: 503 }, { status: 200 });
    await recordTestEvent(db, business.id, 'infra');
    const log = createLogger('silent');
    const send = createWebhookSender({ keys: testWebhookKeys(), allowInsecureUrls: true });
    const handedOff: { deliveryId: string; run: number }[] = [];
    await createWebhookDispatcher({
      db,
      log,
      send,
      settings: { maxInFlight: 10, perSubscription: 10, perBusiness: 10, leaseMs: 30_000, pollMs: 20 },
      disableAfterMs: DISABLE_AFTER_MS,
      handOff: async (ds) => void handedOff.push(...ds),
    }).run({
      signal: new AbortController().signal,
      runForMs: 500,
      heartbeat() {},
    });
    assert.equal(handedOff.length, 1);
    const real = createWebhookActivities({
      db,
      log,
      send,
      dispatcher: { maxInFlight: 1, perSubscription: 1, perBusiness: 1, leaseMs: 1, pollMs: 1 },
      disableAfterMs: DISABLE_AFTER_MS,
      startRetry: async () => {},
    });
    let failures = 12; // well past the 5 the earlier design allowed
    const activities = {
      ...real,
      async attemptDelivery(deliveryId: string) {
        if (failures-- > 0) throw new Error('connection to the database refused');
        return real.attemptDelivery(deliveryId);
      },
    };
    const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: 'infra', workflowBundle: await workflowBundle(config), activities });
    const d = handedOff[0]!;
    const result = await worker.runUntil(
      env.client.workflow.execute(webhookRetryWorkflow, {
        taskQueue: 'infra',
        workflowId: webhookRetryWorkflowId(d.deliveryId, d.run),
        args: [{ deliveryId: d.deliveryId }],
      }),
    );
    assert.equal(result, 'delivered');
    assert.equal(failures, -1, 'every failure was retried');
    const [row] = await db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = $1', [d.deliveryId]);
    assert.equal(row!.status, 'delivered');
  });
});
