// The audit log's hash chain (issue 21). Each entry of a business is hashed over its own fields and
// the hash of the entry before it (SHA-256 of "<prevHash>\n<RFC 8785 JSON of the fields>"); the
// first entry's prevHash is 64 zeros, and the business's head keeps the last seq and hash. So a
// changed entry no longer matches its hash, a removed one leaves a gap in seq, a reordered one
// breaks the prevHash link, and cut-off entries disagree with the head. Pure: no I/O.
import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

/** Who acted: an API key, the admin CLI, an operator command, the provider's callback, or a workflow run of the system. */
export type AuditActor =
  | { type: 'api_key'; id: string }
  | { type: 'admin_cli'; id: string }
  | { type: 'operator'; id: string }
  | { type: 'provider_callback'; id: string }
  | { type: 'download_link'; id: string }
  | { type: 'workflow'; id: string; runId: string }
  | { type: 'system'; id: string };

export type AuditActorType = AuditActor['type'];

/** What the hash covers: every field of an entry but its own hash. Ids and hashes only, never personal data. */
export type AuditFields = {
  businessId: string;
  seq: number;
  id: string;
  /** ISO 8601 with milliseconds, UTC (the text hashed is the text stored). */
  occurredAt: string;
  actorType: AuditActorType;
  actorId: string;
  runId: string | null;
  requestId: string | null;
  action: string;
  entityId: string | null;
  subjectType: string | null;
  subjectId: string | null;
  /** Ids and hashes the action names (batch row, submission id, a file's SHA-256, …). */
  details: Record<string, string | number | boolean | null>;
  /** `ok`, or the refusal's code when the action was refused. */
  outcome: string;
  prevHash: string;
};

export type AuditEntry = AuditFields & { hash: string };

/** SHA-256 (hex) of `<prevHash>\n<RFC 8785 JSON of the other fields>`; an entry's own hash is never part of it. */
export function entryHash(f: AuditFields): string {
  const covered = {
    businessId: f.businessId,
    seq: f.seq,
    id: f.id,
    occurredAt: f.occurredAt,
    actorType: f.actorType,
    actorId: f.actorId,
    runId: f.runId,
    requestId: f.requestId,
    action: f.action,
    entityId: f.entityId,
    subjectType: f.subjectType,
    subjectId: f.subjectId,
    details: f.details,
    outcome: f.outcome,
  };
  return createHash('sha256')
    .update(`${f.prevHash}\n${canonicalize(covered)}`, 'utf8')
    .digest('hex');
}

/** Canonical text of an entry's details (what the table stores). */
export const canonicalDetails = (details: AuditFields['details']): string => canonicalize(details)!;

export type ChainHead = { seq: number; hash: string };

export type ChainBreak = {
  /** The seq where the chain stops being what was written. */
  seq: number;
  problem: 'changed' | 'removed' | 'reordered' | 'cut-off' | 'added' | 'head-missing' | 'checkpoint';
  detail: string;
  /** The signed checkpoint the chain no longer agrees with (problem `checkpoint`). */
  checkpoint?: string;
};

/** A head the chain once had, as a signed checkpoint attests it (domain/audit-checkpoint.ts): its id, seq and hash. */
export type HeadAttested = { id: string; seq: number; hash: string; at: string };

/**
 * Checks a business's entries one at a time, in seq order (a chain can be millions long): push
 * returns the first place where they are not what was written, end compares the last with the head.
 * Each attested head (a signed checkpoint) must still be in the chain: the entry at its seq with its
 * hash. A chain rewritten whole after a checkpoint — entries cut, changed or reordered, hashes
 * recomputed and the head moved, by someone with the database's own credentials — is consistent in
 * itself, and fails here, naming the checkpoint.
 */
export function chainChecker(attested: readonly HeadAttested[] = []) {
  const bySeq = new Map<number, HeadAttested[]>();
  for (const a of attested) bySeq.set(a.seq, [...(bySeq.get(a.seq) ?? []), a]);
  let expectedSeq = 1;
  let prev = GENESIS_HASH;
  const disagrees = (a: HeadAttested, seq: number, detail: string): ChainBreak => ({ seq, problem: 'checkpoint', checkpoint: a.id, detail });
  return {
    push(e: AuditEntry): ChainBreak | null {
      if (e.seq > expectedSeq) return { seq: expectedSeq, problem: 'removed', detail: `entries ${expectedSeq}..${e.seq - 1} are missing` };
      if (e.seq < expectedSeq) return { seq: e.seq, problem: 'reordered', detail: `seq ${e.seq} appears again after ${expectedSeq - 1}` };
      if (e.prevHash !== prev)
        return { seq: e.seq, problem: 'reordered', detail: `its prevHash does not name entry ${e.seq - 1}'s hash (moved, or the one before was replaced)` };
      if (entryHash(e) !== e.hash) return { seq: e.seq, problem: 'changed', detail: 'its fields no longer match its hash' };
      for (const a of bySeq.get(e.seq) ?? [])
        if (a.hash !== e.hash)
          return disagrees(
            a,
            e.seq,
            `checkpoint ${a.id} of ${a.at} attests seq ${a.seq} with hash ${a.hash.slice(0, 12)}…; the chain has ${e.hash.slice(0, 12)}…`,
          );
      prev = e.hash;
      expectedSeq += 1;
      return null;
    },
    end(head: ChainHead | null): ChainBreak | null {
      const last = expectedSeq - 1;
      const beyond = attested.filter((a) => a.seq > last).sort((a, b) => b.seq - a.seq)[0];
      if (!head) {
        if (last > 0) return { seq: last, problem: 'head-missing', detail: 'entries exist but the chain head is gone' };
        // no entry and no head: a chain that never was, unless a checkpoint says otherwise (a chain removed whole)
        return beyond
          ? disagrees(beyond, 1, `checkpoint ${beyond.id} of ${beyond.at} attests seq ${beyond.seq}; the chain has no entry and no head: it was removed`)
          : null;
      }
      if (head.seq !== last || head.hash !== prev)
        return {
          seq: Math.min(head.seq, last) + 1,
          problem: head.seq > last ? 'cut-off' : head.seq < last ? 'added' : 'changed',
          detail: `the head names seq ${head.seq} (${head.hash.slice(0, 12)}…), the entries end at ${last} (${prev.slice(0, 12)}…)`,
        };
      if (beyond)
        return disagrees(
          beyond,
          last + 1,
          `checkpoint ${beyond.id} of ${beyond.at} attests seq ${beyond.seq}; the chain ends at ${last}: entries were removed`,
        );
      return null;
    },
  };
}

/** The first break of a whole chain held in memory, or null when it holds from the first entry to the head. */
export function verifyChain(entries: Iterable<AuditEntry>, head: ChainHead | null): ChainBreak | null {
  const check = chainChecker();
  for (const e of entries) {
    const broken = check.push(e);
    if (broken) return broken;
  }
  return check.end(head);
}
