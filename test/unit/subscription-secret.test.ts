// A subscription's secret (issue 38, item 2): the `v1,` HMAC that the Standard Webhooks reference
// library (npm `standardwebhooks`, as a receiver installs it) verifies, and the secret sealed at rest.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createSecretBox } from '../../domain/secret-box.ts';
import { hmacSignatures, newSubscriptionSecret } from '../../domain/subscription-secret.ts';
import { generateCodecKey } from '../../runtime/codec-keys.ts';

describe('subscription secrets', () => {
  const message = () => ({ id: randomUUID(), timestamp: String(Math.floor(Date.now() / 1000)), body: JSON.stringify({ eventName: 'x', data: { a: 'é' } }) });
  const headersOf = (m: ReturnType<typeof message>, signature: string) => ({
    'webhook-id': m.id,
    'webhook-timestamp': m.timestamp,
    'webhook-signature': signature,
  });

  it('makes whsec_ secrets of 32 random bytes, each different', () => {
    const a = newSubscriptionSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(a.slice(6), 'base64').length, 32);
    assert.notEqual(a, newSubscriptionSecret());
  });

  it('signs v1 so that the standardwebhooks library verifies it, beside a v1a it skips; another secret, body or timestamp fails', () => {
    const secret = newSubscriptionSecret();
    const m = message();
    const header = `${hmacSignatures([secret], m)} v1a,${Buffer.alloc(64).toString('base64')}`;
    assert.deepEqual(new Webhook(secret).verify(m.body, headersOf(m, header)), JSON.parse(m.body));
    assert.throws(() => new Webhook(newSubscriptionSecret()).verify(m.body, headersOf(m, header)), /No matching signature/);
    assert.throws(() => new Webhook(secret).verify(m.body.replace('x', 'y'), headersOf(m, header)), /No matching signature/);
    assert.throws(() => new Webhook(secret).verify(m.body, { ...headersOf(m, header), 'webhook-timestamp': String(Number(m.timestamp) - 1) }), /No matching/);
  });

  it('signs with every secret in force (a rotation): each verifies', () => {
    const [current, previous] = [newSubscriptionSecret(), newSubscriptionSecret()];
    const m = message();
    const header = hmacSignatures([current, previous], m);
    assert.equal(header.split(' ').length, 2);
    assert.ok(new Webhook(current).verify(m.body, headersOf(m, header)));
    assert.ok(new Webhook(previous).verify(m.body, headersOf(m, header)));
  });

  it('seals a secret so that only the ring opens it, and only for its own subscription', () => {
    const old = generateCodecKey('test');
    const current = generateCodecKey('test');
    const secret = newSubscriptionSecret();
    const [mine, other] = [randomUUID(), randomUUID()];
    const sealedByOld = createSecretBox([old]).seal(mine, secret);
    assert.ok(!sealedByOld.includes(secret) && !sealedByOld.includes(secret.slice(6)), 'nothing of the secret in the sealed form');
    assert.match(sealedByOld, new RegExp(`^v1\\.${old.id}\\.`));
    const box = createSecretBox([current, old]);
    assert.equal(box.open(mine, sealedByOld), secret, 'an older key of the ring still opens');
    assert.match(box.seal(mine, secret), new RegExp(`^v1\\.${current.id}\\.`), 'the first key seals');
    assert.throws(() => box.open(other, sealedByOld), 'copied onto another subscription it does not open');
    assert.throws(() => createSecretBox([current]).open(mine, sealedByOld), /not in the payload codec key ring/);
    // a ring key id may hold dots (runtime/codec-keys.ts allows them)
    const dotted = { ...generateCodecKey('test'), id: 'prod.2026-11.a' };
    const dottedBox = createSecretBox([dotted]);
    assert.equal(dottedBox.open(mine, dottedBox.seal(mine, secret)), secret);
    assert.ok(dottedBox.seal(mine, secret).startsWith(dottedBox.sealingPrefix));
    const tampered = sealedByOld.slice(0, -4) + (sealedByOld.endsWith('AAA=') ? 'BBB=' : 'AAA=');
    assert.throws(() => box.open(mine, tampered));
  });
});
