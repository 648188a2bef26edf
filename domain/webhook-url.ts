// Where webhooks may go: HTTPS to a public address. Plain HTTP and loopback, private, link-local,
// shared, multicast, reserved, IPv6 equivalents and IPv4-mapped forms only when a development
// setting allows them. The same rule is checked at registration (for the URL's host) and at
// delivery (for every address actually dialled).
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b::', 96], // NAT64 (embeds IPv4)
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (embeds IPv4)
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** An IPv4 address embedded as ::ffff:a.b.c.d, ::ffff:XXXX:XXXX or ::a.b.c.d, if any. */
function embeddedIPv4(address: string): string | null {
  const a = address.toLowerCase();
  const dotted = a.match(/^::(?:ffff:(?:0:)?)?(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) return dotted[1]!;
  const hex = a.match(/^::ffff:(?:0:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/);
  if (hex) {
    const n = (parseInt(hex[1]!, 16) << 16) | parseInt(hex[2]!, 16);
    return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
  }
  return null;
}

/** True when the address is not a public unicast address. */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0]!;
  const v4 = isIP(bare) === 6 ? embeddedIPv4(bare) : null;
  if (v4) return blocked.check(v4, 'ipv4');
  const family = isIP(bare);
  if (family === 0) return true; // not an address at all: never dial it
  return blocked.check(bare, family === 4 ? 'ipv4' : 'ipv6');
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
