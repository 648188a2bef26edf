// A receiver down for a long time, then back: every attempt fails and each delivery waits in
// PostgreSQL for its next slot, with no workflow of its own. The schedule's hours and days pass in
// moments here by moving each waiting delivery's slot to now once the wait it was given has been
// read (the wait itself is what the dispatcher recorded); every event is delivered, none lost, none
// twice, and a database that refuses for a while loses nothing either.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createWebhookDispatcher } from '../../activities/webhook-dispatcher.ts';
import { createWebhookSender } from '../../activities/webhook-send.ts';
import { DISABLE_AFTER_MS, RETRY_DELAYS_MS } from '../../domain/webhooks.ts';
import { createLogger } from '../../runtime/logger.ts';
import { createBusiness } from '../../store/businesses.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { createSubscription } from '../../store/subscriptions.ts';
import { recordTestEvent } from '../helpers/events.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { isolatedDatabaseUrl, testWebhookKeys } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

const EVENTS = 5;
// 7 failed attempts per event (the first, then 6 retries): about 27.5 hours of retries before the receiver is back.
const FAILURES = 7;
const SETTINGS = { maxInFlight: 10, perSubscription: 10, perBusiness: 10, leaseMs: 30_000, pollMs: 20 };

describe('a receiver down for two days', () => {
  let db: Db;
  let receiver: Receiver;
  before(async () => {
    db = connectDb(await isolatedDatabaseUrl(), 4);
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver?.close();
    await db?.close();
  });

  /** A business with one subscription to the receiver, and `n` events recorded for it; their deliveries' ids. */
  async function eventsFor(name: string, n: number): Promise<string[]> {
    const { business } = await createBusiness(db, { name, binSponsored: false, environment: 'sandbox' });
    await createSubscription(db, business.id, { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: receiver.url });
    const events = [];
    for (let i = 0; i < n; i++) events.push(await recordTestEvent(db, business.id, name, { n: i }));
    const rows = await db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE event_id = ANY ($1::text[]::uuid[]) ORDER BY created_at', [events]);
    return rows.map((r) => r.id);
  }

  /** Time passes for the waiting deliveries: each one's slot is now; the waits they had been given, in seconds. */
  async function fastForward(deliveries: string[]): Promise<{ id: string; waitMs: number }[]> {
    return db.query<{ id: string; waitMs: number }>(
      `WITH w AS (SELECT id, extract(epoch FROM next_attempt_at - updated_at) * 1000 AS wait_ms FROM webhook_deliveries
                   WHERE id = ANY ($1::uuid[]) AND status = 'pending' AND mode = 'waiting' AND next_attempt_at > now() FOR UPDATE)
       UPDATE webhook_deliveries d SET next_attempt_at = now() FROM w WHERE d.id = w.id RETURNING w.id, w.wait_ms::float8 AS "waitMs"`,
      [deliveries],
    );
  }

  const statuses = async (deliveries: string[]) =>
    (await db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = ANY ($1::uuid[])', [deliveries])).map((r) => r.status);

  it('delivers every event once the receiver is back, on the documented schedule', async () => {
    receiver.answer(...Array.from({ length: EVENTS * FAILURES }, () => ({ status: 503 })), { status: 200 });
    const deliveries = await eventsFor('Outage', EVENTS);
    const dispatcher = createWebhookDispatcher({
      db,
      log: createLogger('silent'),
      send: createWebhookSender({ keys: testWebhookKeys(), allowInsecureUrls: true }),
      settings: SETTINGS,
      disableAfterMs: DISABLE_AFTER_MS,
    });
    const stop = new AbortController();
    const running = dispatcher.run({ signal: stop.signal, runForMs: 120_000, heartbeat() {} });
    const waits = new Map<string, number[]>(deliveries.map((d) => [d, []]));
    try {
      await eventually(
        'every event delivered',
        async () => {
          if ((await statuses(deliveries)).every((s) => s === 'delivered')) return true;
          for (const w of await fastForward(deliveries)) waits.get(w.id)!.push(w.waitMs);
          return false;
        },
        { timeoutMs: 60_000, everyMs: 20 },
      );
    } finally {
      stop.abort();
    }
    const stats = await running;
    assert.equal(stats.delivered, EVENTS);
    assert.equal(stats.promoted, EVENTS * FAILURES, 'each retry taken up from PostgreSQL as its slot came');
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
      // the waits between attempts are the documented schedule, each within its ±20 % jitter
      const mineWaits = waits.get(d)!;
      assert.equal(mineWaits.length, FAILURES, d);
      mineWaits.forEach((ms, i) => {
        const base = RETRY_DELAYS_MS[i]!;
        assert.ok(ms <= base * 1.2 + 1 && ms >= base * 0.8 - 1, `wait ${i + 1}: ${ms} ms`);
      });
    }
    const received = receiver.received.map((r) => JSON.parse(r.body.toString()).data.eventId);
    assert.equal(received.length, EVENTS * (FAILURES + 1), 'nothing sent twice');
    assert.deepEqual(await statuses(deliveries), Array(EVENTS).fill('delivered'));
  });

  it('keeps a waiting delivery through an outage of our own database, and delivers it once the database is back', async () => {
    receiver.answer({ status: 503 }, { status: 200 });
    const before = receiver.received.length;
    const [delivery] = await eventsFor('Infra', 1);
    let down = false;
    let refused = 0;
    // the dispatcher's connection refuses every statement while `down`
    const flaky = new Proxy(db, {
      get(target, key, receiverOf) {
        const value = Reflect.get(target, key, receiverOf);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (down && (key === 'query' || key === 'tx')) {
            refused++;
            return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
          }
          return value.apply(target, args);
        };
      },
    });
    const stop = new AbortController();
    const running = createWebhookDispatcher({
      db: flaky,
      log: createLogger('silent'),
      send: createWebhookSender({ keys: testWebhookKeys(), allowInsecureUrls: true }),
      settings: SETTINGS,
      disableAfterMs: DISABLE_AFTER_MS,
    }).run({ signal: stop.signal, runForMs: 60_000, heartbeat() {} });
    try {
      const modeOf = async () => (await db.query<{ mode: string }>('SELECT mode FROM webhook_deliveries WHERE id = $1', [delivery]))[0]!.mode;
      await eventually('the first attempt failed and the delivery waits', async () => (await modeOf()) === 'waiting', { timeoutMs: 10_000, everyMs: 20 });
      // the database refuses the dispatcher for a while, and meanwhile the delivery's slot comes
      down = true;
      assert.equal((await fastForward([delivery!])).length, 1);
      await new Promise((r) => setTimeout(r, 1500));
      assert.ok(refused > 0, 'the dispatcher kept trying');
      assert.equal(receiver.received.length, before + 1, 'nothing sent while the database was down');
      down = false;
      await eventually('delivered once the database is back', async () => (await statuses([delivery!]))[0] === 'delivered', { timeoutMs: 10_000, everyMs: 20 });
    } finally {
      stop.abort();
    }
    await running;
    assert.equal(receiver.received.length, before + 2, 'the refused attempt, then the delivery: once');
  });
});
