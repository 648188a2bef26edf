// The webhook signing key ring of this environment. From WEBHOOK_SIGNING_KEYS (JSON) or the file
// WEBHOOK_SIGNING_KEYS_FILE (default DATA_DIR/webhook-signing-keys.json). In the sandbox, a missing
// file is generated on first start, in the interface's pattern — two keys valid until 30 Sep 2026 and
// two from 1 Oct 2026 — and never committed (DATA_DIR is git-ignored). Production must supply keys.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SigningKey } from '../domain/webhook-signature.ts';
import { ConfigError, type Config } from './config.ts';

const DEV_WINDOWS = [
  { validFrom: '2025-05-31T00:00:00.000Z', validUntil: '2026-10-01T00:00:00.000Z' },
  { validFrom: '2025-05-31T00:00:00.000Z', validUntil: '2026-10-01T00:00:00.000Z' },
  { validFrom: '2026-10-01T00:00:00.000Z', validUntil: '2027-10-01T00:00:00.000Z' },
  { validFrom: '2026-10-01T00:00:00.000Z', validUntil: '2027-10-01T00:00:00.000Z' },
];

function parseRing(json: string, where: string): SigningKey[] {
  let ring: unknown;
  try {
    ring = JSON.parse(json);
  } catch {
    throw new ConfigError(`${where} is not valid JSON`);
  }
  if (!Array.isArray(ring) || ring.length === 0 || !ring.every((k) => k && typeof k.keyId === 'string' && typeof k.privateKeyPem === 'string' && !Number.isNaN(Date.parse(k.validFrom)) && !Number.isNaN(Date.parse(k.validUntil)))) {
    throw new ConfigError(`${where} must be a non-empty array of { keyId, privateKeyPem, validFrom, validUntil }`);
  }
  return ring as SigningKey[];
}

/** A ring in the interface's pattern (two keys per window); used for the sandbox and by `vouch webhook-keys generate`. */
export function generateDevKeyRing(environment: string): SigningKey[] {
  return DEV_WINDOWS.map((w, i) => ({
    keyId: `${environment}-${w.validFrom.slice(0, 7)}-${i % 2 === 0 ? 'a' : 'b'}-${randomBytes(3).toString('hex')}`,
    privateKeyPem: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    ...w,
  }));
}

export async function loadWebhookKeyRing(config: Config): Promise<SigningKey[]> {
  if (config.webhooks.signingKeysJson) return parseRing(config.webhooks.signingKeysJson, 'WEBHOOK_SIGNING_KEYS');
  const file = config.webhooks.signingKeysFile ?? path.join(config.dataDir, 'webhook-signing-keys.json');
  try {
    return parseRing(await readFile(file, 'utf8'), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (config.environment !== 'sandbox') {
    throw new ConfigError(`no webhook signing keys: set WEBHOOK_SIGNING_KEYS or WEBHOOK_SIGNING_KEYS_FILE (${file} does not exist)`);
  }
  const ring = generateDevKeyRing(config.environment);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(ring, null, 2), { mode: 0o600 });
  return ring;
}
