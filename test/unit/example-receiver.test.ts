// The example receiver: answers 200 to a signed event, 401 to a bad signature, and handles each
// eventId once however often it arrives.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { standardWebhookSignature } from '../../domain/standard-webhooks.ts';
import { publicKeyOf, signingKeyAt, signWebhookBody } from '../../domain/webhook-signature.ts';
import { createWebhookReceiver, type VouchEvent } from '../../receiver/example-receiver.ts';
import { testKeyRing, testKeyRings, testStandardRing } from '../helpers/stack.ts';

const handled: VouchEvent[] = [];
let url: string;
let close: () => void;
before(async () => {
  const server = createWebhookReceiver({ publicKeys: testKeyRing().map((k) => publicKeyOf(k).publicKeyPem), onEvent: (e) => void handled.push(e) });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  close = () => server.close();
});
after(() => close());

const key = () => signingKeyAt(testKeyRing(), new Date());
const post = (body: string, signature: string | undefined) =>
  fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...(signature ? { 'vouch-signature': signature } : {}) } });

it('acknowledges a signed event and handles it once, however often it is delivered', async () => {
  const body = JSON.stringify({
    eventName: 'card_issuance_api_access_updated',
    eventType: 'account_status_change',
    data: { eventId: 'e-1', entityId: 'x', status: 'APPROVED' },
  });
  const sig = signWebhookBody(body, key().privateKeyPem);
  for (let i = 0; i < 3; i++) assert.equal((await post(body, sig)).status, 200);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(handled.filter((e) => e.data.eventId === 'e-1').length, 1);
});

it('refuses a missing or wrong signature and a tampered body with 401, handling nothing', async () => {
  const body = JSON.stringify({ eventName: 'x', eventType: 'y', data: { eventId: 'e-2', entityId: 'x', status: 'REJECTED' } });
  const sig = signWebhookBody(body, key().privateKeyPem);
  assert.equal((await post(body, undefined)).status, 401);
  assert.equal((await post(body.replace('REJECTED', 'APPROVED'), sig)).status, 401);
  assert.equal((await post(body, Buffer.from('not a signature').toString('base64'))).status, 401);
  assert.equal(handled.filter((e) => e.data.eventId === 'e-2').length, 0);
});

it('given the Standard Webhooks keys, refuses a delivery replayed after five minutes even with its signatures intact', async () => {
  const rings = testKeyRings();
  const strict = createWebhookReceiver({
    publicKeys: rings.webhooks.map((k) => k.publicKeyPem),
    standardKeys: rings.standardWebhooks.map((k) => k.publicKey),
    onEvent: () => {},
  });
  await new Promise<void>((r) => strict.listen(0, '127.0.0.1', () => r()));
  const at = `http://127.0.0.1:${(strict.address() as AddressInfo).port}/`;
  try {
    const body = JSON.stringify({ eventName: 'x', eventType: 'y', data: { eventId: 'e-3', entityId: 'x', status: 'APPROVED' } });
    const headersAt = (time: Date) => {
      const timestamp = String(Math.floor(time.getTime() / 1000));
      return {
        'content-type': 'application/json',
        'vouch-signature': signWebhookBody(body, key().privateKeyPem),
        'webhook-id': 'e-3',
        'webhook-timestamp': timestamp,
        'webhook-signature': standardWebhookSignature(testStandardRing(), { id: 'e-3', timestamp, body }, time),
      };
    };
    assert.equal((await fetch(at, { method: 'POST', body, headers: headersAt(new Date()) })).status, 200);
    assert.equal((await fetch(at, { method: 'POST', body, headers: headersAt(new Date(Date.now() - 600_000)) })).status, 401, 'captured ten minutes ago');
    const fresh = headersAt(new Date());
    assert.equal(
      (await fetch(at, { method: 'POST', body, headers: { ...fresh, 'webhook-signature': headersAt(new Date(Date.now() - 600_000))['webhook-signature'] } }))
        .status,
      401,
      'an old signature under a fresh timestamp',
    );
  } finally {
    strict.close();
  }
});

it('the signatures made off the event loop (as the dispatcher makes them) are the ones made on it, and verify', async () => {
  const { signWebhookBodyOffLoop } = await import('../../domain/webhook-signature.ts');
  const { standardWebhookSignatureOffLoop } = await import('../../domain/standard-webhooks.ts');
  const body = JSON.stringify({ eventType: 'account_status_change', data: { eventId: 'e-9', entityId: 'x', status: 'APPROVED' } });
  const offLoop = await signWebhookBodyOffLoop(body, key().privateKeyPem);
  assert.equal(offLoop, signWebhookBody(body, key().privateKeyPem), 'RSA PKCS#1 v1.5 is deterministic');
  assert.equal((await post(body, offLoop)).status, 200);
  const at = new Date();
  const message = { id: 'e-9', timestamp: String(Math.floor(at.getTime() / 1000)), body };
  const standard = testStandardRing();
  assert.equal(await standardWebhookSignatureOffLoop(standard, message, at), standardWebhookSignature(standard, message, at), 'Ed25519 is deterministic');
  assert.notEqual(await signWebhookBodyOffLoop(body + ' ', key().privateKeyPem), offLoop, 'a changed body, another signature');
});
