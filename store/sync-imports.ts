// Synchronous imports: one row per request, the same record life as a batch row (share-records.ts).
import type { Queryable } from './db.ts';

export async function createSyncImport(
  q: Queryable,
  input: { requestId: string; businessId: string; externalId: string; shareToken: string; cardProcessorPublicToken: string | null },
): Promise<void> {
  await q.query(
    'INSERT INTO sync_imports (request_id, business_id, external_id, share_token, card_processor_public_token) VALUES ($1, $2, $3, $4, $5)',
    [input.requestId, input.businessId, input.externalId, input.shareToken, input.cardProcessorPublicToken],
  );
}
