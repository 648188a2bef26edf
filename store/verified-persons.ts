// The person data behind KYC accounts (kyc_persons: the current version of each applicant's data;
// record_kyc_persons keeps them all), and an entity's current verification: its latest decision and
// the person it rests on. Written when an applicant's data is read, before the decision, so a retried
// step finds it; personal data stays here, never in workflow histories. It belongs to the entity:
// deleting the entity deletes it (foreign key, cascade).
import type { VerifiedPerson } from '../domain/verified-person.ts';
import { recordAudit } from './audit-log.ts';
import { isForeignKeyViolation, type Queryable } from './db.ts';
import { inTx, type Writer } from './in-tx.ts';

/**
 * Keeps the person's data with their entity, as a new version when it differs from the current one
 * (every version is kept: a decision names the one it rested on, migration 027), with its
 * person_data.kept entry (the SHA-256 of the data, never the data); false when the entity is gone
 * (deleted meanwhile): nothing is kept.
 */
export async function keepPersonData(q: Writer, entityId: string, provider: string, applicantId: string, person: VerifiedPerson): Promise<boolean> {
  try {
    return await inTx(q, async (tx) => {
      const [entity] = await tx.query<{ business_id: string }>('SELECT business_id FROM entities WHERE id = $1', [entityId]);
      if (!entity) return false;
      const [kept] = await tx.query<{ id: string }>(
        `INSERT INTO record_kyc_persons (entity_id, provider, applicant_id, person) SELECT $1, $2, $3, $4::jsonb
          WHERE NOT EXISTS (SELECT 1 FROM kyc_persons WHERE entity_id = $1 AND provider = $2 AND applicant_id = $3 AND person = $4::jsonb)
         RETURNING id`,
        [entityId, provider, applicantId, JSON.stringify(person)],
      );
      if (!kept) return true; // read again, unchanged: the current version stands
      recordAudit(tx, {
        businessId: String(entity.business_id),
        action: 'person_data.kept',
        entityId,
        subject: { type: 'person_data', id: String(kept.id) },
        details: { provider, applicantId },
        keyed: { data: person },
      });
      return true;
    });
  } catch (err) {
    if (isForeignKeyViolation(err)) return false; // the entity's deletion committed as we wrote
    throw err;
  }
}

export type CurrentVerification = { decision: 'APPROVED' | 'REJECTED'; provider: string; person: VerifiedPerson | null };

/** The entity's latest decision (null when it has none); the entity must be the caller's (checked by the use case). */
export async function currentVerification(q: Queryable, entityId: string): Promise<CurrentVerification | null> {
  const [row] = await q.query<{ decision: 'APPROVED' | 'REJECTED'; provider: string; person: VerifiedPerson | null }>(
    `SELECT k.decision, k.provider, p.person FROM kyc_accounts k
       LEFT JOIN kyc_persons p ON p.provider = k.provider AND p.applicant_id = k.applicant_id
      WHERE k.entity_id = $1 ORDER BY k.decided_at DESC, k.created_at DESC LIMIT 1`,
    [entityId],
  );
  return row ?? null;
}
