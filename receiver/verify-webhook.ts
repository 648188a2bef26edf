// For receivers of Vouch webhooks: checks `vouch-signature` over the raw request body.
// Standalone (Node's crypto only), so it can be copied into any Node.js service.
//
//   import { verifyWebhook } from './verify-webhook.ts';
//   if (!verifyWebhook(rawBody, req.headers['vouch-signature'], publicKeysPem)) return res.status(401).end();
//
// Verify the raw bytes as received: parsing and re-serialising the JSON changes key order and
// whitespace and breaks the signature.
import { constants, verify } from 'node:crypto';

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
