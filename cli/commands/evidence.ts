// `vouch evidence export --entity ID [--out DIR] [--with-files]` writes an entity's evidence bundle
// for a regulator (domain/evidence.ts says what it holds and how it is signed) and records
// `evidence.exported` with the bundle's SHA-256; a sealed entity is exported too. `vouch evidence
// verify DIR` checks a bundle offline: the signature against the evidence ring's key it names, the
// bundled files against their SHA-256, and the audit entries' hashes and order. Personal data goes
// into the bundle only (a directory of mode 700, files of mode 600), never to the terminal.
import { linkAll } from '../../store/audit-chainer.ts';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  BUNDLE_FILE,
  bundleBytes,
  bundledFilePath,
  checkAudit,
  checkDecisions,
  checkDigests,
  checkFiles,
  checkSignature,
  EVIDENCE_FORMAT,
  evidenceBundle,
  FILES_DIR,
  SIGNATURE_FILE,
  signEvidence,
  type EvidenceBundle,
  type EvidenceFailure,
  type EvidenceFileRow,
  type FileBytes,
} from '../../domain/evidence.ts';
import { sha256Hex } from '../../domain/digests.ts';
import { signingKeyAt } from '../../domain/webhook-signature.ts';
import type { Config } from '../../runtime/config.ts';
import { openDatabase } from '../../runtime/database.ts';
import { createFileStore } from '../../runtime/file-store.ts';
import { loadKeyRing, loadSigningRing } from '../../runtime/signing-keys.ts';
import { actingNow } from '../../store/audit-actor.ts';
import { recordAuditAlone } from '../../store/audit-log.ts';
import { evidenceOf } from '../../store/evidence.ts';
import { operatorSeat, UsageError, type CliCommand } from '../command.ts';
import { UUID } from '../../domain/ids.ts';

/** Streams bytes into a new file (mode 600, never over an existing one), hashing them on the way. */
async function writeHashed(source: Readable, target: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  await pipeline(
    source,
    async function* (chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        hash.update(chunk);
        size += chunk.length;
        yield chunk;
      }
    },
    createWriteStream(target, { flags: 'wx', mode: 0o600 }),
  );
  return { sha256: hash.digest('hex'), size };
}

async function sha256OfFile(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest('hex'), size };
}

/** Copies each file's bytes from the file store into the bundle, keeping only those that match their recorded SHA-256 and size. */
async function copyFiles(config: Config, files: readonly EvidenceFileRow[], out: string): Promise<Map<string, FileBytes>> {
  const store = createFileStore(config);
  const result = new Map<string, FileBytes>();
  mkdirSync(path.join(out, FILES_DIR), { mode: 0o700 });
  for (const f of files) {
    const opened = await store.open(f.storageKey);
    if (!opened) {
      result.set(f.id, { copied: false, problem: 'its bytes are not in the file store' });
      continue;
    }
    const target = path.join(out, bundledFilePath(f.id));
    const partial = `${target}.partial`;
    const seen = await writeHashed(opened.stream, partial);
    if (seen.sha256 === f.sha256 && seen.size === f.size) {
      renameSync(partial, target);
      result.set(f.id, { copied: true });
    } else {
      rmSync(partial, { force: true });
      result.set(f.id, { copied: false, problem: `the file store's bytes have SHA-256 ${seen.sha256} (${seen.size} bytes), not the recorded one` });
    }
  }
  return result;
}

const stamp = (d: Date) =>
  d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');

