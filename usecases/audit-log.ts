// A business reads its own audit log (issue 21).
import type { z } from 'zod';
import type { AuditEntry } from '../domain/audit-chain.ts';
import type { auditLogQuery, AuditLogPage, CheckpointKeys, CheckpointsPage, checkpointsQuery } from '../domain/audit-log.ts';
import { done, type Outcome } from '../domain/outcome.ts';
import { pageMeta } from '../domain/pagination.ts';
import { linkNow } from '../store/audit-chainer.ts';
import { checkpointsPage } from '../store/audit-checkpoints.ts';
import { auditPage } from '../store/audit-log.ts';
import type { Caller, UseCaseContext } from './context.ts';

/** An entry as the API shows it (the hashed fields, grouped). */
export const auditEntryView = (e: AuditEntry): AuditLogPage['items'][number] => ({
  id: e.id,
  seq: e.seq,
  occurredAt: e.occurredAt,
  actor: { type: e.actorType, id: e.actorId, runId: e.runId },
  requestId: e.requestId,
  action: e.action as AuditLogPage['items'][number]['action'],
  ...(e.entityId ? { entityId: e.entityId } : {}),
  subject: e.subjectType && e.subjectId ? { type: e.subjectType, id: e.subjectId } : null,
  details: e.details,
  outcome: e.outcome,
  prevHash: e.prevHash,
  hash: e.hash,
});

export async function readAuditLog({ db }: UseCaseContext, caller: Caller, query: z.output<typeof auditLogQuery>): Promise<Outcome<AuditLogPage>> {
  const { page, limit, ...filter } = query;
  // the business reads its own writes: what it committed a moment ago is linked first
  await linkNow(db, caller.id);
  const { items, totalItems } = await auditPage(db, caller.id, filter, { page, limit });
  return done({ items: items.map(auditEntryView), meta: pageMeta({ page, limit }, totalItems) });
}

/** GET /audit-log/checkpoints: the signed checkpoints of the business's chain, oldest first. Keep them: a later head must still contain each. */
export async function readCheckpoints({ db }: UseCaseContext, caller: Caller, query: z.output<typeof checkpointsQuery>): Promise<Outcome<CheckpointsPage>> {
  const { items, totalItems } = await checkpointsPage(db, caller.id, query);
  return done({ items, meta: pageMeta(query, totalItems) });
}

/** GET /audit-log/checkpoint-keys: the public keys that verify checkpoints. */
export function checkpointKeys({ keys }: UseCaseContext): Outcome<CheckpointKeys> {
  return done({
    algorithm: 'Ed25519',
    signedContent: 'the RFC 8785 JSON of { format, businessId, seq, hash, at, keyId } (every field but signature)',
    keys: [...keys.auditCheckpoints],
  });
}
