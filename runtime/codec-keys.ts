// The payload codec key ring: every Temporal payload is encrypted with it (temporal/payload-codec.ts),
// and each webhook subscription's secret is sealed at rest under a key derived from it
// (domain/secret-box.ts). Every API and worker process holds it.
//
// PAYLOAD_CODEC_KEYS (JSON) or PAYLOAD_CODEC_KEYS_FILE (default DATA_DIR/payload-codec-keys.json),
// [{ "id": "…", "key": "<32 bytes, base64>", "createdAt": "…" }, …]. The sandbox generates one on
// first start (never committed); other environments must supply theirs.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, type Config } from './config.ts';
import { readOrCreateOnce, replaceAtomically } from './secret-file.ts';

export type CodecKey = { id: string; key: Buffer; createdAt: string };

/** A new key (32 random bytes) with an id that says when it was made. */
export function generateCodecKey(environment: string, now = new Date()): CodecKey {
  return { id: `${environment}-${now.toISOString().slice(0, 10)}-${randomBytes(3).toString('hex')}`, key: randomBytes(32), createdAt: now.toISOString() };
}

const serialise = (ring: readonly CodecKey[]) =>
  JSON.stringify(
    ring.map((k) => ({ id: k.id, key: k.key.toString('base64'), createdAt: k.createdAt })),
    null,
    2,
  );

function parseRing(json: string, where: string): CodecKey[] {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new ConfigError(`${where}: not JSON`);
  }
  if (!Array.isArray(raw) || raw.length === 0) throw new ConfigError(`${where}: a non-empty array of { id, key, createdAt }`);
  return raw.map((k, i) => {
    const key = Buffer.from(String((k as { key?: unknown }).key ?? ''), 'base64');
    const id = (k as { id?: unknown }).id;
    if (typeof id !== 'string' || !/^[\w.-]{1,64}$/.test(id)) throw new ConfigError(`${where}[${i}].id: 1 to 64 letters, digits, dots, dashes or underscores`);
    if (key.length !== 32) throw new ConfigError(`${where}[${i}].key: 32 bytes, base64`);
    return { id, key, createdAt: String((k as { createdAt?: unknown }).createdAt ?? '') };
  });
}

/** Where the ring's file is (the setting, or its default under DATA_DIR). */
export const codecKeysFile = (config: Config) => config.payloadCodec.keysFile ?? path.join(config.dataDir, 'payload-codec-keys.json');

/** The ring from its variable or file; in the sandbox a missing file is made (once, even when processes race). */
export async function loadCodecKeys(config: Config, options: { generateMissing?: boolean } = {}): Promise<CodecKey[]> {
  return readCodecKeys(config, options);
}

/** loadCodecKeys, synchronously (the file is small and read once per process). */
export function readCodecKeys(config: Config, options: { generateMissing?: boolean } = {}): CodecKey[] {
  if (config.payloadCodec.keysJson && !options.generateMissing) return parseRing(config.payloadCodec.keysJson, 'PAYLOAD_CODEC_KEYS');
  const file = codecKeysFile(config);
  const make = () => {
    if (!(options.generateMissing ?? config.environment === 'sandbox'))
      throw new ConfigError(`no payload codec keys: set PAYLOAD_CODEC_KEYS or PAYLOAD_CODEC_KEYS_FILE (${file} does not exist)`);
    return serialise([generateCodecKey(config.environment)]);
  };
  return parseRing(readOrCreateOnce(file, make), file);
}

/** Rotation: a new key first (it encrypts from now on), the old ones kept (they still decrypt). */
export async function rotateCodecKeys(config: Config): Promise<{ file: string; keyIds: string[] }> {
  if (config.payloadCodec.keysJson) throw new ConfigError('PAYLOAD_CODEC_KEYS is set: rotate it where it is kept (prepend a new key)');
  const file = codecKeysFile(config);
  let ring: CodecKey[] = [];
  try {
    ring = parseRing(await readFile(file, 'utf8'), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const next = [generateCodecKey(config.environment), ...ring];
  replaceAtomically(file, serialise(next));
  return { file, keyIds: next.map((k) => k.id) };
}
