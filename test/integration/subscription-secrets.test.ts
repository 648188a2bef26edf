// A secret per subscription (issue 38, item 2), end to end: the secret is in the POST /notification
// answer and GET …/secret only; every delivery carries its `v1,` HMAC, which the Standard Webhooks
// reference libraries — npm's and PyPI's `standardwebhooks`, as receivers install them — verify with no
// code of ours; a rotation signs with both secrets for 24 hours; the secret is sealed at rest and in
// no audit entry, log line or other read; subscriptions made before secrets existed get one.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { createReconcileActivities } from '../../activities/reconcile.ts';
import { venvBin } from '../../dev/temporal-cli.ts';
import { createSecretBox } from '../../domain/secret-box.ts';
import { newSubscriptionSecret } from '../../domain/subscription-secret.ts';
import { generateCodecKey } from '../../runtime/codec-keys.ts';
import { linkNow } from '../../store/audit-chainer.ts';
import { createSubscription } from '../../store/subscriptions.ts';
import { createEntities, donorAt, type Donor } from '../helpers/imports.ts';
import { startReceiver, type Received, type Receiver } from '../helpers/receiver.ts';
import { isolatedDatabaseUrl, startStack, testSealingRing, type Stack } from '../helpers/stack.ts';
import { createBusiness } from '../../store/businesses.ts';
import { connectDb, type Db } from '../../store/db.ts';
import type { CodecKey } from '../../runtime/codec-keys.ts';
import { eventually } from '../helpers/eventually.ts';

/** What PyPI's standardwebhooks says of a delivery, run as a receiver would run it. */
function verifyWithPython(secret: string, got: Received): Promise<string> {
  const script = [
    'import json, sys',
    'from standardwebhooks import Webhook',
    'm = json.load(sys.stdin)',
    'try:',
    "    print('verified', Webhook(m['secret']).verify(m['body'], m['headers'])['data']['eventId'])",
    'except Exception as e:',
    "    print('refused', type(e).__name__)",
  ].join('\n');
  const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(got.headers[h])]));
  return new Promise((resolve, reject) => {
    const child = execFile(path.join(venvBin, 'python'), ['-c', script], (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout.trim())));
    child.stdin!.end(JSON.stringify({ secret, body: got.body.toString(), headers }));
  });
}

const v1Count = (got: Received) =>
  String(got.headers['webhook-signature'])
    .split(' ')
    .filter((s) => s.startsWith('v1,')).length;

