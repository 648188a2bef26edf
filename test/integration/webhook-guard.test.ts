// The delivery-time guard: a subscription whose address is (or has become) non-public gets no
// request, whatever was checked at registration.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createWebhookActivities, publicOnlyLookup } from '../../activities/webhooks.ts';
import { createBusiness } from '../../store/businesses.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { dispatchEvent } from '../../store/webhooks.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { testEnv, testKeyRing } from '../helpers/stack.ts';

describe('delivery-time address guard', () => {
  let db: Db;
  let receiver: Receiver;
  before(async () => {
    db = connectDb(testEnv('TEST_DATABASE_URL'), 2);
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
    it(`sends nothing to a stored subscription at ${host}, and logs why`, async () => {
      const { business } = await createBusiness(db, { name: `Guard ${host}`, binSponsored: false, environment: 'sandbox' });
      // stored as if registered while the name pointed elsewhere (a DNS change, or an old row)
      await db.query("INSERT INTO notification_subscriptions (id, business_id, channel, types, url) VALUES ($1, $2, 'WEBHOOK', '{account_status_change}', $3)", [
        randomUUID(),
        business.id,
        `https://${host}:${receiver.port}/hook`,
      ]);
      const id = randomUUID();
      const body = JSON.stringify({ eventName: 'card_issuance_api_access_updated', eventType: 'account_status_change', data: { eventId: id } });
      await db.query('INSERT INTO events (id, business_id, event_name, event_type, payload, body, source_key) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
        id, business.id, 'card_issuance_api_access_updated', 'account_status_change', body, body, `guard-${id}`,
      ]);
      const [delivery] = await dispatchEvent(db, id);
      const activities = createWebhookActivities({ db, log: undefined as never, temporal: undefined as never, keyRing: testKeyRing(), webhookTaskQueue: 'x', allowInsecureUrls: false });
      const result = await activities.deliverWebhook(delivery!.deliveryId, 1);
      assert.equal(result.outcome, 'failed');
      assert.match(result.error!, /non-public address|local host name/);
      assert.equal(receiver.received.length, 0);
      const [attempt] = await db.query<{ error: string; succeeded: boolean }>('SELECT error, succeeded FROM webhook_attempts WHERE delivery_id = $1', [delivery!.deliveryId]);
      assert.equal(attempt!.succeeded, false);
    });
  }
});
