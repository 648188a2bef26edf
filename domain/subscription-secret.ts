// A subscription's own secret (issue 38, item 2), in the Standard Webhooks symmetric form that its
// reference libraries (npm and PyPI `standardwebhooks`, Svix's) verify with no code of ours:
// `whsec_` and the Base64 of 32 random bytes; each delivery's `webhook-signature` carries
// `v1,<Base64 HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>">` per secret in force,
// beside the environment's `v1a` (Ed25519) signature. One secret per subscription, as the standard
// advises: a receiver's secret verifies its own deliveries and no one else's.
import { createHmac, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { signedContent } from './standard-webhooks.ts';

export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** How long the secret a rotation replaces still signs beside the new one (Svix's rule). */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 3_600_000;

export const newSubscriptionSecret = (): string => `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;

/** The `v1,…` signatures of a message, one per secret (current first), space-separated. */
export function hmacSignatures(secrets: readonly string[], message: { id: string; timestamp: string; body: string }): string {
  const content = signedContent(message);
  return secrets
    .map(
      (secret) =>
        `v1,${createHmac('sha256', Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64'))
          .update(content, 'utf8')
          .digest('base64')}`,
    )
    .join(' ');
}

/** What GET /notification/{id}/secret and POST …/secret/rotate answer. */
export const subscriptionSecretSchema = z.object({
  secret: z.string().meta({ description: 'whsec_ and the Base64 of 32 random bytes: verify `webhook-signature` v1 with a Standard Webhooks library' }),
  previousSecretExpiresAt: z
    .string()
    .nullable()
    .meta({ description: 'Until then the secret this one replaced still signs too (a second v1 signature); null when none does' }),
});
export type SubscriptionSecret = z.input<typeof subscriptionSecretSchema>;
