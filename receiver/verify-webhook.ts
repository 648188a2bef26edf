// For receivers of Vouch webhooks: checks `vouch-signature` over the raw request body, and the
// Standard Webhooks `webhook-signature` with its replay window.
// Standalone (Node's crypto only), so it can be copied into any Node.js service.
//
//   import { verifyWebhook } from './verify-webhook.ts';
//   if (!verifyWebhook(rawBody, req.headers['vouch-signature'], publicKeysPem)) return res.status(401).end();
//
// Verify the raw bytes as received: parsing and re-serialising the JSON changes key order and
// whitespace and breaks the signature.
import { constants, createPublicKey, verify } from 'node:crypto';

export function verifyWebhook(
  rawBody: Buffer | string,
  signature: string | string[] | undefined | null,
  publicKeys: readonly (string | { publicKeyPem: string })[],
): boolean {
  const sig = Array.isArray(signature) ? signature[0] : signature;
  if (!sig || !/^[A-Za-z0-9+/]+={0,2}$/.test(sig)) return false;
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  const bytes = Buffer.from(sig, 'base64');
  return publicKeys.some((k) => {
    try {
      return verify('sha512', body, { key: typeof k === 'string' ? k : k.publicKeyPem, padding: constants.RSA_PKCS1_PADDING }, bytes);
    } catch {
      return false;
    }
  });
}

/** How far a `webhook-timestamp` may be from now, by default: the standard's five minutes (each retry is signed anew). */
export const TOLERANCE_SECONDS = 300;

/**
 * Checks `webhook-signature` (Standard Webhooks, v1a: Ed25519 over `<webhook-id>.<webhook-timestamp>.<raw body>`)
 * and refuses a `webhook-timestamp` more than `toleranceSeconds` from now, so a captured delivery
 * replayed later is refused. Keys: `whpk_…` (the Standard Webhooks form) or PEM, from
 * GET /webhook-keys `standardWebhooks.keys`. Each retry is signed anew with a fresh timestamp; the
 * same `webhook-id` on every attempt still tells a retry from a new event (deduplicate on it).
 */
export function verifyStandardWebhook(
  rawBody: Buffer | string,
  headers: Record<string, string | string[] | undefined>,
  publicKeys: readonly (string | { publicKey: string })[],
  options: { now?: Date; toleranceSeconds?: number } = {},
): { ok: true } | { ok: false; reason: 'missing headers' | 'timestamp outside tolerance' | 'no valid signature' } {
  const header = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  if (!id || !timestamp || !signatures || !/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'missing headers' };
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? TOLERANCE_SECONDS)) return { ok: false, reason: 'timestamp outside tolerance' };
  // the body's bytes as received (decoding them could replace an invalid sequence and still verify)
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  const content = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), body]);
  const keys = publicKeys.flatMap((k) => {
    const text = typeof k === 'string' ? k : k.publicKey;
    try {
      return [
        text.startsWith('whpk_')
          ? createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(text.slice(5), 'base64').toString('base64url') }, format: 'jwk' })
          : createPublicKey(text),
      ];
    } catch {
      return []; // not a key: it verifies nothing
    }
  });
  for (const candidate of signatures.split(' ')) {
    const [version, value] = candidate.split(',');
    if (version !== 'v1a' || !value) continue;
    const signature = Buffer.from(value, 'base64');
    const holds = (key: ReturnType<typeof createPublicKey>) => {
      try {
        return verify(null, content, key, signature);
      } catch {
        return false; // a key of another type
      }
    };
    if (keys.some(holds)) return { ok: true };
  }
  return { ok: false, reason: 'no valid signature' };
}
