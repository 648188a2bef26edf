// Keys that never run out (issue 19.6): a rotation adds the next generation with an overlap; the
// clock fixed on both sides of a switch shows which key signs, and a receiver holding the public
// keys published at the rotation verifies across it while one holding only the old key does not;
// exactly one key signs at any instant (issue 38, item 1); the sandbox renews its rings before they end (once, however many
// processes start together); a process refuses to start with no key valid now; /health warns 30
// days before a ring ends; `vouch webhook-keys rotate` writes the file (mode 600) and prints the
// new public keys.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { GENERATION_DAYS, OVERLAP_DAYS, ringEndsAt } from '../../domain/key-rotation.ts';
import { signPayload, isValidPayload } from '../../domain/signed-payload.ts';
import { publicKeyOf, signingKeyAt, signWebhookBody, type SigningKey } from '../../domain/webhook-signature.ts';
import { standardWebhookPublicKeyOf } from '../../domain/standard-webhooks.ts';
import { verifyWebhook } from '../../receiver/verify-webhook.ts';
import { ConfigError, loadConfig } from '../../runtime/config.ts';
import { generateKeyRing, keyRingFile, loadKeyRing, loadKeyRings, loadSigningRing, withNextGeneration } from '../../runtime/signing-keys.ts';
import { checkSigningKeys } from '../../usecases/health.ts';
import { checkpointPublicKeyOf } from '../../domain/audit-checkpoint.ts';

