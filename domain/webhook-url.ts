// Where webhooks may go: HTTPS to a public address. Plain HTTP and anything but a global unicast
// address (loopback, private, link-local, shared, multicast, reserved, documentation, and IPv6 forms
// that embed or translate an IPv4 address: IPv4-mapped and -compatible, NAT64, 6to4, Teredo) only
// when a development setting allows them. The same rule is checked at registration (for the URL's
// host) and at delivery (for every address actually dialled). Ranges come from ipaddr.js.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** IPv6 global unicast (RFC 4291 2.4): 2000::/3; everything else is special or embeds IPv4. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** True when the address is not a public unicast address. */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0]!;
  if (isIP(bare) === 0) return true; // not an address at all: never dial it
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(bare); // an IPv4-mapped IPv6 address is judged as its IPv4 address
  } catch {
    return true;
  }
  if (parsed.kind() === 'ipv4') return parsed.range() !== 'unicast';
  return !(parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_V6) || parsed.range() !== 'unicast';
}

export type UrlVerdict = { ok: true; url: URL } | { ok: false; reason: string };

/** Checks the URL's form and, when its host is an address literal, the address. */
/** The characters of a URI (RFC 3986: printable ASCII, no space), as a regular-expression class. */
export const URI_CHARACTER = '[\\x21-\\x7e]';
const URI = new RegExp(`^${URI_CHARACTER}+$`);

export function checkWebhookUrl(raw: string, options: { allowInsecure: boolean }): UrlVerdict {
  // a URI, as documented: a URL parser would also take an IRI or spaces and rewrite them
  if (!URI.test(raw)) return { ok: false, reason: 'webhookUrl must be an ASCII URI: no spaces, internationalized host names in punycode (xn--…)' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'webhookUrl is not a valid absolute URL' };
  }
  if (url.protocol !== 'https:' && !(options.allowInsecure && url.protocol === 'http:')) {
    return { ok: false, reason: 'webhookUrl must use https' };
  }
  if (url.username || url.password) return { ok: false, reason: 'webhookUrl must not carry credentials' };
  if (url.hash) return { ok: false, reason: 'webhookUrl must not have a fragment' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && isNonPublicAddress(host) && !options.allowInsecure) {
    return { ok: false, reason: `webhookUrl points at a non-public address (${host})` };
  }
  if (!isIP(host) && /^(localhost|.*\.localhost|.*\.local|.*\.internal)$/i.test(host) && !options.allowInsecure) {
    return { ok: false, reason: `webhookUrl points at a local host name (${host})` };
  }
  return { ok: true, url };
}
