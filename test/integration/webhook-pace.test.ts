// A receiver that is down is asked at a pace (issue 38, item 0): once a subscription's attempt fails,
// a dispatcher starts at most FAILING_ATTEMPTS_PER_SECOND attempts a second to it until one succeeds,
// however fast its refusals come back, while a healthy subscription of the same business takes its
// deliveries at full speed. Counts, not timings: the bound holds however slow the machine is.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createWebhookDispatcher } from '../../activities/webhook-dispatcher.ts';
import { createWebhookSender } from '../../activities/webhook-send.ts';
import { DISABLE_AFTER_MS, FAILING_ATTEMPTS_PER_SECOND } from '../../domain/webhooks.ts';
import { createLogger } from '../../runtime/logger.ts';
import { createBusiness } from '../../store/businesses.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { createSubscription } from '../../store/subscriptions.ts';
import { recordTestEvent } from '../helpers/events.ts';
import { refusingUrl, startReceiver, type Receiver } from '../helpers/receiver.ts';
import { isolatedDatabaseUrl, testWebhookKeys } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

const EVENTS = 300;
const SETTINGS = { maxInFlight: 64, perSubscription: 16, perBusiness: 64, leaseMs: 30_000, pollMs: 20 };

describe('a receiver that is down is asked at a pace', () => {
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

  it('attempts a failing subscription at most its pace a second, and its healthy sibling at full speed', async () => {
    const { business } = await createBusiness(db, { name: 'Paced', binSponsored: false, environment: 'sandbox' });
    const types = ['account_status_change' as const];
    const down = await createSubscription(db, business.id, { notificationChannel: 'WEBHOOK', notificationTypes: types, webhookUrl: await refusingUrl() });
    const up = await createSubscription(db, business.id, { notificationChannel: 'WEBHOOK', notificationTypes: types, webhookUrl: receiver.url });
    await db.tx(async (q) => {
      for (let i = 0; i < EVENTS; i++) await recordTestEvent(q, business.id, 'paced', { n: i });
    });
    const dispatcher = createWebhookDispatcher({
      db,
      log: createLogger('silent'),
      send: createWebhookSender({ keys: testWebhookKeys(), allowInsecureUrls: true }),
      settings: SETTINGS,
      disableAfterMs: DISABLE_AFTER_MS,
    });
    const started = Date.now();
    // until the healthy subscription has all its deliveries (or 60 s), then stop
    const stop = new AbortController();
    const running = dispatcher.run({ signal: stop.signal, runForMs: 60_000, heartbeat() {} });
    const delivered = async () =>
      Number(
        (await db.query<{ n: string }>("SELECT count(*) AS n FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'delivered'", [up.id]))[0]!.n,
      );
    await eventually(`${EVENTS} delivered`, async () => (await delivered()) >= EVENTS, { timeoutMs: 60_000, state: delivered });
    stop.abort();
    await running;
    const seconds = Math.ceil((Date.now() - started) / 1000) + 1; // every calendar second the run touched
    assert.equal(await delivered(), EVENTS, 'the healthy subscription got every delivery');
    const [attempts] = await db.query<{ n: string }>(
      'SELECT count(*) AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.subscription_id = $1',
      [down.id],
    );
    // before its first refusal came back, one claim's worth; after it, the pace
    const bound = SETTINGS.perSubscription + FAILING_ATTEMPTS_PER_SECOND * seconds;
    assert.ok(Number(attempts!.n) > 0, 'the down receiver was asked');
    assert.ok(Number(attempts!.n) <= bound, `${attempts!.n} attempts to the down receiver in ${seconds} s (at most ${bound}; ${EVENTS} were due at once)`);
  });
});
