// A sandbox whose provider is the bundled simulator running as a service of its own (compose's
// `sandbox` profile): the simulator makes its development accounts into DATA_DIR/provider-sim.json
// on the volume it shares with the API and the workers, and they read our account from there — so
// the sandbox runs without provider credentials and none are written into a file of the repo.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from './config.ts';

/** The simulator's development accounts, in DATA_DIR (provider-sim/dev.ts makes it). */
export const SIMULATOR_CREDENTIALS_FILE = 'provider-sim.json';

type Account = { clientId: string; appToken: string; secretKey: string; webhookSecret: string };

/**
 * Fills in our provider account from the simulator's file, only in the sandbox, only when a provider
 * address is set and no app token is, and only when the file names our client id. Anything else is
 * left as it is (a worker without credentials then refuses to start, naming them).
 */
export function withSimulatorCredentials(config: Config): void {
  const p = config.provider;
  if (config.environment !== 'sandbox' || !p.baseUrl || p.appToken) return;
  let recipient: Account | undefined;
  try {
    recipient = (JSON.parse(readFileSync(path.join(config.dataDir, SIMULATOR_CREDENTIALS_FILE), 'utf8')) as { recipient?: Account }).recipient;
  } catch {
    return;
  }
  if (recipient?.clientId !== p.clientId) return;
  Object.assign(p, { appToken: recipient.appToken, secretKey: recipient.secretKey, webhookSecret: p.webhookSecret ?? recipient.webhookSecret });
}
