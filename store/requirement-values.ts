// A requirement value submitted on an existing entity (a record of a requirement batch): the new
// value supersedes the entity's earlier PENDING value of the same requirement outside any
// submission, and is recorded (requirement.submitted), in the caller's transaction.
import { randomUUID } from 'node:crypto';
import { canonicalSha256 } from '../domain/digests.ts';
import { recordAudit } from './audit-log.ts';
import type { Tx } from './db.ts';

export async function submitRequirementValue(q: Tx, r: { businessId: string; entityId: string; slug: string; value: unknown }): Promise<void> {
  await q.query(
    `UPDATE entity_requirements SET status = 'SUPERSEDED', updated_at = now()
      WHERE entity_id = $1 AND requirement_slug = $2 AND status = 'PENDING' AND submission_id IS NULL`,
    [r.entityId, r.slug],
  );
  const id = randomUUID();
  await q.query('INSERT INTO entity_requirements (id, entity_id, requirement_slug, value) VALUES ($1, $2, $3, $4)', [
    id,
    r.entityId,
    r.slug,
    JSON.stringify(r.value),
  ]);
  recordAudit(q, {
    businessId: r.businessId,
    action: 'requirement.submitted',
    entityId: r.entityId,
    subject: { type: 'requirement', id },
    details: { slug: r.slug, valueSha256: canonicalSha256(r.value) },
  });
}
