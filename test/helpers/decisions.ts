// A decision written straight to the record, as onboarding/decisions.ts would append it, for tests that
// need a person decided without the workflow that decides (a wake lost between the two, a fixed clock).
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../store/db.ts';

/** An APPROVED KYC decision of the entity on a new applicant account. */
export async function approveDirectly(db: Queryable, entityId: string, applicantId = `test-${randomUUID()}`): Promise<void> {
  await db.query(
    `WITH a AS (INSERT INTO record_kyc_accounts (id, entity_id, provider, applicant_id, source, source_ref)
                VALUES ($1, $2, 'sumsub', $3, 'test', $3) RETURNING id, entity_id)
     INSERT INTO record_decisions (id, business_id, entity_id, kind, path, source, source_ref, kyc_account_id, status, rules, basis, nonce)
     SELECT $4::uuid, e.business_id, a.entity_id, 'kyc', 'hosted-sdk', 'test', $3, a.id, 'APPROVED', 'test', '{}', md5($4::uuid::text)
       FROM a JOIN entity_records e ON e.id = a.entity_id`,
    [randomUUID(), entityId, applicantId, randomUUID()],
  );
}
