// Ports for processes we start (Temporal dev servers, PostgreSQL, simulators): while a port waits
// to be bound by number, no one else's "any free port" may be handed it. A CI run failed when the
// kernel gave a test's Temporal frontend port to another process in that gap.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { describe, it } from 'node:test';
import { freePort } from '../../runtime/free-port.ts';

async function listen(port: number): Promise<net.Server> {
  const server = net.createServer();
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return server;
}
const close = (server: net.Server) => new Promise<void>((r) => server.close(() => r()));
const portOf = (server: net.Server) => (server.address() as net.AddressInfo).port;

describe('free ports', () => {
  it('can be bound by number at once', async () => {
    const port = await freePort();
    const server = await listen(port);
    assert.equal(portOf(server), port);
    await close(server);
  });

  it('are not handed to anyone asking for any free port while they wait', async () => {
    const reserved = new Set(await Promise.all(Array.from({ length: 20 }, () => freePort())));
    assert.equal(reserved.size, 20);
    // 5,000 "any port" binds, 250 held at a time so each batch gets distinct ports; with a port that
    // was merely closed (the old way) about 7 of them land on one of the 20 (the range has ~14,000).
    const handedOut: number[] = [];
    for (let batch = 0; batch < 20; batch++) {
      const servers = await Promise.all(Array.from({ length: 250 }, () => listen(0)));
      handedOut.push(...servers.map(portOf));
      await Promise.all(servers.map(close));
    }
    assert.deepEqual(
      handedOut.filter((port) => reserved.has(port)),
      [],
    );
  });
});
