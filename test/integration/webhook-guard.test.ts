// The delivery-time guard: a subscription whose address is (or has become) non-public gets no
// request, whatever was checked at registration; the refused attempt is logged and retried later.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DISABLE_AFTER_MS } from '../../domain/webhooks.ts';
import { createWebhookDispatcher } from '../../activities/webhook-dispatcher.ts';
import { createWebhookSender, publicOnlyLookup } from '../../activities/webhook-send.ts';
import { createLogger } from '../../runtime/logger.ts';
import { createBusiness } from '../../store/businesses.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { recordTestEvent } from '../helpers/events.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { isolatedDatabaseUrl, testWebhookKeys } from '../helpers/stack.ts';

describe('delivery-time address guard', () => {
  let db: Db;
  let receiver: Receiver;
  before(async () => {
    db = connectDb(await isolatedDatabaseUrl(), 2);
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await db.close();
  });

  it('refuses to dial a host name that resolves to a loopback address', async () => {
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => publicOnlyLookup('localhost', {}, (e) => resolve(e)));
    assert.equal(err?.code, 'ENONPUBLIC');
    assert.match(err!.message, /non-public address/);
  });

  for (const host of ['127.0.0.1', 'localhost']) {
    it(`sends nothing to a stored subscription at ${host}, logs why, and the delivery waits for its next retry slot`, async () => {
      const { business } = await createBusiness(db, { name: `Guard ${host}`, binSponsored: false, environment: 'sandbox' });
      // stored as if registered while the name pointed elsewhere (a DNS change, or an old row)
      await db.query(
        "INSERT INTO notification_subscriptions (id, business_id, channel, types, url) VALUES ($1, $2, 'WEBHOOK', '{account_status_change}', $3)",
        [randomUUID(), business.id, `https://${host}:${receiver.port}/hook`],
      );
      const eventId = await recordTestEvent(db, business.id, 'guard');
      const dispatcher = createWebhookDispatcher({
        db,
        log: createLogger('silent'),
        send: createWebhookSender({ keys: testWebhookKeys(), allowInsecureUrls: false }),
        settings: { maxInFlight: 10, perSubscription: 10, perBusiness: 10, leaseMs: 30_000, pollMs: 20 },
        disableAfterMs: DISABLE_AFTER_MS,
      });
      const stats = await dispatcher.run({ signal: new AbortController().signal, runForMs: 500, heartbeat() {} });
      assert.deepEqual([stats.claimed, stats.retrying], [1, 1]);
      assert.equal(receiver.received.length, 0);
      const [delivery] = await db.query<{ id: string; status: string; mode: string; due_in_s: number }>(
        'SELECT id, status, mode, extract(epoch FROM next_attempt_at - now())::float8 AS due_in_s FROM webhook_deliveries WHERE event_id = $1',
        [eventId],
      );
      assert.deepEqual([delivery!.status, delivery!.mode], ['pending', 'waiting']);
      assert.ok(delivery!.due_in_s > 3, `its next slot is the schedule's first wait away (${delivery!.due_in_s} s)`);
      const [attempt] = await db.query<{ error: string; succeeded: boolean }>('SELECT error, succeeded FROM webhook_attempts WHERE delivery_id = $1', [
        delivery!.id,
      ]);
      assert.equal(attempt!.succeeded, false);
      assert.match(attempt!.error, /non-public address|local host name/);
    });
  }
});
