// Synchronous imports: one row per request, the same record life as a batch row (share-records.ts),
// with the optional Idempotency-Key the request came with and a hash of what it asked.
import type { ImportErrorCategory } from '../domain/import-errors.ts';
import { recordAudit } from './audit-log.ts';
import type { Queryable } from './db.ts';
import { inTx, type Writer } from './in-tx.ts';

export type SyncImport = {
  requestId: string;
  externalId: string;
  requestSha256: string | null;
  status: 'pending' | 'succeeded' | 'failed';
  entityId: string | null;
  errorCategory: ImportErrorCategory | null;
};

/** Stores the request, with its audit entry (sync_import.requested: its id and the SHA-256 of what it asked). */
export async function createSyncImport(
  db: Writer,
  input: {
    requestId: string;
    businessId: string;
    externalId: string;
    shareToken: string;
    cardProcessorPublicToken: string | null;
    idempotencyKey: string | null;
    requestSha256: string;
  },
): Promise<void> {
  await inTx(db, async (tx) => {
    await tx.query(
      `INSERT INTO sync_imports (request_id, business_id, external_id, share_token, card_processor_public_token, idempotency_key, request_sha256)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [input.requestId, input.businessId, input.externalId, input.shareToken, input.cardProcessorPublicToken, input.idempotencyKey, input.requestSha256],
    );
    recordAudit(tx, {
      businessId: input.businessId,
      action: 'sync_import.requested',
      subject: { type: 'sync_import', id: input.requestId },
      details: { requestId: input.requestId, requestSha256: input.requestSha256 },
    });
  });
}

/** The request a business made earlier with this Idempotency-Key, if any. */
export async function findSyncImportByKey(db: Queryable, businessId: string, idempotencyKey: string): Promise<SyncImport | undefined> {
  const [r] = await db.query('SELECT * FROM sync_imports WHERE business_id = $1 AND idempotency_key = $2', [businessId, idempotencyKey]);
  return r ? toSyncImport(r) : undefined;
}

export async function findSyncImport(db: Queryable, requestId: string): Promise<SyncImport | undefined> {
  const [r] = await db.query('SELECT * FROM sync_imports WHERE request_id = $1', [requestId]);
  return r ? toSyncImport(r) : undefined;
}

const toSyncImport = (r: Record<string, unknown>): SyncImport => ({
  requestId: String(r.request_id),
  externalId: String(r.external_id),
  requestSha256: (r.request_sha256 as string | null) ?? null,
  status: r.status as SyncImport['status'],
  entityId: (r.entity_id as string | null) ?? null,
  errorCategory: (r.error_category as ImportErrorCategory | null) ?? null,
});
