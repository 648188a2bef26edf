// The environment's signing key rings: webhook deliveries (RSA, interface 5.4), their Standard
// Webhooks signature (Ed25519, domain/standard-webhooks.ts), signed payloads (Ed25519, interface
// 2.8) and evidence bundles (Ed25519, domain/evidence.ts; only the admin CLI reads that one).
// Each comes from a JSON variable or a file (default under DATA_DIR). In
// the sandbox a missing file is generated on first start and never committed (DATA_DIR is
// git-ignored); other environments must supply their keys.
import { createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { endsWithin, nextWindow, RENEW_DAYS, ringEndsAt, type Window } from '../domain/key-rotation.ts';
import { checkpointPublicKeyOf, type CheckpointPublicKey } from '../domain/audit-checkpoint.ts';
import { publicKeyOf, publicKeySchema, validKeysAt, type PublicKey, type SigningKey } from '../domain/webhook-signature.ts';
import { standardWebhookPublicKeyOf, standardWebhookPublicKeySchema, type StandardWebhookPublicKey } from '../domain/standard-webhooks.ts';
import { z } from 'zod';
import { loadCodecKeys, type CodecKey } from './codec-keys.ts';
import { ConfigError, type Config } from './config.ts';
import { readOrCreateOnce, replaceAtomically, withFileLock } from './secret-file.ts';

export type RingKind = 'webhook' | 'standard-webhook' | 'signed-payload' | 'evidence' | 'audit-checkpoint';

// Webhook keys follow the interface's pattern: two keys valid until 30 Sep 2026 and two from 1 Oct 2026.
const WEBHOOK_WINDOWS: Window[] = [
  { validFrom: '2025-05-31T00:00:00.000Z', validUntil: '2026-10-01T00:00:00.000Z' },
  { validFrom: '2025-05-31T00:00:00.000Z', validUntil: '2026-10-01T00:00:00.000Z' },
  { validFrom: '2026-10-01T00:00:00.000Z', validUntil: '2027-10-01T00:00:00.000Z' },
  { validFrom: '2026-10-01T00:00:00.000Z', validUntil: '2027-10-01T00:00:00.000Z' },
];

/** Ed25519 rings (signed payloads, Standard Webhooks, evidence): the current key (two years from generation) and its successor (a year later). */
function ed25519Windows(now: Date): Window[] {
  const at = (days: number) => new Date(now.getTime() + days * 86_400_000).toISOString();
  return [
    { validFrom: at(-1), validUntil: at(730) },
    { validFrom: at(365), validUntil: at(1095) },
  ];
}

const KINDS: Record<
  RingKind,
  { variable: string; fileVariable: string; fileName: string; settings(c: Config): { json: string | undefined; file: string | undefined } }
> = {
  webhook: {
    variable: 'WEBHOOK_SIGNING_KEYS',
    fileVariable: 'WEBHOOK_SIGNING_KEYS_FILE',
    fileName: 'webhook-signing-keys.json',
    settings: (c) => ({ json: c.webhooks.signingKeysJson, file: c.webhooks.signingKeysFile }),
  },
  'standard-webhook': {
    variable: 'STANDARD_WEBHOOK_KEYS',
    fileVariable: 'STANDARD_WEBHOOK_KEYS_FILE',
    fileName: 'standard-webhook-keys.json',
    settings: (c) => ({ json: c.webhooks.standardKeysJson, file: c.webhooks.standardKeysFile }),
  },
  'signed-payload': {
    variable: 'SIGNED_PAYLOAD_KEYS',
    fileVariable: 'SIGNED_PAYLOAD_KEYS_FILE',
    fileName: 'signed-payload-keys.json',
    settings: (c) => ({ json: c.signedPayloads.signingKeysJson, file: c.signedPayloads.signingKeysFile }),
  },
  evidence: {
    variable: 'EVIDENCE_SIGNING_KEYS',
    fileVariable: 'EVIDENCE_SIGNING_KEYS_FILE',
    fileName: 'evidence-signing-keys.json',
    settings: (c) => ({ json: c.evidence.signingKeysJson, file: c.evidence.signingKeysFile }),
  },
  'audit-checkpoint': {
    variable: 'AUDIT_CHECKPOINT_KEYS',
    fileVariable: 'AUDIT_CHECKPOINT_KEYS_FILE',
    fileName: 'audit-checkpoint-keys.json',
    settings: (c) => ({ json: c.auditCheckpoints.signingKeysJson, file: c.auditCheckpoints.signingKeysFile }),
  },
};

/** The variable that holds a ring (the secret a process holds it by: runtime/secrets-by-role.ts names these). */
export const ringVariable = (kind: RingKind): string => KINDS[kind].variable;

function parseRing(json: string, where: string): SigningKey[] {
  let ring: unknown;
  try {
    ring = JSON.parse(json);
  } catch {
    throw new ConfigError(`${where} is not valid JSON`);
  }
  if (
    !Array.isArray(ring) ||
    ring.length === 0 ||
    !ring.every(
      (k) =>
        k &&
        typeof k.keyId === 'string' &&
        typeof k.privateKeyPem === 'string' &&
        !Number.isNaN(Date.parse(k.validFrom)) &&
        !Number.isNaN(Date.parse(k.validUntil)),
    )
  ) {
    throw new ConfigError(`${where} must be a non-empty array of { keyId, privateKeyPem, validFrom, validUntil }`);
  }
  return ring as SigningKey[];
}

/** One key of the kind for the window: RSA-2048 for webhooks, Ed25519 for the others. */
function generateKey(kind: RingKind, environment: string, w: Window, tag = ''): SigningKey {
  const suffix = `${tag}${randomBytes(3).toString('hex')}`;
  if (kind === 'webhook') {
    return {
      keyId: `${environment}-${w.validFrom.slice(0, 7)}-${suffix}`,
      privateKeyPem: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      ...w,
    };
  }
  const label = { 'signed-payload': 'payload', 'standard-webhook': 'whsig', evidence: 'evidence', 'audit-checkpoint': 'checkpoint' }[kind];
  return {
    keyId: `${environment}-${label}-${w.validFrom.slice(0, 7)}-${suffix}`,
    privateKeyPem: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    ...w,
  };
}

/** Keys per generation: the webhook ring has pairs (interface 5.5), the Ed25519 rings one key. */
const perGeneration = (kind: RingKind) => (kind === 'webhook' ? ['a-', 'b-'] : ['']);

/** A new ring of the kind: RSA-2048 keys for webhooks, Ed25519 for the others. */
export function generateKeyRing(kind: RingKind, environment: string, now = new Date()): SigningKey[] {
  if (kind === 'webhook') return WEBHOOK_WINDOWS.map((w, i) => generateKey(kind, environment, w, i % 2 === 0 ? 'a-' : 'b-'));
  return ed25519Windows(now).map((w) => generateKey(kind, environment, w));
}

/** The ring with its next generation added (domain/key-rotation.ts nextWindow). */
export function withNextGeneration(kind: RingKind, environment: string, ring: readonly SigningKey[], now: Date): SigningKey[] {
  const w = nextWindow(ring, now);
  return [...ring, ...perGeneration(kind).map((tag) => generateKey(kind, environment, w, tag))];
}

/** Where the ring's file is (the setting, or its default under DATA_DIR). */
export function keyRingFile(config: Config, kind: RingKind): string {
  return KINDS[kind].settings(config).file ?? path.join(config.dataDir, KINDS[kind].fileName);
}

/** The ring from its variable or file; `generateMissing` (the sandbox's default) writes a new file when there is none. */
export async function loadKeyRing(
  config: Config,
  kind: RingKind,
  options: { generateMissing?: boolean; ignoreVariable?: boolean } = {},
): Promise<SigningKey[]> {
  const k = KINDS[kind];
  const { json } = k.settings(config);
  if (json && !options.ignoreVariable) return parseRing(json, k.variable);
  const file = keyRingFile(config, kind);
  const make = () => {
    if (!(options.generateMissing ?? config.environment === 'sandbox')) {
      throw new ConfigError(`no ${kind} signing keys: set ${k.variable} or ${k.fileVariable} (${file} does not exist)`);
    }
    return JSON.stringify(generateKeyRing(kind, config.environment), null, 2);
  };
  return parseRing(readOrCreateOnce(file, make), file);
}

/**
 * Adds the ring's next generation to its file (`vouch webhook-keys rotate` and the others; the
 * sandbox at start and at each reload, RENEW_DAYS before a ring ends). Running processes take the
 * new ring within a minute (refreshRings). `onlyIfEndingWithin` makes it
 * conditional, checked under the lock, so processes starting together renew once; a ring that
 * already holds a generation not yet started is left as it is unless `force`.
 */
export async function rotateKeyRing(
  config: Config,
  kind: RingKind,
  now = new Date(),
  onlyIfEndingWithin?: number,
  options: { force?: boolean } = {},
): Promise<{ file: string; ring: SigningKey[]; added: SigningKey[]; pending?: SigningKey[] }> {
  const k = KINDS[kind];
  if (k.settings(config).json)
    throw new ConfigError(`the ${kind} ring comes from ${k.variable}: rotate it where that variable is set, or use ${k.fileVariable}`);
  const file = keyRingFile(config, kind);
  return withFileLock(file, async () => {
    const ring = await loadKeyRing(config, kind);
    if (onlyIfEndingWithin !== undefined && !endsWithin(ring, now, onlyIfEndingWithin)) return { file, ring, added: [] };
    // a generation that has not started yet is the next one already: rotating again (a deploy
    // script run twice) would stack another behind it; --force does
    const pending = ring.filter((key) => Date.parse(key.validFrom) > now.getTime());
    if (pending.length > 0 && !options.force) return { file, ring, added: [], pending };
    const next = withNextGeneration(kind, config.environment, ring, now);
    replaceAtomically(file, JSON.stringify(next, null, 2));
    return { file, ring: next, added: next.slice(ring.length) };
  });
}

/**
 * The ring a process signs with: as loaded, renewed first in the sandbox when it ends within
 * RENEW_DAYS (from its file), and refused when no key of it is valid now — a process that could
 * not sign would fail every delivery or payload instead.
 */
export async function loadSigningRing(config: Config, kind: RingKind, now = new Date()): Promise<SigningKey[]> {
  let ring = await loadKeyRing(config, kind);
  if (config.environment === 'sandbox' && !KINDS[kind].settings(config).json && endsWithin(ring, now, RENEW_DAYS)) {
    ring = (await rotateKeyRing(config, kind, now, RENEW_DAYS)).ring;
  }
  if (validKeysAt(ring, now).length === 0) {
    const ends = ringEndsAt(ring).toISOString();
    throw new ConfigError(
      `no ${kind} signing key is valid now (the ring's keys end ${ends}): add one with \`vouch ` +
        `${kind === 'webhook' ? 'webhook-keys' : `${kind}-keys`} rotate\` or set ${KINDS[kind].variable}`,
    );
  }
  return ring;
}

/**
 * Every ring a process signs with (or publishes). The API signs payloads only; of the rings the
 * workers sign with it holds the public keys alone, to publish them (GET /webhook-keys, the audit
 * checkpoints' keys) and to warn before they end (GET /health).
 */
export type KeyRings = {
  webhooks: readonly PublicKey[];
  standardWebhooks: readonly StandardWebhookPublicKey[];
  signedPayloads: readonly SigningKey[];
  /** The public keys that check the audit chain's checkpoints (the API publishes them; only workers hold the private ring). */
  auditCheckpoints: readonly CheckpointPublicKey[];
  /** The payload codec ring (runtime/codec-keys.ts): seals and opens subscription secrets at rest. */
  sealing: readonly CodecKey[];
};

/** The rings as loaded: arrays refreshRings may renew in place. */
export type LoadedKeyRings = {
  webhooks: PublicKey[];
  standardWebhooks: StandardWebhookPublicKey[];
  signedPayloads: SigningKey[];
  auditCheckpoints: CheckpointPublicKey[];
  sealing: CodecKey[];
};

/** What refreshRings keeps current of rings as loaded. */
export const refreshable = (keys: LoadedKeyRings): RefreshedRings => ({
  'signed-payload': keys.signedPayloads,
  public: { webhook: keys.webhooks, 'standard-webhook': keys.standardWebhooks, 'audit-checkpoint': keys.auditCheckpoints },
});

/** The API's rings: the signed-payload ring, and the public keys of the rings the workers sign with. */
export async function loadKeyRings(config: Config, now = new Date()): Promise<LoadedKeyRings> {
  return {
    webhooks: await loadPublicKeys(config, 'webhook'),
    standardWebhooks: await loadPublicKeys(config, 'standard-webhook'),
    signedPayloads: await loadSigningRing(config, 'signed-payload', now),
    auditCheckpoints: await loadPublicKeys(config, 'audit-checkpoint'),
    sealing: await loadCodecKeys(config),
  };
}

/** The rings whose public keys a process may be given without the ring (what the API publishes of the workers' rings). */
export type PublicKind = 'webhook' | 'standard-webhook' | 'audit-checkpoint';
type PublicKeyOf = { webhook: PublicKey; 'standard-webhook': StandardWebhookPublicKey; 'audit-checkpoint': CheckpointPublicKey };

const checkpointPublicKeySchema = z.object({
  keyId: z.string(),
  algorithm: z.literal('Ed25519').default('Ed25519'),
  publicKeyPem: z.string(),
  validFrom: z.string(),
  validUntil: z.string(),
});

const PUBLIC: {
  [K in PublicKind]: { variable: string; settings(c: Config): { json?: string; file?: string }; schema: z.ZodType; of(k: SigningKey): PublicKeyOf[K] };
} = {
  webhook: {
    variable: 'WEBHOOK_SIGNING_PUBLIC_KEYS',
    settings: (c) => ({ json: c.webhooks.publicKeysJson, file: c.webhooks.publicKeysFile }),
    schema: publicKeySchema,
    of: publicKeyOf,
  },
  'standard-webhook': {
    variable: 'STANDARD_WEBHOOK_PUBLIC_KEYS',
    settings: (c) => ({ json: c.webhooks.standardPublicKeysJson, file: c.webhooks.standardPublicKeysFile }),
    schema: standardWebhookPublicKeySchema,
    of: standardWebhookPublicKeyOf,
  },
  'audit-checkpoint': {
    variable: 'AUDIT_CHECKPOINT_PUBLIC_KEYS',
    settings: (c) => ({ json: c.auditCheckpoints.publicKeysJson, file: c.auditCheckpoints.publicKeysFile }),
    schema: checkpointPublicKeySchema,
    of: checkpointPublicKeyOf,
  },
};

/**
 * A ring's public keys: its `…_PUBLIC_KEYS` variable (or file) as `vouch … generate` prints them — an
 * array, or `{ keys: [...] }` — else the public halves of the ring where this process can read it (the
 * sandbox, a host that runs workers too). Each key must be a public key its consumers can parse.
 */
export async function loadPublicKeys<K extends PublicKind>(config: Config, kind: K): Promise<PublicKeyOf[K][]> {
  const p = PUBLIC[kind];
  const { json: given, file } = p.settings(config);
  const json = given ?? (file ? readFileSync(file, 'utf8') : undefined);
  if (json === undefined) {
    const ring = await loadKeyRing(config, kind).catch((err: unknown) => {
      if (!(err instanceof ConfigError)) throw err;
      throw new ConfigError(
        `${err.message}; or set ${p.variable} to its public keys (what \`vouch … generate\` prints), which is all this process needs of it`,
      );
    });
    return ring.map(p.of);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new ConfigError(`${p.variable} is not JSON`);
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { keys?: unknown } | null)?.keys;
  const keys = z.array(p.schema).min(1).safeParse(list);
  const usable = (k: { publicKeyPem: string; validFrom: string; validUntil: string }) => {
    try {
      return createPublicKey(k.publicKeyPem).type === 'public' && !Number.isNaN(Date.parse(k.validFrom)) && !Number.isNaN(Date.parse(k.validUntil));
    } catch {
      return false;
    }
  };
  if (!keys.success || !(keys.data as PublicKeyOf[K][]).every(usable))
    throw new ConfigError(`${p.variable} must be a non-empty array (or { keys: [...] }) of the public keys \`vouch … generate\` prints`);
  return keys.data as PublicKeyOf[K][];
}

/** The public keys that check audit checkpoints (loadPublicKeys): what the API and `vouch audit verify` need. */
export const loadCheckpointPublicKeys = (config: Config) => loadPublicKeys(config, 'audit-checkpoint');

/** The rings a process keeps current: rings it signs with, by kind, and the public keys it publishes. */
export type RefreshedRings = Partial<Record<RingKind, SigningKey[]>> & { public?: { [K in PublicKind]?: PublicKeyOf[K][] } };

/** How often a running process re-reads its rings (issue 38, item 7). */
export const RING_RELOAD_MS = 60_000;

/** What a ring holds, to tell a changed one: each key's id and window. */
const ringShape = (ring: readonly { keyId: string; validFrom: string; validUntil: string }[]) =>
  ring.map((k) => `${k.keyId}|${k.validFrom}|${k.validUntil}`).join('\n');

/**
 * Keeps a running process's rings current (issue 38, item 7): every `everyMs` each is read again
 * from its variable or file — in the sandbox renewed first, as at start, when it ends within
 * RENEW_DAYS — and, when it changed, its keys replace the old ones **in place**: every holder of the
 * array (the webhook sender, the use cases, the checkpoint activity) signs and publishes with the
 * new ring from then on, with no restart. A rotation by `vouch … rotate` reaches running processes
 * within a minute, and a worker started long ago never stops signing when its ring rolls over. A read
 * that fails (a file half edited, no key valid) keeps the ring as it was and is logged.
 */
export function refreshRings(
  config: Config,
  rings: RefreshedRings,
  options: { everyMs?: number; now?: () => Date; log?: { info(o: object, m: string): void; warn(o: object, m: string): void } } = {},
): { reload(): Promise<number>; stop(): void } {
  const now = options.now ?? (() => new Date());
  const replace = <T extends { keyId: string; validFrom: string; validUntil: string }>(ring: T[], next: readonly T[], kind: string): number => {
    if (ringShape(ring) === ringShape(next)) return 0;
    ring.splice(0, ring.length, ...next);
    options.log?.info({ ring: kind, keyIds: next.map((k) => k.keyId) }, 'signing key ring reloaded');
    return 1;
  };
  const { public: publicKeys = {}, ...signing } = rings;
  const reads: [string, () => Promise<number>][] = [
    ...(Object.entries(signing) as [RingKind, SigningKey[]][]).map(
      ([kind, ring]) => [kind, async () => replace(ring, await loadSigningRing(config, kind, now()), kind)] as [string, () => Promise<number>],
    ),
    ...(Object.entries(publicKeys) as [PublicKind, PublicKeyOf[PublicKind][]][]).map(
      ([kind, ring]) =>
        [`${kind} (public keys)`, async () => replace(ring, await loadPublicKeys(config, kind), `${kind} (public keys)`)] as [string, () => Promise<number>],
    ),
  ];
  let running: Promise<number> | undefined;
  const reload = () =>
    (running ??= (async () => {
      let changed = 0;
      for (const [kind, read] of reads) {
        try {
          changed += await read();
        } catch (err) {
          options.log?.warn({ err, ring: kind }, 'signing key ring could not be read again; the ring as it was stays in use');
        }
      }
      return changed;
    })().finally(() => (running = undefined)));
  const timer = setInterval(() => void reload(), options.everyMs ?? RING_RELOAD_MS);
  timer.unref();
  return { reload, stop: () => clearInterval(timer) };
}
