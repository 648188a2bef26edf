// Signed checkpoints of the audit chain (issue 37; domain/audit-checkpoint.ts says what one is):
// written for every business whose head moved since its last one — the document to the file store
// first, where the database's credentials cannot reach, then its row here for GET
// /audit-log/checkpoints — and gathered back for `vouch audit verify` from both places, each
// checked by its signature.
import {
  attestedBy,
  checkpointKey,
  checkpointPrefix,
  checkpointProblem,
  CHECKPOINT_FORMAT,
  signCheckpoint,
  type Checkpoint,
  type CheckpointPublicKey,
} from '../domain/audit-checkpoint.ts';
import type { HeadAttested } from '../domain/audit-chain.ts';
import { offsetOf, type Page } from '../domain/pagination.ts';
import type { SigningKey } from '../domain/webhook-signature.ts';
import { linkAll, linkNow } from './audit-chainer.ts';
import type { Db, Queryable, Row } from './db.ts';

/** Where checkpoints are kept outside the database: the file store's documents (files/file-store.ts). */
export type CheckpointDocuments = {
  writeDocument(key: string, bytes: Uint8Array): Promise<void>;
  readDocument(key: string): Promise<Buffer | null>;
  listDocuments(prefix: string): Promise<string[]>;
};

/** Heads signed per run; the rest wait for the next. */
const PER_RUN = 5000;

/**
 * Signs the head of every business (or one) that moved since its last checkpoint, once linked, and
 * keeps each in the file store and here; returns the checkpoints written.
 */
export async function writeCheckpoints(db: Db, documents: CheckpointDocuments, key: SigningKey, now: Date, only?: string): Promise<Checkpoint[]> {
  await (only ? linkNow(db, only) : linkAll(db)); // a checkpoint attests the chain as committed until now
  const heads = await db.query<{ business_id: string; seq: string; hash: string }>(
    `SELECT h.business_id, h.seq, h.hash FROM audit_heads h
      WHERE h.seq > 0 ${only ? 'AND h.business_id = $2' : ''}
        AND NOT EXISTS (SELECT 1 FROM audit_checkpoints c WHERE c.business_id = h.business_id AND c.seq = h.seq)
      ORDER BY h.business_id LIMIT $1`,
    only ? [PER_RUN, only] : [PER_RUN],
  );
  const written: Checkpoint[] = [];
  for (const h of heads) {
    const c = signCheckpoint({ businessId: String(h.business_id), seq: Number(h.seq), hash: h.hash }, now, key);
    const objectKey = checkpointKey(c);
    await documents.writeDocument(objectKey, Buffer.from(JSON.stringify(c)));
    await db.query(
      'INSERT INTO audit_checkpoints (business_id, seq, hash, at, key_id, signature, object_key) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING',
      [c.businessId, c.seq, c.hash, c.at, c.keyId, c.signature, objectKey],
    );
    written.push(c);
  }
  return written;
}

const toCheckpoint = (r: Row): Checkpoint => ({
  format: CHECKPOINT_FORMAT,
  businessId: String(r.business_id),
  seq: Number(r.seq),
  hash: String(r.hash),
  at: String(r.at),
  keyId: String(r.key_id),
  signature: String(r.signature),
});

/** A business's checkpoints, oldest first, as GET /audit-log/checkpoints lists them. */
export async function checkpointsPage(db: Queryable, businessId: string, page: Page) {
  const [count] = await db.query<{ n: string }>('SELECT count(*) AS n FROM audit_checkpoints WHERE business_id = $1', [businessId]);
  const rows = await db.query('SELECT * FROM audit_checkpoints WHERE business_id = $1 ORDER BY seq, at LIMIT $2 OFFSET $3', [
    businessId,
    page.limit,
    offsetOf(page),
  ]);
  return { items: rows.map(toCheckpoint), totalItems: Number(count?.n ?? 0) };
}

export type CheckpointsFound = {
  /** The heads the checkpoints attest, each once, however many places held it. */
  attested: HeadAttested[];
  /** Checkpoints that cannot be trusted, and rows whose document is gone from the store. */
  problems: { checkpoint: string; problem: string }[];
  inStore: number;
  inDatabase: number;
};

/** Every checkpoint of the business, from the file store and the database, each checked by its signature with the published keys. */
export async function checkpointsOf(
  db: Queryable,
  documents: CheckpointDocuments,
  businessId: string,
  keys: readonly CheckpointPublicKey[],
): Promise<CheckpointsFound> {
  const problems: CheckpointsFound['problems'] = [];
  const attested = new Map<string, HeadAttested>();
  const take = (where: string, c: unknown) => {
    const problem = checkpointProblem(c, businessId, keys);
    if (problem) problems.push({ checkpoint: where, problem });
    else attested.set(checkpointKey(c as Checkpoint), attestedBy(c as Checkpoint));
  };
  // the database's rows first, then the store: a checkpoint written meanwhile (its document first, its row after) is in
  // the store and maybe not yet in the rows read, never the other way round, so no false "gone from the file store"
  const rows = await db.query('SELECT * FROM audit_checkpoints WHERE business_id = $1 ORDER BY seq, at', [businessId]);
  const stored = await documents.listDocuments(checkpointPrefix(businessId));
  for (const key of stored) {
    const bytes = await documents.readDocument(key);
    let parsed: unknown = null;
    try {
      parsed = bytes ? JSON.parse(bytes.toString('utf8')) : null;
    } catch {
      parsed = null;
    }
    take(key, parsed);
  }
  const inStore = new Set(stored);
  for (const r of rows) {
    const c = toCheckpoint(r);
    take(String(r.object_key), c);
    if (!inStore.has(String(r.object_key))) problems.push({ checkpoint: String(r.object_key), problem: 'listed in the database, gone from the file store' });
  }
  return { attested: [...attested.values()], problems, inStore: stored.length, inDatabase: rows.length };
}
