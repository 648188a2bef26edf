// The person data behind KYC accounts (kyc_persons: the current version of each applicant's data;
// record_kyc_persons keeps them all), and an entity's current verification: its latest decision and
// the person it rests on. Written when an applicant's data is read, before the decision, so a retried
// step finds it; personal data stays here, never in workflow histories. It belongs to the entity:
// deleting the entity deletes it (foreign key, cascade).
import type { VerifiedPerson } from '../domain/verified-person.ts';
import { canonicalSha256 } from '../domain/digests.ts';
import { recordAudit } from './audit-log.ts';
import { isForeignKeyViolation, type Queryable } from './db.ts';
import { inTx, type Writer } from './in-tx.ts';

/**
 * Keeps the person's data with their entity, as a new version when it differs from the current one
 * (every version is kept: a decision names the one it rested on, migration 027), with its
 * person_data.kept entry (the SHA-256 of the data, never the data); false when the entity is gone
 * (deleted meanwhile): nothing is kept.
 */
export async function keepPersonData(db: Writer, entityId: string, provider: string, applicantId: string, person: VerifiedPerson): Promise<boolean> {
  const dataSha256 = canonicalSha256(person);
  try {
    return await inTx(db, async (tx) => {
      // one statement on the usual path: a new version, for an entity that exists
      const [kept] = await tx.query<{ id: string; business_id: string }>(
        `INSERT INTO record_kyc_persons (entity_id, provider, applicant_id, person, data_sha256)
         SELECT e.id, $2, $3, $4::jsonb, $5 FROM entities e
          WHERE e.id = $1
            AND NOT EXISTS (SELECT 1 FROM kyc_persons p WHERE p.entity_id = $1 AND p.provider = $2 AND p.applicant_id = $3 AND p.person = $4::jsonb)
         RETURNING id, (SELECT business_id FROM entities WHERE id = $1) AS business_id`,
        [entityId, provider, applicantId, JSON.stringify(person), dataSha256],
      );
      // nothing written: the entity is gone (deleted meanwhile), or the current version is this data already
      if (!kept) return (await tx.query('SELECT 1 FROM entities WHERE id = $1', [entityId])).length === 1;
      recordAudit(tx, {
        businessId: String(kept.business_id),
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
export async function currentVerification(db: Queryable, entityId: string): Promise<CurrentVerification | null> {
  const [row] = await db.query<{ decision: 'APPROVED' | 'REJECTED'; provider: string; person: VerifiedPerson | null }>(
    `SELECT k.decision, k.provider, p.person FROM kyc_accounts k
       LEFT JOIN kyc_persons p ON p.entity_id = k.entity_id AND p.provider = k.provider AND p.applicant_id = k.applicant_id
      WHERE k.entity_id = $1 ORDER BY k.decided_at DESC, k.created_at DESC LIMIT 1`,
    [entityId],
  );
  return row ?? null;
}
