// Which address a request comes from, for limits kept per client. The socket's peer, unless that
// peer is a proxy we were told to trust (TRUSTED_PROXIES: a load balancer, an ingress): then the
// nearest address in X-Forwarded-For that is not one of them, read from the right — the entries
// to its left are whatever the client wrote, and trusting them would let it name any address.
import ipaddr from 'ipaddr.js';

export type AddressRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses `10.0.0.0/8, 2001:db8::/32, 192.0.2.7` (a bare address is a range of one); throws on anything else. */
export function parseAddressRanges(list: string): AddressRange[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      if (s.includes('/')) {
        const [addr, bits] = ipaddr.parseCIDR(s);
        return [addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr, bits] as AddressRange;
      }
      const addr = ipaddr.process(s);
      return [addr, addr.kind() === 'ipv4' ? 32 : 128] as AddressRange;
    });
}

/** The address in its one written form (an IPv4-mapped IPv6 address as IPv4); undefined when it is not an address. */
function normal(raw: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = raw.trim().replace(/^\[|\](:\d+)?$/g, '');
  if (!ipaddr.isValid(bare)) return undefined;
  return ipaddr.process(bare);
}

const within = (addr: ipaddr.IPv4 | ipaddr.IPv6, ranges: readonly AddressRange[]) =>
  ranges.some(([range, bits]) => range.kind() === addr.kind() && addr.match(range, bits));

/** The client's address: the peer's, or — behind trusted proxies — the nearest untrusted one they forwarded. */
export function clientAddress(peer: string, forwardedFor: string | undefined, trusted: readonly AddressRange[]): string {
  const socket = normal(peer);
  if (!socket) return peer;
  if (!forwardedFor || !within(socket, trusted)) return socket.toString();
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normal(hops[i]!);
    if (!hop) return socket.toString(); // a malformed entry: nothing to its left can be believed
    if (!within(hop, trusted)) return hop.toString();
  }
  return socket.toString(); // every hop a proxy of ours
}
