// One business's slow receivers and its backlog do not delay another business's deliveries (issue
// 18): business A has 10 subscriptions whose receiver answers after a second and 300 events waiting
// for each (3,000 deliveries, all older), business B one healthy subscription and 5 new events. The
// dispatcher (real PostgreSQL, real HTTP receivers) takes each business's oldest due deliveries in
// turn and never gives one business more than its share: B's events arrive while A's backlog has
// hardly begun. Before, the dispatcher claimed oldest first and capped subscriptions only, so A's
// 10 × 8 slow requests held all 32 slots and B waited behind A's 3,000.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DISABLE_AFTER_MS } from '../../domain/webhooks.ts';
import { createWebhookDispatcher } from '../../activities/webhook-dispatcher.ts';
import { createWebhookSender } from '../../activities/webhook-send.ts';
import { createLogger } from '../../runtime/logger.ts';
import { createBusiness } from '../../store/businesses.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { recordTestEvent } from '../helpers/events.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { isolatedDatabaseUrl, testWebhookKeys } from '../helpers/stack.ts';

describe('webhook deliveries shared fairly between businesses', () => {
  let db: Db;
  let slow: Receiver;
  let fast: Receiver;
  before(async () => {
    db = connectDb(await isolatedDatabaseUrl(), 4);
    slow = await startReceiver();
    slow.answer({ status: 200, delayMs: 1000 });
    fast = await startReceiver();
  });
  after(async () => {
    await slow.close();
    await fast.close();
    await db.close();
  });

  const subscribe = (businessId: string, url: string) =>
    db.query("INSERT INTO notification_subscriptions (id, business_id, channel, types, url) VALUES ($1, $2, 'WEBHOOK', '{account_status_change}', $3)", [
      randomUUID(),
      businessId,
      url,
    ]);

  it("delivers business B's events while business A's slow backlog waits its turn", async () => {
    const a = (await createBusiness(db, { name: 'A (slow, backlog)', binSponsored: false, environment: 'sandbox' })).business.id;
    const b = (await createBusiness(db, { name: 'B', binSponsored: false, environment: 'sandbox' })).business.id;
    for (let i = 0; i < 10; i++) await subscribe(a, `${slow.url}/${i}`);
    await subscribe(b, fast.url);
    for (let i = 0; i < 300; i++) await recordTestEvent(db, a, 'backlog');
    await db.query("UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 hour' WHERE business_id = $1", [a]); // older than anything of B's
    for (let i = 0; i < 5; i++) await recordTestEvent(db, b, 'fresh');

    const stop = new AbortController();
    const dispatcher = createWebhookDispatcher({
      db,
      log: createLogger('silent'),
      send: createWebhookSender({ keys: testWebhookKeys(), allowInsecureUrls: true }),
      settings: { maxInFlight: 32, perSubscription: 8, perBusiness: 16, leaseMs: 30_000, pollMs: 20 },
      disableAfterMs: DISABLE_AFTER_MS,
    });
    const running = dispatcher.run({ signal: stop.signal, runForMs: 60_000, heartbeat() {} });
    try {
      await fast.waitFor(5, 20_000);
      const aReceived = slow.received.length;
      assert.ok(aReceived < 100, `A had ${aReceived} of its 3,000 deliveries when B's 5 had all arrived`);
      const [inFlight] = await db.query<{ n: string }>(
        "SELECT count(*) AS n FROM webhook_deliveries WHERE business_id = $1 AND lease_until > now() AND status = 'pending'",
        [a],
      );
      assert.ok(Number(inFlight!.n) <= 16, `A holds at most its share of the dispatcher (${inFlight!.n} in flight)`);
    } finally {
      stop.abort();
      await running;
    }
  });
});
