// Builds the identity-provider client from configuration.
import { createSumsubClient } from '../provider/sumsub/client.ts';
import type { IdentityProvider } from '../provider/types.ts';
import { ConfigError, type Config } from './config.ts';

export function createProvider(config: Config): IdentityProvider {
  const p = config.provider;
  if (!p.baseUrl || !p.appToken || !p.secretKey) {
    throw new ConfigError('the identity provider is not configured: set PROVIDER_BASE_URL, PROVIDER_APP_TOKEN and PROVIDER_SECRET_KEY (npm start fills them in with the simulator)');
  }
  return createSumsubClient({
    baseUrl: p.baseUrl,
    appToken: p.appToken,
    secretKey: p.secretKey,
    webhookSecret: p.webhookSecret,
    timeoutMs: p.timeoutMs,
    legacyImport: p.legacyImport,
  });
}