describe('subscription secrets', () => {
  let stack: Stack;
  let key: string;
  let businessId: string;
  let other: string;
  let donor: Donor;
  let receiver: Receiver;
  let n = 0;

  before(async () => {
    stack = await startStack({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', SYNC_IMPORT_RATE_LIMIT_PER_SECOND: '100' } });
    ({ apiKey: key, businessId } = await stack.newBusiness());
    ({ apiKey: other } = await stack.newBusiness());
    donor = donorAt(stack);
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await stack.close();
  });
  afterEach(async () => {
    await stack.db.query('DELETE FROM notification_subscriptions WHERE business_id = $1', [businessId]);
  });

  const subscribe = async (url = receiver.url) => {
    const res = await stack.request('POST', '/notification', {
      key,
      json: { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: url },
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    return res.body as { id: string; secret: string };
  };
  /** Onboards one cardholder; resolves with the delivery of its decision. */
  const delivery = async (): Promise<Received> => {
    const seen = receiver.received.length;
    const externalId = `secret-${n++}`;
    await createEntities(stack, key, [externalId]);
    const res = await stack.request('POST', '/entity/kyc/import/sync', { key, json: { externalId, shareToken: await donor.token('complete') } });
    assert.equal(res.status, 200, res.text);
    return (await receiver.waitFor(seen + 1))[seen]!;
  };

  it('answers the secret on creation and GET …/secret alone, and signs each delivery so both reference libraries verify it', async () => {
    const sub = await subscribe();
    assert.match(sub.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const read = await stack.request('GET', `/notification/${sub.id}/secret`, { key });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body, { secret: sub.secret, previousSecretExpiresAt: null });
    assert.equal(read.headers.get('cache-control'), 'no-store', 'no cache on the way keeps it');
    for (const p of [`/notification/${sub.id}`, '/notification']) {
      const res = await stack.request('GET', p, { key, headers: { 'accept-version': 'v1.0' } });
      assert.equal(res.status, 200);
      assert.ok(!res.text.includes(sub.secret.slice(6)) && !res.text.includes('secret'), `${p} shows no secret`);
    }
    assert.equal((await stack.request('GET', `/notification/${sub.id}/secret`, { key: other })).status, 404, "another business's subscription");
    assert.equal((await stack.request('POST', `/notification/${sub.id}/secret/rotate`, { key: other })).status, 404, 'nor rotates it');
    assert.equal((await stack.request('GET', `/notification/${sub.id}/secret`, { key })).body.secret, sub.secret, 'unchanged');

    const got = await delivery();
    assert.equal(v1Count(got), 1);
    assert.match(String(got.headers['webhook-signature']), /^v1,\S+ v1a,\S+$/, 'the v1 HMAC beside the environment-wide v1a');
    const event = new Webhook(sub.secret).verify(got.body.toString(), got.headers as Record<string, string>) as { data: { eventId: string } };
    assert.equal(await verifyWithPython(sub.secret, got), `verified ${event.data.eventId}`);
    // another subscription's secret (its own, of the same business) verifies nothing of this one's
    const second = await subscribe();
    assert.throws(() => new Webhook(second.secret).verify(got.body.toString(), got.headers as Record<string, string>), /No matching signature/);
    assert.equal(await verifyWithPython(second.secret, got), 'refused WebhookVerificationError');
    const forged = { ...got, body: Buffer.from(got.body.toString().replace('APPROVED', 'REJECTED')) };
    assert.equal(await verifyWithPython(sub.secret, forged), 'refused WebhookVerificationError');
  });

  it('keeps the secret sealed at rest, and out of the audit log and the logs', async () => {
    const sub = await subscribe();
    await stack.request('POST', `/notification/${sub.id}/secret/rotate`, { key });
    const { secret } = (await stack.request('GET', `/notification/${sub.id}/secret`, { key })).body as { secret: string };
    const raw = sub.secret.slice(6);
    const [row] = await stack.db.query<{ t: string }>('SELECT row_to_json(s)::text AS t FROM notification_subscriptions s WHERE id = $1', [sub.id]);
    assert.match(row!.t, /"secret_sealed":"v1\./);
    for (const s of [raw, secret.slice(6), Buffer.from(raw, 'base64').toString('hex')]) assert.ok(!row!.t.includes(s), 'the row holds no secret');
    await linkNow(stack.db, businessId); // entries waiting to be chained (store/audit-chainer.ts) into the log
    const audit = await stack.db.query<{ t: string; action: string }>(
      "SELECT action, row_to_json(a)::text AS t FROM audit_log a WHERE business_id = $1 AND subject_id = $2 AND action LIKE 'subscription.%'",
      [businessId, sub.id],
    );
    assert.deepEqual(audit.map((a) => a.action).sort(), ['subscription.created', 'subscription.secret_read', 'subscription.secret_rotated']);
    for (const a of audit) assert.ok(!a.t.includes(raw) && !a.t.includes(secret.slice(6)), `${a.action} names no secret`);
    const logs = JSON.stringify(stack.logs);
    assert.ok(!logs.includes(raw) && !logs.includes(secret.slice(6)), 'no log line names a secret');
  });

  it('signs with the new secret and the one it replaced for 24 hours after a rotation, then with the new one alone', async () => {
    const sub = await subscribe();
    const before = Date.now();
    const rotated = await stack.request('POST', `/notification/${sub.id}/secret/rotate`, { key });
    assert.equal(rotated.status, 200, rotated.text);
    const { secret, previousSecretExpiresAt } = rotated.body as { secret: string; previousSecretExpiresAt: string };
    assert.notEqual(secret, sub.secret);
    const overlap = Date.parse(previousSecretExpiresAt) - before;
    assert.ok(overlap > 23.9 * 3_600_000 && overlap < 24.1 * 3_600_000, `24 hours, not ${overlap} ms`);
    assert.deepEqual((await stack.request('GET', `/notification/${sub.id}/secret`, { key })).body, { secret, previousSecretExpiresAt });

    const during = await delivery();
    assert.equal(v1Count(during), 2);
    for (const s of [secret, sub.secret]) assert.match(await verifyWithPython(s, during), /^verified /);

    // a second rotation within the window ends the oldest secret at once
    const again = (await stack.request('POST', `/notification/${sub.id}/secret/rotate`, { key })).body as { secret: string };
    const next = await delivery();
    assert.equal(v1Count(next), 2);
    assert.match(await verifyWithPython(again.secret, next), /^verified /);
    assert.match(await verifyWithPython(secret, next), /^verified /);
    assert.equal(await verifyWithPython(sub.secret, next), 'refused WebhookVerificationError');

    // the window over (as 24 hours later), the replaced secret signs no more
    await stack.db.query("UPDATE notification_subscriptions SET previous_secret_until = now() - interval '1 second' WHERE id = $1", [sub.id]);
    const later = await delivery();
    assert.equal(v1Count(later), 1);
    assert.match(await verifyWithPython(again.secret, later), /^verified /);
    assert.equal(await verifyWithPython(secret, later), 'refused WebhookVerificationError');
    assert.equal((await stack.request('GET', `/notification/${sub.id}/secret`, { key })).body.previousSecretExpiresAt, null);
    assert.equal((await stack.request('POST', `/notification/${crypto.randomUUID()}/secret/rotate`, { key })).status, 404);
  });

  it('sends without the v1 signature, and logs why, when its sealed secret does not open (a ring without its key)', async () => {
    const sub = await subscribe();
    const elsewhere = createSecretBox([generateCodecKey('elsewhere')]).seal(sub.id, newSubscriptionSecret());
    await stack.db.query('UPDATE notification_subscriptions SET secret_sealed = $2 WHERE id = $1', [sub.id, elsewhere]);
    const got = await delivery();
    assert.match(String(got.headers['webhook-signature']), /^v1a,\S+$/, 'delivered all the same, with the keys only we hold');
    // logged when the attempt's answer comes back, which is after the receiver has the request
    await eventually('the cause logged', () =>
      stack.logs.some(
        (l) => l.msg === 'sent without the v1 signature' && l.subscriptionId === sub.id && /not in the payload codec key ring/.test(String(l.err)),
      ),
    );
  });

  it('a sealed secret copied onto another subscription opens for neither (not even once opened for its own)', async () => {
    const second = await startReceiver();
    try {
      const a = await subscribe();
      const b = await subscribe(second.url);
      const seenA = receiver.received.length;
      await delivery(); // A's secret opened (and kept) by the dispatcher
      await second.waitFor(1);
      const [{ s: sealedA }] = (await stack.db.query<{ s: string }>('SELECT secret_sealed AS s FROM notification_subscriptions WHERE id = $1', [a.id])) as [
        { s: string },
      ];
      await stack.db.query('UPDATE notification_subscriptions SET secret_sealed = $2 WHERE id = $1', [b.id, sealedA]);
      await delivery();
      const [toB] = (await second.waitFor(2)).slice(1);
      assert.match(String(toB!.headers['webhook-signature']), /^v1a,\S+$/, "B's delivery carries no v1 under A's secret");
      assert.equal(await verifyWithPython(a.secret, toB!), 'refused WebhookVerificationError');
      assert.ok(receiver.received.length >= seenA + 2);
      assert.equal((await stack.request('GET', `/notification/${b.id}/secret`, { key })).status, 500, "nor does the API hand it out as B's");
    } finally {
      await second.close();
    }
  });

  it('gives a secret to a subscription made before secrets existed at its first GET …/secret', async () => {
    const input = { notificationChannel: 'WEBHOOK' as const, notificationTypes: ['account_status_change' as const], webhookUrl: receiver.url };
    const a = await createSubscription(stack.db, businessId, input);
    // a delivery to one without a secret yet carries v1a alone (as before this release)
    const bare = await delivery();
    assert.match(String(bare.headers['webhook-signature']), /^v1a,\S+$/);
    const read = await stack.request('GET', `/notification/${a.id}/secret`, { key });
    assert.equal(read.status, 200);
    assert.match(read.body.secret, /^whsec_/);
    assert.equal((await stack.request('GET', `/notification/${a.id}/secret`, { key })).body.secret, read.body.secret, 'given once');
    assert.match(await verifyWithPython(read.body.secret, await delivery()), /^verified /);
  });
});

// The reconciler on a database of its own (it looks at every subscription of the database it is given).
describe('the reconciler and subscription secrets', () => {
  let db: Db;
  before(async () => {
    db = connectDb(await isolatedDatabaseUrl(), 2);
  });
  after(async () => db?.close());

  it('gives every subscription made before secrets existed one, and seals every secret again under a new first key of the ring', async () => {
    const { business } = await createBusiness(db, { name: 'Older', binSponsored: false, environment: 'sandbox' });
    const input = { notificationChannel: 'WEBHOOK' as const, notificationTypes: ['account_status_change' as const], webhookUrl: 'https://93.184.216.34/hook' };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createSubscription(db, business.id, input)).id);
    const sealedOf = async () =>
      await db.query<{ s: string | null; p: string | null }>(
        'SELECT secret_sealed AS s, previous_secret_sealed AS p FROM notification_subscriptions WHERE id = ANY ($1::uuid[]) ORDER BY id',
        [ids],
      );
    const reconcile = (ring: CodecKey[]) =>
      createReconcileActivities({ db, log: pino({ level: 'silent' }), webhookKeys: { sealing: ring }, runs: never(), start: never() }).reconcileDeliveries();
    const old = testSealingRing();
    await reconcile(old);
    const first = await sealedOf();
    const oldBox = createSecretBox(old);
    assert.ok(
      first.every((r) => r.s!.startsWith(oldBox.sealingPrefix)),
      'each given one',
    );
    const secrets = ids.sort().map((id, i) => oldBox.open(id, first[i]!.s!));
    // a rotation of the payload codec ring (a new key first): every secret sealed again under it, the same secret
    const rotated = [generateCodecKey('next'), ...old];
    const newBox = createSecretBox(rotated);
    await reconcile(rotated);
    const again = await sealedOf();
    assert.ok(again.every((r) => r.s!.startsWith(newBox.sealingPrefix)));
    assert.deepEqual(
      ids.map((id, i) => newBox.open(id, again[i]!.s!)),
      secrets,
    );
    assert.throws(() => createSecretBox([rotated[0]!]).open(ids[0]!, first[0]!.s!), 'the old sealing needed the old key');
    assert.equal(createSecretBox([rotated[0]!]).open(ids[0]!, again[0]!.s!), secrets[0], 'the new one does not');
  });
});

const never = () => new Proxy({}, { get: () => () => assert.fail('not used') }) as never;
