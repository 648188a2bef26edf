// The person data behind KYC accounts (kyc_persons), and an entity's current verification: its
// latest decision and the person it rests on. Written when an applicant's data is read, before the
// decision, so a retried step finds it; personal data stays here, never in workflow histories.
import type { VerifiedPerson } from '../domain/verified-person.ts';
import type { Queryable } from './db.ts';

export async function keepPersonData(q: Queryable, provider: string, applicantId: string, person: VerifiedPerson): Promise<void> {
  await q.query(
    `INSERT INTO kyc_persons (provider, applicant_id, person) VALUES ($1, $2, $3)
     ON CONFLICT (provider, applicant_id) DO UPDATE SET person = EXCLUDED.person, updated_at = now()`,
    [provider, applicantId, JSON.stringify(person)],
  );
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
