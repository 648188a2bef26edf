// Registration-time check of a webhook URL: its form, and every address its host resolves to.
// Delivery checks again against the addresses actually dialled (activities/webhooks.ts).
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import { checkWebhookUrl, isNonPublicAddress } from '../domain/webhook-url.ts';

export async function checkDeliverableUrl(raw: string, allowInsecure: boolean): Promise<Outcome<undefined>> {
  const refused = (message: string) => refuse('webhookUrlRefused', message, { parameter: 'webhookUrl' });
  const verdict = checkWebhookUrl(raw, { allowInsecure });
  if (!verdict.ok) return refused(`${verdict.reason}.`);
  const host = verdict.url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) || allowInsecure) return done(undefined);
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true });
  } catch {
    return refused(`The host ${host} of webhookUrl does not resolve; check the host name, or use a host with a public DNS record.`);
  }
  const bad = addresses.find((a) => isNonPublicAddress(a.address));
  if (bad) return refused(`webhookUrl points at a non-public address (${host} resolves to ${bad.address}).`);
  return done(undefined);
}