export const evidenceExport: CliCommand = {
  name: 'evidence export',
  usage: `  vouch evidence export --entity ENTITY_ID            write the entity's evidence bundle (sealed entities too) into a new directory:
        [--out DIR] [--with-files]                      bundle.json, bundle.sig (Ed25519, evidence ring), files/ with --with-files;
                                                        records evidence.exported; exit code 2 for an unknown entity, 1 when a
                                                        file's stored bytes are missing or do not match their SHA-256 (the bundle says so)`,
  options: { entity: { type: 'string' }, out: { type: 'string' }, 'with-files': { type: 'boolean', default: false } },
  actsAs: 'operator',
  async run({ values, config }) {
    const entityId = values.entity;
    if (typeof entityId !== 'string' || !UUID.test(entityId)) throw new UsageError('--entity must be an entity id (UUID)');
    const now = new Date();
    const key = signingKeyAt(await loadSigningRing(config, 'evidence', now), now); // refuses to start without a valid key
    const database = await openDatabase(config);
    try {
      const db = database.db;
      await linkAll(db); // the bundle's audit entries are linked ones: link what was committed a moment ago
      const record = await evidenceOf(db, entityId.toLowerCase());
      if (!record) throw new UsageError(`no entity ${entityId}`);
      const out = path.resolve(typeof values.out === 'string' ? values.out : `evidence-${record.entity.id}-${stamp(now)}`);
      try {
        mkdirSync(out, { mode: 0o700 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`${out} exists: name a new directory with --out`);
        throw err;
      }
      try {
        const fileBytes = values['with-files'] ? await copyFiles(config, record.files, out) : null;
        const bundle = evidenceBundle(record, { exportedAt: now, exportedBy: actingNow().actor, keyId: key.keyId, fileBytes });
        const bytes = bundleBytes(bundle);
        const bundleFile = path.join(out, BUNDLE_FILE);
        writeFileSync(bundleFile, bytes, { flag: 'wx', mode: 0o600 });
        writeFileSync(path.join(out, SIGNATURE_FILE), signEvidence(bytes, key), { flag: 'wx', mode: 0o600 });
        // the SHA-256 of what was written, as a regulator's copy will hash it
        const bundleSha256 = sha256Hex(readFileSync(bundleFile));
        const problems = bundle.files.filter((f) => f.bytesProblem).map((f) => ({ fileId: f.id, problem: f.bytesProblem! }));
        await recordAuditAlone(db, {
          businessId: record.entity.businessId,
          action: 'evidence.exported',
          entityId: record.entity.id,
          details: { bundleSha256, keyId: key.keyId, withFiles: bundle.withFiles, files: bundle.files.filter((f) => f.bytes).length },
          keyed: operatorSeat(),
        });
        if (problems.length > 0) process.exitCode = 1;
        return {
          bundle: out,
          entityId: record.entity.id,
          sealed: record.entity.sealedAt !== null,
          keyId: key.keyId,
          bundleSha256,
          files: bundle.files.length,
          filesIncluded: bundle.files.filter((f) => f.bytes).length,
          auditEntries: record.audit.entries.length,
          chainHead: record.audit.chainHead,
          ...(problems.length > 0 ? { fileProblems: problems } : {}),
        };
      } catch (err) {
        rmSync(out, { recursive: true, force: true }); // no bundle leaves without its audit entry
        throw err;
      }
    } finally {
      await database.close();
    }
  },
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The checks of a bundle's directory: every failure found, named. */
async function verifyBundle(dir: string, config: Config) {
  const failures: EvidenceFailure[] = [];
  const read = (name: string) => {
    const file = path.join(dir, name);
    if (existsSync(file)) return readFileSync(file);
    failures.push({ part: 'bundle', detail: `${name} is missing` });
    return null;
  };
  const bytes = read(BUNDLE_FILE);
  const signature = read(SIGNATURE_FILE);
  if (!bytes || !signature) return { failures };
  let bundle: Partial<EvidenceBundle> | null = null;
  try {
    const parsed: unknown = JSON.parse(bytes.toString('utf8'));
    if (isRecord(parsed) && parsed.format === EVIDENCE_FORMAT) bundle = parsed as Partial<EvidenceBundle>;
    else failures.push({ part: 'bundle', detail: `${BUNDLE_FILE} is not a ${EVIDENCE_FORMAT} bundle` });
  } catch {
    failures.push({ part: 'bundle', detail: `${BUNDLE_FILE} is not JSON` });
  }
  const keyId = typeof bundle?.signedWith?.keyId === 'string' ? bundle.signedWith.keyId : undefined;
  const ring = await loadKeyRing(config, 'evidence', { generateMissing: false });
  failures.push(...checkSignature(bytes, signature, ring, { keyId, exportedAt: bundle?.exportedAt }));
  let counts = { files: 0, auditEntries: 0, decisionsTiedToAudit: 0, digestsChecked: 0 };
  if (bundle) {
    try {
      const observed = new Map<string, { sha256: string; size: number } | null>();
      const filesDir = path.join(dir, FILES_DIR);
      if (existsSync(filesDir)) {
        for (const name of readdirSync(filesDir)) {
          const file = path.join(filesDir, name);
          if (statSync(file).isFile()) observed.set(`${FILES_DIR}/${name}`, await sha256OfFile(file));
        }
      }
      failures.push(...checkFiles(bundle.files ?? [], observed));
      failures.push(...checkAudit(bundle.audit ?? { chainHead: null, entries: [] }, String(bundle.entity?.businessId)));
      const decisions = checkDecisions(bundle as EvidenceBundle);
      failures.push(...decisions.failures);
      const digests = checkDigests(bundle as EvidenceBundle);
      failures.push(...digests.failures);
      counts = { files: observed.size, auditEntries: bundle.audit?.entries.length ?? 0, decisionsTiedToAudit: decisions.tied, digestsChecked: digests.checked };
    } catch (err) {
      failures.push({ part: 'bundle', detail: `its content is not shaped as a bundle (${err instanceof Error ? err.message : String(err)})` });
    }
  }
  return { failures, keyId, bundleSha256: sha256Hex(bytes), entityId: bundle?.entity?.id, exportedAt: bundle?.exportedAt, checked: counts };
}

export const evidenceVerify: CliCommand = {
  name: 'evidence verify',
  usage: `  vouch evidence verify BUNDLE_DIR                    check a bundle: its signature (by the evidence ring's key it names), its files'
                                                        SHA-256, its audit entries' hashes and order, each decision against its
                                                        decision.recorded entry; exit code 1 naming what failed`,
  actsAs: 'operator',
  async run({ args, config }) {
    if (args.length !== 1) throw new UsageError('name one bundle directory: vouch evidence verify BUNDLE_DIR');
    const dir = path.resolve(args[0]!);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`${dir} is not a directory`);
    const { failures, ...checked } = await verifyBundle(dir, config);
    if (failures.length > 0) process.exitCode = 1;
    return { valid: failures.length === 0, bundle: dir, ...checked, failures };
  },
};
