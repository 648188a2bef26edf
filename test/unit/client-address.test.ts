// The client address a limit is kept for (domain/client-address.ts): the peer's, unless the peer
// is a proxy we trust; then the nearest untrusted address it forwarded, never one the client wrote.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientAddress, parseAddressRanges } from '../../domain/client-address.ts';

describe('client address', () => {
  const proxies = parseAddressRanges('10.0.0.0/8, 192.0.2.7, 2001:db8::/32');

  it('is the peer when no proxy is trusted, whatever X-Forwarded-For says (a client cannot name another address)', () => {
    assert.equal(clientAddress('203.0.113.9', '198.51.100.1', []), '203.0.113.9');
    assert.equal(clientAddress('::ffff:203.0.113.9', undefined, []), '203.0.113.9', 'an IPv4-mapped peer is its IPv4 address');
    assert.equal(clientAddress('10.1.2.3', '198.51.100.1', parseAddressRanges('192.0.2.0/24')), '10.1.2.3', 'a peer outside the trusted ranges');
  });

  it('behind trusted proxies, is the nearest untrusted hop read from the right; the entries a client wrote to its left are ignored', () => {
    assert.equal(clientAddress('10.0.0.5', '198.51.100.1', proxies), '198.51.100.1');
    assert.equal(clientAddress('10.0.0.5', '6.6.6.6, 198.51.100.1, 10.2.0.1, 192.0.2.7', proxies), '198.51.100.1', 'the forged 6.6.6.6 is not taken');
    assert.equal(clientAddress('2001:db8::1', '2001:db9::5', proxies), '2001:db9::5');
    assert.equal(clientAddress('10.0.0.5', '[2001:db9::5]:4711', proxies), '2001:db9::5', 'a bracketed address with a port');
  });

  it('falls back to the peer when the header is missing, malformed or names only proxies', () => {
    assert.equal(clientAddress('10.0.0.5', undefined, proxies), '10.0.0.5');
    assert.equal(clientAddress('10.0.0.5', 'not-an-address', proxies), '10.0.0.5');
    assert.equal(clientAddress('10.0.0.5', '6.6.6.6, garbage', proxies), '10.0.0.5', 'nothing left of a malformed hop is believed');
    assert.equal(clientAddress('10.0.0.5', '10.9.9.9, 192.0.2.7', proxies), '10.0.0.5');
  });

  it('parses addresses and CIDR ranges, and refuses anything else', () => {
    assert.equal(parseAddressRanges('').length, 0);
    assert.deepEqual(
      parseAddressRanges(' 10.0.0.0/8 ,192.0.2.7').map(([a, bits]) => `${a.toString()}/${bits}`),
      ['10.0.0.0/8', '192.0.2.7/32'],
    );
    assert.throws(() => parseAddressRanges('10.0.0.0/33'));
    assert.throws(() => parseAddressRanges('example.com'));
  });
});
