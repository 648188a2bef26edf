// Sandbox control requests: what the client asked the sandbox to play (review and test person),
// read by the activities that play it, so the workflow's history holds only the request id.
import { randomUUID } from 'node:crypto';
import type { SandboxReviewRequest } from '../domain/sandbox.ts';
import { recordAudit } from './audit-log.ts';
import type { Queryable } from './db.ts';
import { inTx, type Writer } from './in-tx.ts';

/** Stores the request, with its audit entry (sandbox.review_requested: its id; what it asks to play, a review and maybe a test person, stays here). */
export async function insertSandboxReview(db: Writer, r: { businessId: string; entityId: string; request: SandboxReviewRequest }): Promise<string> {
  const id = randomUUID();
  await inTx(db, async (tx) => {
    await tx.query('INSERT INTO sandbox_reviews (id, business_id, entity_id, request) VALUES ($1, $2, $3, $4)', [
      id,
      r.businessId,
      r.entityId,
      JSON.stringify(r.request),
    ]);
    recordAudit(tx, { businessId: r.businessId, action: 'sandbox.review_requested', entityId: r.entityId, subject: { type: 'sandbox_review', id } });
  });
  return id;
}

export async function loadSandboxReview(db: Queryable, id: string): Promise<{ entityId: string; request: SandboxReviewRequest } | null> {
  const [row] = await db.query<{ entity_id: string; request: SandboxReviewRequest }>('SELECT entity_id, request FROM sandbox_reviews WHERE id = $1', [id]);
  return row ? { entityId: row.entity_id, request: row.request } : null;
}
