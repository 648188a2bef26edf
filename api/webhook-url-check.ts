// Registration-time check of a webhook URL: its form, and every address its host resolves to.
// Delivery checks again against the addresses actually dialled (activities/webhooks.ts).
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ApiError } from '../domain/errors.ts';
import { checkWebhookUrl, isNonPublicAddress } from '../domain/webhook-url.ts';

export async function assertDeliverableUrl(raw: string, allowInsecure: boolean): Promise<void> {
  const verdict = checkWebhookUrl(raw, { allowInsecure });
  if (!verdict.ok) throw new ApiError('webhookUrlRefused', `${verdict.reason}.`, { parameter: 'webhookUrl' });
  const host = verdict.url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) || allowInsecure) return;
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true });
  } catch {
    throw new ApiError('webhookUrlRefused', `The host ${host} of webhookUrl does not resolve.`, { parameter: 'webhookUrl' });
  }
  const bad = addresses.find((a) => isNonPublicAddress(a.address));
  if (bad) throw new ApiError('webhookUrlRefused', `webhookUrl points at a non-public address (${host} resolves to ${bad.address}).`, { parameter: 'webhookUrl' });
}
