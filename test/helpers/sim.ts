// A simulator with a recipient account (us) and a donor account, and a Sumsub client for each.
import { createSumsubClient, type SumsubClient, type SumsubConfig } from '../../provider/sumsub/client.ts';
import type { Scenario } from '../../provider-sim/scenarios.ts';
import { startProviderSim, type ProviderSim } from '../../provider-sim/server.ts';
import type { SimClient } from '../../provider-sim/state.ts';

export type SimWorld = {
  sim: ProviderSim;
  us: SimClient;
  donor: SimClient;
  recipientApi: SumsubClient;
  donorApi: SumsubClient;
  clientFor(account: SimClient, overrides?: Partial<SumsubConfig>): SumsubClient;
  /** A donor applicant in the scenario, and a fresh share token for us. */
  shareToken(scenario?: Scenario, ttlInSecs?: number): Promise<{ applicantId: string; token: string }>;
  admin(method: string, path: string, body?: unknown): Promise<any>;
  close(): Promise<void>;
};

export async function startSimWorld(): Promise<SimWorld> {
  const sim = await startProviderSim();
  const us = sim.state.addClient({ clientId: 'vouch' });
  const donor = sim.state.addClient({ clientId: 'donor-fintech' });
  const clientFor = (account: SimClient, overrides: Partial<SumsubConfig> = {}) =>
    createSumsubClient({
      baseUrl: sim.url,
      appToken: account.appToken,
      secretKey: account.secretKey,
      webhookSecret: account.webhookSecret,
      timeoutMs: 2000,
      ...overrides,
    });
  const donorApi = clientFor(donor);
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sim.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return res.status === 204 ? undefined : ((await res.json()) as any);
  };
  return {
    sim,
    us,
    donor,
    recipientApi: clientFor(us),
    donorApi,
    clientFor,
    async shareToken(scenario = 'complete', ttlInSecs?: number) {
      const [a] = await admin('POST', '/_sim/applicants', { clientId: donor.clientId, scenario });
      const { token } = await donorApi.createShareToken({ applicantId: a.id, forClientId: us.clientId, ttlInSecs });
      return { applicantId: a.id, token };
    },
    admin,
    close: () => sim.close(),
  };
}
