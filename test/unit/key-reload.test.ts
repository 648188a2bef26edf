// Keys reload without a restart (issue 38, item 7): a running process re-reads its rings (every
// minute; here on demand) and renews them in place, so a rotation reaches it and a process started
// long ago never stops signing when its ring rolls over; a ring that cannot be read again stays as
// it was.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { RENEW_DAYS, ringEndsAt } from '../../domain/key-rotation.ts';
import { signingKeyAt } from '../../domain/webhook-signature.ts';
import { loadConfig } from '../../runtime/config.ts';
import { keyRingFile, loadSigningRing, refreshRings, rotateKeyRing } from '../../runtime/signing-keys.ts';

const DAY = 86_400_000;
const dir = mkdtempSync(path.join(tmpdir(), 'vouch-key-reload-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const sandbox = () => {
  const dataDir = path.join(dir, `d${n++}`);
  mkdirSync(dataDir, { mode: 0o700 });
  return loadConfig({ DATA_DIR: dataDir, VOUCH_ENVIRONMENT: 'sandbox' });
};
const quiet = { info() {}, warn() {} };

describe('signing key rings reload', () => {
  it('a rotation reaches a running process: the same array holds the new generation, which signs from its start', async () => {
    const config = sandbox();
    const ring = await loadSigningRing(config, 'webhook');
    const held = ring; // what the webhook sender holds
    const refresher = refreshRings(config, { webhook: ring }, { log: quiet, everyMs: 3_600_000 });
    try {
      assert.equal(await refresher.reload(), 0, 'nothing changed yet');
      const before = ring.length;
      const { added } = await rotateKeyRing(config, 'webhook', new Date(), undefined, { force: true });
      assert.equal(await refresher.reload(), 1);
      assert.equal(held.length, before + added.length, 'the holder sees the rotated ring');
      const from = new Date(Date.parse(added[0]!.validFrom) + 1000);
      assert.ok(
        added.some((k) => k.keyId === signingKeyAt(held, from).keyId),
        'the new generation signs from its validFrom',
      );
    } finally {
      refresher.stop();
    }
  });

  it('a process started long ago renews its ring as it nears its end, and never stops signing', async () => {
    const config = sandbox();
    const ring = await loadSigningRing(config, 'standard-webhook');
    const end = ringEndsAt(ring);
    let clock = new Date();
    const refresher = refreshRings(config, { 'standard-webhook': ring }, { log: quiet, everyMs: 3_600_000, now: () => clock });
    try {
      assert.throws(() => signingKeyAt(ring, new Date(end.getTime() + DAY)), /no signing key/, 'as started, nothing signs after its end');
      clock = new Date(end.getTime() - (RENEW_DAYS - 1) * DAY); // months later, the ring ends within RENEW_DAYS
      assert.equal(await refresher.reload(), 1);
      assert.ok(signingKeyAt(ring, new Date(end.getTime() + DAY)), 'a key signs after the old end');
    } finally {
      refresher.stop();
    }
  });

  it('keeps the ring as it was when its file cannot be read again, and says so', async () => {
    const config = sandbox();
    const ring = await loadSigningRing(config, 'webhook');
    const ids = ring.map((k) => k.keyId);
    const warnings: string[] = [];
    const refresher = refreshRings(config, { webhook: ring }, { everyMs: 3_600_000, log: { info() {}, warn: (_o, m) => void warnings.push(m) } });
    try {
      writeFileSync(keyRingFile(config, 'webhook'), '[{"keyId": "half written"');
      assert.equal(await refresher.reload(), 0);
      assert.deepEqual(
        ring.map((k) => k.keyId),
        ids,
      );
      assert.equal(warnings.length, 1);
    } finally {
      refresher.stop();
    }
  });
});
