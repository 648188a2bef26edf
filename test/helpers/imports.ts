// Helpers for token-sharing tests: donor applicants and share tokens at the simulator, CSV uploads
// and polling a batch until it finishes.
import assert from 'node:assert/strict';
import type { Scenario } from '../../provider-sim/scenarios.ts';
import type { SimClient } from '../../provider-sim/state.ts';
import { createSumsubClient, type SumsubClient } from '../../provider/sumsub/client.ts';
import type { Reply, Stack } from './stack.ts';
import { eventually } from './eventually.ts';

export type Donor = {
  account: SimClient;
  api: SumsubClient;
  /** A fresh share token for us, for a donor applicant in the scenario. */
  token(scenario?: Scenario, ttlInSecs?: number): Promise<string>;
  tokens(count: number, scenario?: Scenario): Promise<string[]>;
};

export function donorAt(stack: Stack, clientId = `donor-${Math.random().toString(36).slice(2, 8)}`): Donor {
  const sim = stack.sim!;
  const account = sim.state.addClient({ clientId, limits: { postPer5s: 1_000_000, getPer5s: 1_000_000 } });
  const api = createSumsubClient({ baseUrl: sim.url, appToken: account.appToken, secretKey: account.secretKey });
  const tokens = async (count: number, scenario: Scenario = 'complete', ttlInSecs?: number) => {
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      const a = sim.state.addScenarioApplicant(account.clientId, scenario, undefined, i);
      out.push((await api.createShareToken({ applicantId: a.id, forClientId: stack.recipient!.clientId, ttlInSecs })).token);
    }
    return out;
  };
  return { account, api, tokens, token: async (scenario = 'complete', ttl) => (await tokens(1, scenario, ttl))[0]! };
}

export async function upload(
  stack: Stack,
  key: string,
  csv: string | Uint8Array,
  headers: Record<string, string | undefined> = {},
  field = 'file',
): Promise<Reply> {
  const form = new FormData();
  form.append(field, new Blob([typeof csv === 'string' ? csv : Buffer.from(csv)], { type: 'text/csv' }), 'batch.csv');
  const h: Record<string, string> = { 'x-vouch-api-key': key, 'X-Provider': 'sumsub', 'Idempotency-Key': `k-${Math.random()}` };
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) delete h[k];
    else h[k] = v;
  }
  const res = await fetch(`${stack.url}/entity/kyc/import/batch`, { method: 'POST', headers: h, body: form });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

export const csvOf = (header: string, rows: string[][]) => [header, ...rows.map((r) => r.join(','))].join('\n') + '\n';

/** Polls the status endpoint until the batch leaves pending/in_progress (or time runs out). */
export async function waitForBatch(stack: Stack, key: string, batchId: string, timeoutMs = 60_000): Promise<any> {
  let last = '';
  return eventually(
    `batch ${batchId} finished`,
    async () => {
      const res = await stack.request('GET', `/entity/kyc/import/batch/${batchId}`, { key });
      assert.equal(res.status, 200, res.text);
      last = res.text.slice(0, 300);
      return !['pending', 'in_progress'].includes(res.body.status) && res.body;
    },
    { timeoutMs, everyMs: 100, state: () => last },
  );
}

export async function createEntities(stack: Stack, key: string, externalIds: string[], type = 'INDIVIDUAL') {
  const ids: string[] = [];
  for (const externalId of externalIds) {
    const res = await stack.request('POST', '/entity', { key, json: { externalId, type } });
    assert.equal(res.status, 201, res.text);
    ids.push(res.body.id);
  }
  return ids;
}
