// The simulator as `npm start` and `npm run provider-sim` run it: two accounts — our recipient
// account and a donor fintech — with development credentials generated once into
// DATA_DIR/provider-sim.json (git-ignored), and one donor applicant per scenario, listed in
// DATA_DIR/sample-applicants.csv for trying the kyc-share-token CLI.
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SCENARIOS } from './scenarios.ts';
import { startProviderSim, type ProviderSim } from './server.ts';
import { replaceAtomically } from '../runtime/secret-file.ts';
import { SIMULATOR_CREDENTIALS_FILE } from '../runtime/simulator-credentials.ts';

type Account = { clientId: string; appToken: string; secretKey: string; webhookSecret: string };
export type DevSimCredentials = { recipient: Account; donor: Account };

const account = (clientId: string): Account => ({
  clientId,
  appToken: `sbx:${randomBytes(18).toString('base64url')}`,
  secretKey: randomBytes(24).toString('base64url'),
  webhookSecret: randomBytes(24).toString('base64url'),
});

export async function devSimCredentials(dataDir: string, recipientClientId: string): Promise<DevSimCredentials> {
  const file = path.join(dataDir, SIMULATOR_CREDENTIALS_FILE);
  try {
    const saved = JSON.parse(await readFile(file, 'utf8')) as DevSimCredentials;
    if (saved.recipient.clientId === recipientClientId) return saved;
  } catch {
    // first run: generate below
  }
  const creds = { recipient: account(recipientClientId), donor: account('donor-fintech') };
  replaceAtomically(file, JSON.stringify(creds, null, 2)); // mode 600 from the start, never half written
  return creds;
}

export async function startDevProviderSim(options: {
  dataDir: string;
  port: number;
  /** 127.0.0.1 unless told (compose: 0.0.0.0 on its network). */
  host?: string;
  recipientClientId: string;
  webhookUrl?: string;
}): Promise<{ sim: ProviderSim; credentials: DevSimCredentials; samplesCsv: string }> {
  const credentials = await devSimCredentials(options.dataDir, options.recipientClientId);
  const sim = await startProviderSim({ port: options.port, host: options.host });
  sim.state.addClient({ ...credentials.recipient, webhookUrl: options.webhookUrl ?? null });
  sim.state.addClient(credentials.donor);
  const rows = ['externalId,applicantId'];
  SCENARIOS.forEach((scenario, i) => {
    const a = sim.state.addScenarioApplicant(credentials.donor.clientId, scenario, `sample-${scenario}`, i);
    rows.push(`sample-${scenario},${a.id}`);
  });
  const samplesCsv = path.join(options.dataDir, 'sample-applicants.csv');
  await writeFile(samplesCsv, `${rows.join('\n')}\n`);
  return { sim, credentials, samplesCsv };
}