const DAY = 86_400_000;
const dir = mkdtempSync(path.join(tmpdir(), 'vouch-key-rotation-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const configIn = (environment = 'sandbox') => {
  const dataDir = path.join(dir, `d${n++}`);
  mkdirSync(dataDir, { mode: 0o700 });
  return loadConfig({ DATA_DIR: dataDir, VOUCH_ENVIRONMENT: environment });
};
const windowsOf = (ring: readonly SigningKey[]) => ring.map((k) => `${k.validFrom.slice(0, 10)}..${k.validUntil.slice(0, 10)}`);

describe('signing key rotation', () => {
  const ring = generateKeyRing('webhook', 'sandbox');
  const end = ringEndsAt(ring); // the interface's second pair ends 2027-10-01
  const rotatedAt = new Date(end.getTime() - 60 * DAY);
  const rotated = withNextGeneration('webhook', 'sandbox', ring, rotatedAt);
  const body = JSON.stringify({ eventName: 'card_issuance_api_access_updated', eventType: 'account_status_change', data: { eventId: 'e' } });

  it('adds a pair valid from 30 days before the ring ends, for 13 months', () => {
    assert.equal(rotated.length, ring.length + 2);
    const added = rotated.slice(ring.length);
    assert.deepEqual(new Set(added.map((k) => k.validFrom)), new Set([new Date(end.getTime() - OVERLAP_DAYS * DAY).toISOString()]));
    assert.deepEqual(new Set(added.map((k) => k.validUntil)), new Set([new Date(end.getTime() + (GENERATION_DAYS - OVERLAP_DAYS) * DAY).toISOString()]));
    assert.notEqual(added[0]!.keyId, added[1]!.keyId);
    // a ring that already ended starts its next generation now, not in the past
    const late = new Date(end.getTime() + 10 * DAY);
    assert.equal(withNextGeneration('webhook', 'sandbox', ring, late).at(-1)!.validFrom, late.toISOString());
  });

  it(
    "with the clock fixed on both sides of the switch: one key signs until its successor's validFrom, the successor after; a " +
      'receiver holding the published keys verifies both, one holding only the key that signed before fails after',
    () => {
      const switchAt = Date.parse(rotated[ring.length]!.validFrom); // the new pair's start, 30 days before the old one ends
      const before = new Date(switchAt - 1000);
      const afterSwitch = new Date(switchAt + 1000);
      const published = rotated.map((k) => publicKeyOf(k).publicKeyPem); // GET /webhook-keys after the rotation
      const signedBefore = signingKeyAt(rotated, before);
      const signedAfter = signingKeyAt(rotated, afterSwitch);
      assert.ok(
        ring.some((k) => k.keyId === signedBefore.keyId),
        'an old key until the switch',
      );
      assert.ok(
        rotated.slice(ring.length).some((k) => k.keyId === signedAfter.keyId),
        'a new key from it',
      );
      const installed = [publicKeyOf(signedBefore).publicKeyPem]; // "the public key matching the environment" (5.4)
      for (const [at, key] of [
        [before, signedBefore],
        [afterSwitch, signedAfter],
      ] as const) {
        const signature = signWebhookBody(body, key.privateKeyPem);
        assert.equal(verifyWebhook(body, signature, published), true);
        assert.equal(verifyWebhook(body, signature, installed), at === before);
      }
    },
  );

  it('exactly one key signs at any instant, for every event and attempt: a receiver with that one public key verifies them all', () => {
    for (const at of [new Date(end.getTime() - 100 * DAY), new Date(Date.parse(rotated[ring.length]!.validFrom) + DAY)]) {
      const signing = signingKeyAt(rotated, at);
      const installed = [publicKeyOf(signing).publicKeyPem];
      for (let i = 0; i < 20; i++) {
        const b = JSON.stringify({ eventName: 'card_issuance_api_access_updated', eventType: 'account_status_change', data: { eventId: `event-${i}` } });
        assert.equal(signingKeyAt(rotated, new Date(at.getTime() + i * 60_000)).keyId, signing.keyId);
        assert.equal(verifyWebhook(b, signWebhookBody(b, signingKeyAt(rotated, at).privateKeyPem), installed), true, `event-${i}`);
      }
    }
  });

  it("the signing key does not depend on the keys' order in the ring, nor on their dates' spelling", () => {
    for (const at of [new Date(end.getTime() - 100 * DAY), new Date(end.getTime() - 1000), new Date(end.getTime() + 1000)]) {
      const reordered = [...rotated].reverse().map((k) => ({ ...k, validUntil: k.validUntil.replace('.000Z', 'Z') }));
      assert.equal(signingKeyAt(reordered, at).keyId, signingKeyAt(rotated, at).keyId, at.toISOString());
    }
  });

  it('/health warns before a gap in a ring, not only before its end', () => {
    const now = new Date(ring[2]!.validFrom);
    const gapAt = new Date(end.getTime());
    // the next generation starts a week after the current one ends: a gap
    const gapped = [...ring, ...withNextGeneration('webhook', 'sandbox', ring, new Date(end.getTime() + 7 * DAY)).slice(ring.length)];
    const rings = {
      webhooks: gapped.map(publicKeyOf),
      standardWebhooks: generateKeyRing('standard-webhook', 'sandbox', now).map(standardWebhookPublicKeyOf),
      signedPayloads: generateKeyRing('signed-payload', 'sandbox', now),
      auditCheckpoints: generateKeyRing('audit-checkpoint', 'sandbox', now).map(checkpointPublicKeyOf),
      sealing: [],
    };
    const warned = checkSigningKeys(rings, new Date(gapAt.getTime() - 10 * DAY));
    assert.deepEqual(warned, { status: 'degraded', endsAt: gapAt.toISOString() });
  });

  it('signed payloads across a switch of the Ed25519 ring: signed by the key valid then, valid until expiry with either', () => {
    const payloadRing = generateKeyRing('signed-payload', 'sandbox', new Date('2026-01-01T00:00:00Z'));
    const switchAt = Date.parse(payloadRing[1]!.validFrom); // the successor takes over at its start (the first key stays valid a year more)
    const person = {
      firstName: 'Ada',
      lastName: 'Lovelace',
      dob: '1990-01-01',
      residentialAddress: { country: 'GBR', postCode: 'N1', street: '1 Road' },
      idDocument: { type: 'PASSPORT', number: 'P1', validUntil: null },
    };
    const early = signPayload(person as never, payloadRing, new Date(switchAt - 60_000), 3600);
    const late = signPayload(person as never, payloadRing, new Date(switchAt + 60_000), 3600);
    assert.notEqual(early.keyId, late.keyId);
    assert.equal(isValidPayload(early as never, payloadRing, new Date(switchAt + 1000)), true, 'an earlier key still checks what it signed');
    assert.equal(isValidPayload(late as never, payloadRing, new Date(switchAt + 1000)), true);
  });

  it('/health: signingKeys ok until 30 days before a ring ends, then degraded (the ring end named)', () => {
    const rings = {
      webhooks: rotated.map(publicKeyOf),
      standardWebhooks: generateKeyRing('standard-webhook', 'sandbox').map(standardWebhookPublicKeyOf),
      signedPayloads: generateKeyRing('signed-payload', 'sandbox'),
      auditCheckpoints: generateKeyRing('audit-checkpoint', 'sandbox').map(checkpointPublicKeyOf),
      sealing: [],
    };
    const newEnd = ringEndsAt(rotated);
    assert.equal(checkSigningKeys(rings, new Date(newEnd.getTime() - 31 * DAY)).status, 'ok');
    const warned = checkSigningKeys(rings, new Date(newEnd.getTime() - 29 * DAY));
    assert.deepEqual(warned, { status: 'degraded', endsAt: newEnd.toISOString() });
  });

  it(
    'the sandbox renews a ring ending within 60 days once, however many start together (a lock ' +
      'file: processes alike); a ring far from its end is left as it is',
    async () => {
      const config = configIn();
      const file = keyRingFile(config, 'standard-webhook');
      const now = new Date();
      const old = generateKeyRing('standard-webhook', 'sandbox', new Date(now.getTime() - 700 * DAY)); // its last key ends in ~395 days
      const ending = old.map((k) => ({ ...k, validUntil: new Date(now.getTime() + 20 * DAY).toISOString() }));
      writeFileSync(file, JSON.stringify(ending), { mode: 0o600 });
      const rings = await Promise.all(Array.from({ length: 6 }, () => loadSigningRing(config, 'standard-webhook', now)));
      assert.ok(
        rings.every((r) => r.length === ending.length + 1),
        `renewed once: ${rings.map((r) => r.length)}`,
      );
      assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), rings[0]);
      assert.equal((statSync(file).mode & 0o777).toString(8), '600');
      const again = await loadSigningRing(config, 'standard-webhook', now);
      assert.equal(again.length, rings[0]!.length, 'not renewed twice');
    },
  );

  it('refuses to start with no key valid now (staging: keys are supplied, never renewed); loads a valid ring', async () => {
    const config = configIn('staging');
    const now = new Date();
    const expired = generateKeyRing('signed-payload', 'staging', new Date(now.getTime() - 2000 * DAY));
    writeFileSync(keyRingFile(config, 'signed-payload'), JSON.stringify(expired), { mode: 0o600 });
    await assert.rejects(
      loadSigningRing(config, 'signed-payload', now),
      (err: Error) => err instanceof ConfigError && /no signed-payload signing key is valid now/.test(err.message) && /rotate/.test(err.message),
    );
    // a ring whose first key has not started yet is refused too: nothing could sign today
    const future = generateKeyRing('signed-payload', 'staging', new Date(now.getTime() + 10 * DAY));
    writeFileSync(keyRingFile(config, 'signed-payload'), JSON.stringify(future), { mode: 0o600 });
    await assert.rejects(loadSigningRing(config, 'signed-payload', now), ConfigError);
    const sandbox = configIn();
    const rings = await loadKeyRings(sandbox, now);
    assert.ok(rings.webhooks.length >= 4);
  });

  it('vouch webhook-keys rotate: adds the next pair to the file (600) and prints its public keys; a ring from a variable is refused', async () => {
    const dataDir = path.join(dir, 'cli');
    const env = { ...process.env, DATA_DIR: dataDir, VOUCH_ENVIRONMENT: 'sandbox', WEBHOOK_SIGNING_KEYS: '' };
    const run = (args: string[], extra: Record<string, string> = {}) =>
      promisify(execFile)(process.execPath, ['cli/vouch.ts', ...args], { env: { ...env, ...extra } });
    const made = JSON.parse((await run(['webhook-keys', 'generate'])).stdout);
    const rotatedOut = JSON.parse((await run(['webhook-keys', 'rotate'])).stdout);
    assert.equal(rotatedOut.file, made.file);
    assert.equal(rotatedOut.added.length, 2);
    assert.match(rotatedOut.added[0].publicKeyPem, /BEGIN PUBLIC KEY/);
    assert.ok(!JSON.stringify(rotatedOut).includes('PRIVATE'), 'no private key printed');
    const onDisk = await loadKeyRing(loadConfig({ DATA_DIR: dataDir }), 'webhook');
    assert.deepEqual(
      onDisk.slice(-2).map((k) => k.keyId),
      rotatedOut.added.map((k: { keyId: string }) => k.keyId),
    );
    assert.equal((statSync(made.file).mode & 0o777).toString(8), '600');
    assert.deepEqual(windowsOf(onDisk.slice(-2)), windowsOf(withNextGeneration('webhook', 'sandbox', onDisk.slice(0, -2), new Date()).slice(-2)));
    // run twice (a deploy script): the next generation is there already, nothing is stacked behind it
    const again = JSON.parse((await run(['webhook-keys', 'rotate'])).stdout);
    assert.deepEqual([again.added, again.next.map((k: { keyId: string }) => k.keyId)], [[], rotatedOut.added.map((k: { keyId: string }) => k.keyId)]);
    assert.equal((await loadKeyRing(loadConfig({ DATA_DIR: dataDir }), 'webhook')).length, onDisk.length);
    const forced = JSON.parse((await run(['webhook-keys', 'rotate', '--force'])).stdout);
    assert.equal(forced.added.length, 2);
    const refused = await run(['signed-payload-keys', 'rotate'], { SIGNED_PAYLOAD_KEYS: JSON.stringify(generateKeyRing('signed-payload', 'sandbox')) }).then(
      () => assert.fail('rotated a ring from a variable'),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /SIGNED_PAYLOAD_KEYS/);
  });
});
