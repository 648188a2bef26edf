// Businesses (the tenants) and their API keys. A key is shown once, when made; only its SHA-256
// hash is stored (keys carry 256 random bits, so a slow hash adds nothing).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { iso, type Db, type Queryable } from './db.ts';

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

export async function insertApiKey(q: Queryable, businessId: string, environment: string) {
  const apiKey = newApiKey(environment);
  const id = randomUUID();
  await q.query('INSERT INTO api_keys (id, business_id, key_hash, key_prefix) VALUES ($1, $2, $3, $4)', [
    id,
    businessId,
    hashApiKey(apiKey),
    apiKey.slice(0, 16),
  ]);
  return { keyId: id, apiKey };
}

export async function createBusiness(db: Db, input: { name: string; binSponsored: boolean; environment: string }) {
  return db.tx(async (q) => {
    const [row] = await q.query('INSERT INTO businesses (id, name, bin_sponsored) VALUES ($1, $2, $3) RETURNING *', [
      randomUUID(),
      input.name,
      input.binSponsored,
    ]);
    const business = toBusiness(row!);
    const { apiKey, keyId } = await insertApiKey(q, business.id, input.environment);
    return { business, apiKey, keyId };
  });
}

export async function findBusiness(db: Queryable, id: string): Promise<Business | undefined> {
  const [row] = await db.query('SELECT * FROM businesses WHERE id = $1', [id]);
  return row ? toBusiness(row) : undefined;
}

export async function findBusinessByApiKey(db: Queryable, apiKey: string): Promise<Business | undefined> {
  const [row] = await db.query(
    `SELECT b.* FROM api_keys k JOIN businesses b ON b.id = k.business_id
      WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [hashApiKey(apiKey)],
  );
  return row ? toBusiness(row) : undefined;
}

export async function revokeApiKey(db: Queryable, businessId: string, keyId: string): Promise<boolean> {
  const rows = await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND business_id = $2 AND revoked_at IS NULL RETURNING id', [
    keyId,
    businessId,
  ]);
  return rows.length === 1;
}
