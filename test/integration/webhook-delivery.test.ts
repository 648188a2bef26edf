// Signed webhook deliveries end to end: an onboarding decision reaches a local receiver, signed so
// that openssl verifies it; retries on 500, timeouts and refused connections with the same bytes and
// eventId; redirects not followed; delete stops delivery; redelivery; isolation between businesses.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { standardWebhookPublicKeyOf } from '../../domain/standard-webhooks.ts';
import { publicKeyOf, signingKeyAt, validKeysAt } from '../../domain/webhook-signature.ts';
import { verifyWebhook } from '../../receiver/verify-webhook.ts';
import { createEntities, donorAt, type Donor } from '../helpers/imports.ts';
import { freePort } from '../helpers/ports.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, testKeyRing, testKeyRings, type Stack, testStandardRing } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

describe('webhook deliveries', () => {
  let stack: Stack;
  let key: string;
  let businessId: string;
  let donor: Donor;
  let tmp: string;
  const receivers: Receiver[] = [];
  let n = 0;

  before(async () => {
    stack = await startStack({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', SYNC_IMPORT_RATE_LIMIT_PER_SECOND: '100' } });
    ({ apiKey: key, businessId } = await stack.newBusiness());
    donor = donorAt(stack);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'vouch-webhooks-'));
  });
  after(async () => {
    for (const r of receivers) await r.close();
    await stack.close();
    await rm(tmp, { recursive: true, force: true });
  });

  afterEach(async () => {
    // a subscription left by a failed test must not receive the next test's events
    await stack.db.query('DELETE FROM notification_subscriptions WHERE business_id = $1', [businessId]);
  });

  async function receiver(port?: number) {
    const r = await startReceiver(port);
    receivers.push(r);
    return r;
  }

  async function subscribe(url: string, k = key, types = ['account_status_change']) {
    const res = await stack.request('POST', '/notification', { key: k, json: { notificationChannel: 'WEBHOOK', notificationTypes: types, webhookUrl: url } });
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  }

  /** Onboards one cardholder by sync import; returns its entity id. */
  async function onboard(k = key, scenario: 'complete' | 'missing-address' = 'complete') {
    const externalId = `hook-${n++}`;
    const [entityId] = await createEntities(stack, k, [externalId]);
    const res = await stack.request('POST', '/entity/kyc/import/sync', { key: k, json: { externalId, shareToken: await donor.token(scenario) } });
    assert.equal(res.status, 200, res.text);
    return entityId!;
  }

  const deliveriesOf = async (subscriptionId: string, k = key) =>
    (await stack.request('GET', `/notification/${subscriptionId}/deliveries`, { key: k })).body.items;
  /** The subscription's deliveries once the newest is recorded as delivered (a receiver sees a request before we record its answer). */
  const deliveredOf = async (subscriptionId: string) => {
    let items: any[] = [];
    try {
      return await eventually(
        'delivered',
        async () => {
          items = await deliveriesOf(subscriptionId);
          return items[0]?.status === 'delivered' && items;
        },
        { timeoutMs: 10_000 },
      );
    } catch {
      return items; // not delivered: the caller's assertion says what it is
    }
  };

  it('delivers the decision, signed with RSA-SHA512 so that openssl verifies it, and refuses a tampered copy', async () => {
    const r = await receiver();
    const sub = await subscribe(r.url);
    const entityId = await onboard(key, 'missing-address');
    const [got] = await r.waitFor(1);
    const event = JSON.parse(got!.body.toString());
    assert.equal(event.eventName, 'card_issuance_api_access_updated');
    assert.equal(event.eventType, 'account_status_change');
    assert.equal(event.data.entityId, entityId);
    assert.equal(event.data.status, 'REJECTED');
    assert.deepEqual(event.data.rejectLabels, ['MISSING_ADDRESS']);
    const [stored] = await stack.db.query<{ body: string; id: string }>('SELECT id, body FROM events WHERE entity_id = $1', [entityId]);
    assert.equal(got!.body.toString(), stored!.body, 'the bytes recorded with the event');
    assert.equal(got!.headers['content-type'], 'application/json');
    assert.equal(got!.headers['webhook-id'], event.data.eventId);
    assert.ok(Math.abs(Number(got!.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
    // the one key that signs now (issue 38, item 1)
    const signingKey = signingKeyAt(testKeyRing(), new Date());
    assert.equal(got!.headers['vouch-signature-key-id'], signingKey.keyId);

    // openssl, an independent implementation, checks the signature over the exact bytes
    const pub = path.join(tmp, 'public.pem');
    const sig = path.join(tmp, 'signature.bin');
    const raw = path.join(tmp, 'body.json');
    await writeFile(pub, publicKeyOf(signingKey).publicKeyPem);
    await writeFile(sig, Buffer.from(String(got!.headers['vouch-signature']), 'base64'));
    await writeFile(raw, got!.body);
    assert.match(execFileSync('openssl', ['dgst', '-sha512', '-verify', pub, '-signature', sig, raw]).toString(), /Verified OK/);
    await writeFile(raw, Buffer.from(got!.body.toString().replace('REJECTED', 'APPROVED')));
    assert.throws(
      () => execFileSync('openssl', ['dgst', '-sha512', '-verify', pub, '-signature', sig, raw], { stdio: 'pipe' }),
      (e: { status?: number; stdout?: Buffer }) => e.status === 1 && String(e.stdout).includes('Verification failure'),
    );

    // the receiver helper agrees, with every public key of the ring on offer
    const keys = testKeyRing().map(publicKeyOf);
    assert.equal(verifyWebhook(got!.body, got!.headers['vouch-signature'], keys), true);
    assert.equal(verifyWebhook(Buffer.from(got!.body.toString().replace('REJECTED', 'APPROVED')), got!.headers['vouch-signature'], keys), false);
    assert.equal(verifyWebhook(got!.body, undefined, keys), false);

    // the Standard Webhooks signature (v1a, Ed25519 over id.timestamp.body), checked by openssl too;
    // the business is named in the body both signatures cover
    assert.equal(event.businessId, businessId);
    const [, v1a] = String(got!.headers['webhook-signature'])
      .split(' ')
      .find((x) => x.startsWith('v1a,'))!
      .split(',');
    const content = path.join(tmp, 'signed-content.txt');
    await writeFile(content, `${got!.headers['webhook-id']}.${got!.headers['webhook-timestamp']}.${got!.body.toString()}`);
    await writeFile(sig, Buffer.from(v1a!, 'base64'));
    const ed = validKeysAt(testStandardRing(), new Date())[0]!;
    await writeFile(pub, standardWebhookPublicKeyOf(ed).publicKeyPem);
    assert.match(
      execFileSync('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', pub, '-rawin', '-in', content, '-sigfile', sig]).toString(),
      /Signature Verified Successfully/,
    );
    await writeFile(content, `${got!.headers['webhook-id']}.${Number(got!.headers['webhook-timestamp']) + 60}.${got!.body.toString()}`);
    assert.throws(
      () => execFileSync('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', pub, '-rawin', '-in', content, '-sigfile', sig], { stdio: 'pipe' }),
      'a replay with a fresh timestamp fails',
    );

    const [delivery] = await deliveredOf(sub);
    assert.equal(delivery.status, 'delivered');
    assert.equal(delivery.attempts.length, 1);
    assert.equal(delivery.attempts[0].httpStatus, 200);
    assert.equal(delivery.eventId, event.data.eventId);
    await stack.request('DELETE', `/notification/${sub}`, { key });
  });

  it('retries after a 500 and after a timeout, with byte-identical bodies and the same eventId', async () => {
    const failing = await receiver();
    failing.answer({ status: 500 }, { status: 200 });
    const slow = await receiver();
    slow.answer({ status: 200, delayMs: 5600 }, { status: 200 });
    const subs = [await subscribe(failing.url), await subscribe(slow.url)];
    await onboard();
    const [first, second] = await Promise.all([failing.waitFor(2, 20_000), slow.waitFor(2, 25_000)]);
    for (const got of [first, second]) {
      assert.ok(got[0]!.body.equals(got[1]!.body), 'same bytes on every attempt');
      assert.equal(got[0]!.headers['webhook-id'], got[1]!.headers['webhook-id']);
    }
    assert.ok(first[0]!.body.equals(second[0]!.body), 'the same event to both endpoints');
    const [viaFailing] = await deliveredOf(subs[0]!);
    assert.equal(viaFailing.status, 'delivered');
    assert.deepEqual(
      viaFailing.attempts.map((a: any) => [a.attempt, a.httpStatus, a.succeeded]),
      [
        [1, 500, false],
        [2, 200, true],
      ],
    );
    const [viaSlow] = await deliveredOf(subs[1]!);
    assert.deepEqual(
      viaSlow.attempts.map((a: any) => [a.attempt, a.httpStatus, a.succeeded]),
      [
        [1, null, false],
        [2, 200, true],
      ],
    );
    assert.match(viaSlow.attempts[0].error, /no answer within 5 s/);
    // the schedule itself is checked exactly, timer by timer, in webhook-outage.test.ts
  });

  it('retries a refused connection until the receiver comes up', async () => {
    const port = await freePort();
    const sub = await subscribe(`http://127.0.0.1:${port}/hook`);
    await onboard();
    const refused = await eventually(
      'a first attempt',
      async () => {
        const [d] = await deliveriesOf(sub);
        return d?.attempts.length && d;
      },
      { everyMs: 100 },
    );
    assert.match(refused.attempts[0].error, /ECONNREFUSED/);
    const r = await receiver(port);
    await r.waitFor(1, 15_000);
    const [d] = await deliveredOf(sub);
    assert.equal(d.status, 'delivered');
    await stack.request('DELETE', `/notification/${sub}`, { key });
  });

  it('does not follow a redirect: the attempt fails', async () => {
    const target = await receiver();
    const r = await receiver();
    r.answer({ status: 302, location: target.url }, { status: 200 });
    const sub = await subscribe(r.url);
    await onboard();
    await r.waitFor(2, 15_000);
    assert.equal(target.received.length, 0, 'the redirect target never got the event');
    const [d] = await deliveriesOf(sub);
    assert.match(d.attempts[0].error, /redirect \(302\) not followed/);
    await stack.request('DELETE', `/notification/${sub}`, { key });
  });

  it('stops delivering at once when the subscription is deleted, pending retries included', async () => {
    const r = await receiver();
    r.answer({ status: 503 });
    const sub = await subscribe(r.url);
    await onboard();
    await r.waitFor(1);
    const [before] = await deliveriesOf(sub);
    await eventually(
      'the refused attempt recorded',
      async () => (await stack.db.query('SELECT 1 FROM webhook_attempts WHERE delivery_id = $1', [before.deliveryId])).length > 0,
      { timeoutMs: 5000, everyMs: 25 },
    );
    assert.equal((await stack.request('DELETE', `/notification/${sub}`, { key })).status, 204);
    const [row] = await stack.db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = $1', [before.deliveryId]);
    assert.equal(row!.status, 'canceled');
    // its retry slot comes (as if 5 s had passed): nothing is sent
    await stack.db.query("UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 minute' WHERE id = $1", [before.deliveryId]);
    await new Promise((res) => setTimeout(res, 1500)); // a few turns of the dispatchers' promotion (every 250 ms)
    assert.equal(r.received.length, 1, 'no attempt after the delete');
  });

  it('redelivers an event on request, with the same eventId, and logs it by event', async () => {
    const r = await receiver();
    const sub = await subscribe(r.url);
    const entityId = await onboard();
    await r.waitFor(1);
    const eventId = (await stack.db.query<{ id: string }>('SELECT id FROM events WHERE entity_id = $1', [entityId]))[0]!.id;
    // the receiver has the request before the dispatcher has recorded its answer, and a delivery
    // still on its way is not redelivered: wait for the record (the race made this test flaky)
    await eventually(
      'the first delivery recorded',
      async () => (await stack.request('GET', `/events/${eventId}/deliveries`, { key })).body.items[0]?.status === 'delivered',
      { timeoutMs: 5000, everyMs: 25 },
    );
    const res = await stack.request('POST', `/events/${eventId}/redeliver`, { key });
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(res.body, { redeliveries: 1 });
    const got = await r.waitFor(2);
    assert.ok(got[0]!.body.equals(got[1]!.body));
    assert.equal(JSON.parse(got[1]!.body.toString()).data.eventId, eventId);
    // as above: the second attempt reaches the receiver before the dispatcher records it
    const log = await eventually(
      'two attempts in the log',
      async () => {
        const now = await stack.request('GET', `/events/${eventId}/deliveries`, { key });
        return now.body.items[0].attempts.length >= 2 && now;
      },
      { timeoutMs: 5000, everyMs: 25 },
    );
    assert.equal(log.body.items[0].attempts.length, 2);
    assert.equal((await stack.request('GET', '/events/7b0b7d8e-35f5-4f4f-9f57-2f1f1c1c1c1c/deliveries', { key })).status, 404);
    await stack.request('DELETE', `/notification/${sub}`, { key });
  });

  it('redelivers every failed event of a subscription since a time', async () => {
    const r = await receiver();
    r.answer({ status: 500 });
    const sub = await subscribe(r.url);
    const since = new Date(Date.now() - 1000).toISOString();
    await onboard();
    await r.waitFor(1);
    // make the delivery give up now instead of in three days
    const [d] = await deliveriesOf(sub);
    await stack.db.query("UPDATE webhook_deliveries SET status = 'failed' WHERE id = $1", [d.deliveryId]);
    r.answer({ status: 200 });
    const res = await stack.request('POST', `/notification/${sub}/redeliver`, { key, json: { since } });
    assert.deepEqual([res.status, res.body], [202, { redeliveries: 1 }]);
    await r.waitFor(2);
    await new Promise((res2) => setTimeout(res2, 300));
    assert.equal((await deliveriesOf(sub))[0].status, 'delivered');
    const bad = await stack.request('POST', `/notification/${sub}/redeliver`, { key, json: { since: 'yesterday' } });
    assert.deepEqual([bad.status, bad.body.parameter], [400, 'since']);
    await stack.request('DELETE', `/notification/${sub}`, { key });
  });

  it('sends a business only its own events, to subscriptions of the matching type', async () => {
    const mine = await receiver();
    const theirs = await receiver();
    const other = await receiver();
    const { apiKey: otherKey } = await stack.newBusiness({ name: 'Neighbour' });
    const s1 = await subscribe(mine.url);
    const s2 = await subscribe(theirs.url, otherKey);
    const s3 = await subscribe(other.url, key, ['kyb_status_change']);
    await onboard();
    await mine.waitFor(1);
    await new Promise((res) => setTimeout(res, 1000));
    assert.equal(theirs.received.length, 0, "another business's endpoint gets nothing");
    assert.equal(other.received.length, 0, 'a subscription of another type gets nothing');
    for (const [s, k] of [
      [s1, key],
      [s2, otherKey],
      [s3, key],
    ] as const)
      await stack.request('DELETE', `/notification/${s}`, { key: k });
  });
});
