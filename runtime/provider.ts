// Builds the identity-provider client from configuration.
import { createSumsubClient } from '../provider/sumsub/client.ts';
import { verifyWebhookDigest } from '../provider/sumsub/signing.ts';
import { PROVIDER_REQUEST_METHODS, type IdentityProvider } from '../provider/types.ts';
import { ConfigError, type Config } from './config.ts';

export function createProvider(config: Config): IdentityProvider {
  const p = config.provider;
  if (!p.baseUrl || !p.appToken || !p.secretKey) {
    throw new ConfigError(
      'the identity provider is not configured: set PROVIDER_BASE_URL, PROVIDER_APP_TOKEN and PROVIDER_SECRET_KEY (npm start fills them in with the simulator)',
    );
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

/**
 * The provider of a worker without the provider role (runtime/secrets-by-role.ts): it holds no
 * credentials, and every call fails loudly. Its activities never run there (every provider call is
 * on the provider queue); this stands where the activity code expects a provider.
 */
export function noProvider(): IdentityProvider {
  const refuse = (name: string) => () => {
    throw new Error(`${name}: this worker has no provider role (WORKER_ROLES), so it holds no provider credentials`);
  };
  return {
    name: 'none',
    ...(Object.fromEntries(PROVIDER_REQUEST_METHODS.map((r) => [r, refuse(r)])) as unknown as Omit<IdentityProvider, 'name' | 'verifyWebhook'>),
    verifyWebhook: () => false,
  };
}

/** Headers as Node gives them. */
export type RawHeaders = Record<string, string | string[] | undefined>;

/**
 * Checks a provider callback's x-payload-digest over the raw body with PROVIDER_WEBHOOK_SECRET. It
 * needs no provider credentials, so the API checks callbacks without being able to call the provider.
 */
export function providerWebhookVerifier(config: Config): (raw: Buffer, headers: RawHeaders) => boolean {
  const secret = config.provider.webhookSecret;
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return (raw, headers) => Boolean(secret) && verifyWebhookDigest(secret!, raw, first(headers['x-payload-digest']), first(headers['x-payload-digest-alg']));
}
