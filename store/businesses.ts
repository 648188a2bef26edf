// Businesses (the tenants) and their API keys. A key is shown once, when made; only its SHA-256
// hash is stored (keys carry 256 random bits, so a slow hash adds nothing).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { recordAudit } from './audit-log.ts';
import { iso, type Db, type Queryable } from './db.ts';
import { inTx, type Writer } from './in-tx.ts';

export type Business = { id: string; name: string; binSponsored: boolean; createdAt: string };

export const hashApiKey = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

function newApiKey(environment: string): string {
  return `vk_${environment}_${randomBytes(32).toString('base64url')}`;
}

const toBusiness = (r: Record<string, unknown>): Business => ({
  id: String(r.id),
  name: String(r.name),
  binSponsored: Boolean(r.bin_sponsored),
  createdAt: iso(r.created_at),
});

export async function insertApiKey(w: Writer, businessId: string, environment: string) {
  const apiKey = newApiKey(environment);
  const id = randomUUID();
  await inTx(w, async (tx) => {
    await tx.query('INSERT INTO api_keys (id, business_id, key_hash, key_prefix) VALUES ($1, $2, $3, $4)', [
      id,
      businessId,
      hashApiKey(apiKey),
      apiKey.slice(0, 16),
    ]);
    recordAudit(tx, { businessId, action: 'api_key.created', subject: { type: 'api_key', id } });
  });
  return { keyId: id, apiKey };
}

export async function createBusiness(db: Db, input: { name: string; binSponsored: boolean; environment: string }) {
  return db.tx(async (tx) => {
    const [row] = await tx.query('INSERT INTO businesses (id, name, bin_sponsored) VALUES ($1, $2, $3) RETURNING *', [
      randomUUID(),
      input.name,
      input.binSponsored,
    ]);
    const business = toBusiness(row!);
    recordAudit(tx, { businessId: business.id, action: 'business.created', details: { binSponsored: business.binSponsored } });
    const { apiKey, keyId } = await insertApiKey(tx, business.id, input.environment);
    return { business, apiKey, keyId };
  });
}

export async function findBusiness(db: Queryable, id: string): Promise<Business | undefined> {
  const [row] = await db.query('SELECT * FROM businesses WHERE id = $1', [id]);
  return row ? toBusiness(row) : undefined;
}

/** The business an active API key acts for, and the key's id (what the audit log names). */
export async function findApiKey(db: Queryable, apiKey: string): Promise<{ business: Business; keyId: string } | undefined> {
  const [row] = await db.query(
    `SELECT b.*, k.id AS key_id FROM api_keys k JOIN businesses b ON b.id = k.business_id
      WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [hashApiKey(apiKey)],
  );
  return row ? { business: toBusiness(row), keyId: String(row.key_id) } : undefined;
}

export async function findBusinessByApiKey(db: Queryable, apiKey: string): Promise<Business | undefined> {
  return (await findApiKey(db, apiKey))?.business;
}

export async function revokeApiKey(db: Db, businessId: string, keyId: string): Promise<boolean> {
  return db.tx(async (tx) => {
    const rows = await tx.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND business_id = $2 AND revoked_at IS NULL RETURNING id', [
      keyId,
      businessId,
    ]);
    if (rows.length === 1) recordAudit(tx, { businessId, action: 'api_key.revoked', subject: { type: 'api_key', id: keyId } });
    return rows.length === 1;
  });
}
