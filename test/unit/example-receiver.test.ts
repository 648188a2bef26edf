// The example receiver: answers 200 to a signed event, 401 to a bad signature, and handles each
// eventId once however often it arrives.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { publicKeyOf, signingKeyAt, signWebhookBody } from '../../domain/webhook-signature.ts';
import { createWebhookReceiver, type VouchEvent } from '../../receiver/example-receiver.ts';
import { testKeyRing } from '../helpers/stack.ts';

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
  const body = JSON.stringify({ eventName: 'card_issuance_api_access_updated', eventType: 'account_status_change', data: { eventId: 'e-1', entityId: 'x', status: 'APPROVED' } });
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
