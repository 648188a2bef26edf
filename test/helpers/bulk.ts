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
