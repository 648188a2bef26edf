// Payload encryption for everything Temporal stores: every client and worker encodes each payload
// (workflow inputs and results, activity arguments and results, signals, queries, updates,
// failures' details) as `binary/encrypted`: AES-256-GCM over the serialised payload, a fresh
// 12-byte nonce each time, the key id in the metadata and bound as associated data. The first key
// of the ring encrypts; every key decrypts, so a rotation (a new key put first, old ones kept)
// still reads old histories. Payloads that are not encrypted (histories from before) pass through.
//
// The ring: PAYLOAD_CODEC_KEYS (JSON) or PAYLOAD_CODEC_KEYS_FILE (default DATA_DIR/payload-codec-keys.json),
// [{ "id": "…", "key": "<32 bytes, base64>", "createdAt": "…" }, …]. The sandbox generates one on
// first start (never committed); other environments must supply theirs.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto'; // CommonJS: its namespaces come through the default export
import { ConfigError, type Config } from '../runtime/config.ts';
import { readOrCreateOnce, replaceAtomically } from '../runtime/secret-file.ts';

const ProtoPayload = proto.temporal.api.common.v1.Payload;
export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID_METADATA = 'encryption-key-id';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const utf8 = new TextEncoder();
const text = new TextDecoder();

export type CodecKey = { id: string; key: Buffer; createdAt: string };

export function createEncryptionCodec(ring: readonly CodecKey[]): PayloadCodec {
  if (ring.length === 0) throw new ConfigError('the payload codec key ring is empty');
  const current = ring[0]!;
  const byId = new Map(ring.map((k) => [k.id, k.key]));
  return {
    async encode(payloads: Payload[]): Promise<Payload[]> {
      return payloads.map((p) => {
        const nonce = randomBytes(NONCE_BYTES);
        const cipher = createCipheriv('aes-256-gcm', current.key, nonce);
        cipher.setAAD(utf8.encode(current.id));
        const sealed = Buffer.concat([cipher.update(ProtoPayload.encode(p).finish()), cipher.final()]);
        return {
          metadata: { encoding: utf8.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8.encode(current.id) },
          data: Buffer.concat([nonce, sealed, cipher.getAuthTag()]),
        };
      });
    },
    async decode(payloads: Payload[]): Promise<Payload[]> {
      return payloads.map((p) => {
        if (!p.metadata?.encoding || text.decode(p.metadata.encoding) !== ENCRYPTED_ENCODING) return p;
        const id = p.metadata[KEY_ID_METADATA] ? text.decode(p.metadata[KEY_ID_METADATA]) : '';
        const key = byId.get(id);
        if (!key) throw new Error(`payload encrypted with key "${id}", which is not in the payload codec key ring`);
        const data = Buffer.from(p.data ?? new Uint8Array());
        const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, NONCE_BYTES));
        decipher.setAAD(utf8.encode(id));
        decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
        const plain = Buffer.concat([decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)), decipher.final()]);
        return ProtoPayload.decode(plain) as Payload;
      });
    },
  };
}

/** The data converter every client and worker uses. */
export const encryptingDataConverter = (ring: readonly CodecKey[]): DataConverter => ({ payloadCodecs: [createEncryptionCodec(ring)] });

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
