// The person data behind KYC accounts (kyc_persons), and an entity's current verification: its
// latest decision and the person it rests on. Written when an applicant's data is read, before the
// decision, so a retried step finds it; personal data stays here, never in workflow histories. It
// belongs to the entity: deleting the entity deletes it (foreign key, cascade).
import { canonicalSha256 } from '../domain/digests.ts';
import type { VerifiedPerson } from '../domain/verified-person.ts';
import { recordAudit } from './audit-log.ts';
import { isForeignKeyViolation, type Queryable } from './db.ts';
import { inTx, type Writer } from './in-tx.ts';

/**
 * Keeps the person's data with their entity (person_data.kept: the SHA-256 of the data, never the
 * data); false when the entity is gone (deleted meanwhile): nothing is kept.
 */
export async function keepPersonData(q: Writer, entityId: string, provider: string, applicantId: string, person: VerifiedPerson): Promise<boolean> {
  try {
    return await inTx(q, async (tx) => {
      const [kept] = await tx.query<{ business_id: string }>(
        `INSERT INTO kyc_persons (entity_id, provider, applicant_id, person) SELECT id, $2, $3, $4 FROM entities WHERE id = $1
         ON CONFLICT (provider, applicant_id) DO UPDATE SET person = EXCLUDED.person, entity_id = EXCLUDED.entity_id, updated_at = now()
         RETURNING (SELECT business_id FROM entities WHERE id = $1) AS business_id`,
        [entityId, provider, applicantId, JSON.stringify(person)],
      );
      if (!kept) return false;
      recordAudit(tx, {
        businessId: String(kept.business_id),
        action: 'person_data.kept',
        entityId,
        subject: { type: 'applicant', id: applicantId },
        details: { provider, applicantId, dataSha256: canonicalSha256(person) },
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
