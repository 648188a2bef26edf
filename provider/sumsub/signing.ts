// Sumsub's request and webhook signatures, shared by our client and the simulator.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** X-App-Access-Sig: lowercase hex HMAC-SHA256 over ts + METHOD + path-with-query + raw body. */
export function signRequest(secretKey: string, ts: number | string, method: string, pathWithQuery: string, body: Buffer | string = ''): string {
  return createHmac('sha256', secretKey).update(`${ts}${method.toUpperCase()}${pathWithQuery}`).update(body).digest('hex');
}

export const WEBHOOK_DIGEST_ALGORITHMS = {
  HMAC_SHA1_HEX: 'sha1',
  HMAC_SHA256_HEX: 'sha256',
  HMAC_SHA512_HEX: 'sha512',
} as const;

export type WebhookDigestAlgorithm = keyof typeof WEBHOOK_DIGEST_ALGORITHMS;

/** x-payload-digest: hex HMAC of the raw webhook body with the webhook secret. */
export function webhookDigest(secret: string, rawBody: Buffer | string, algorithm: WebhookDigestAlgorithm = 'HMAC_SHA256_HEX'): string {
  return createHmac(WEBHOOK_DIGEST_ALGORITHMS[algorithm], secret).update(rawBody).digest('hex');
}

/** Constant-time comparison of two hex strings of any length. */
export function hexEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

export function verifyWebhookDigest(secret: string, rawBody: Buffer | string, digest: string | undefined, algorithm: string | undefined): boolean {
  if (!digest) return false;
  const alg = (algorithm ?? 'HMAC_SHA256_HEX') as WebhookDigestAlgorithm;
  if (!(alg in WEBHOOK_DIGEST_ALGORITHMS)) return false;
  return hexEqual(webhookDigest(secret, rawBody, alg), digest.toLowerCase());
}
