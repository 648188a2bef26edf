// Sandbox control requests: what the client asked the sandbox to play (review and test person),
// read by the activities that play it, so the workflow's history holds only the request id.
import { randomUUID } from 'node:crypto';
import type { SandboxReviewRequest } from '../domain/sandbox.ts';
import type { Queryable } from './db.ts';

export async function insertSandboxReview(q: Queryable, r: { businessId: string; entityId: string; request: SandboxReviewRequest }): Promise<string> {
  const id = randomUUID();
  await q.query('INSERT INTO sandbox_reviews (id, business_id, entity_id, request) VALUES ($1, $2, $3, $4)', [
    id,
    r.businessId,
    r.entityId,
    JSON.stringify(r.request),
  ]);
  return id;
}

export async function loadSandboxReview(q: Queryable, id: string): Promise<{ entityId: string; request: SandboxReviewRequest } | null> {
  const [row] = await q.query<{ entity_id: string; request: SandboxReviewRequest }>('SELECT entity_id, request FROM sandbox_reviews WHERE id = $1', [id]);
  return row ? { entityId: row.entity_id, request: row.request } : null;
}
