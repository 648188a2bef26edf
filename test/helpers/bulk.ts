// Large fixtures made fast: entities inserted in bulk, and donor share tokens minted straight in the
// simulator's state (the import itself still goes over HTTP, signed, through the real client).
import { randomUUID } from 'node:crypto';
import type { Scenario } from '../../provider-sim/scenarios.ts';
import type { ProviderSim } from '../../provider-sim/server.ts';
import type { Db } from '../../store/db.ts';

export async function bulkEntities(db: Db, businessId: string, externalIds: string[]): Promise<void> {
  for (let i = 0; i < externalIds.length; i += 1000) {
    const chunk = externalIds.slice(i, i + 1000);
    await db.query('INSERT INTO entities (id, business_id, external_id, type) SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[])', [
      chunk.map(() => randomUUID()),
      chunk.map(() => businessId),
      chunk,
      chunk.map(() => 'INDIVIDUAL'),
    ]);
  }
}

export function bulkTokens(sim: ProviderSim, donorClientId: string, forClientId: string, scenarios: Scenario[]): string[] {
  if (!sim.state.clients.has(donorClientId)) sim.state.addClient({ clientId: donorClientId });
  return scenarios.map((scenario, i) => {
    const a = sim.state.addScenarioApplicant(donorClientId, scenario, undefined, i);
    return sim.state.mintShareToken(a.id, donorClientId, forClientId, 1200).token;
  });
}

/**
 * An identity document (ukyc-id-document) per person, recorded as an upload leaves it with no
 * submission open: the file's row and its FILE requirement (no bytes: deciding reads the rows only).
 */
export async function bulkIdDocuments(db: Db, businessId: string, entityIds: string[]): Promise<void> {
  for (let i = 0; i < entityIds.length; i += 1000) {
    const chunk = entityIds.slice(i, i + 1000);
    const fileIds = chunk.map(() => randomUUID());
    await db.query(
      `INSERT INTO files (id, business_id, entity_id, slug, file_name, content_type, size, sha256, storage_key)
       SELECT f, $2::uuid, e, 'ukyc-id-document', 'passport.pdf', 'application/pdf', 100, repeat('0', 64), $2::text || '/' || e || '/' || f
         FROM unnest($1::uuid[], $3::uuid[]) AS u(f, e)`,
      [fileIds, businessId, chunk],
    );
    await db.query(
      `INSERT INTO entity_requirements (id, entity_id, requirement_slug, value, file_id)
       SELECT gen_random_uuid(), e, 'ukyc-id-document', '{"fileName":"passport.pdf","contentType":"application/pdf","size":100}', f
         FROM unnest($1::uuid[], $2::uuid[]) AS u(f, e)`,
      [fileIds, chunk],
    );
  }
}

/** The entity ids of these externalIds in the business. */
export async function entityIdsOf(db: Db, businessId: string, externalIds: string[]): Promise<string[]> {
  const rows = await db.query<{ id: string; external_id: string }>('SELECT id, external_id FROM entities WHERE business_id = $1 AND external_id = ANY($2)', [
    businessId,
    externalIds,
  ]);
  const byExternal = new Map(rows.map((r) => [String(r.external_id), String(r.id)]));
  return externalIds.map((e) => byExternal.get(e)!);
}
