// A loopback port for a process we start next (or a server of ours that binds it a moment later).
import { once } from 'node:events';
import net from 'node:net';

/**
 * A free TCP port on `host`, held back from everyone else's "any free port" for about a minute.
 *
 * Asking the kernel for port 0 and closing the socket leaves a window in which any other process
 * asking for port 0 may be handed the same port; with several test files and Temporal dev servers
 * starting at once, one of them then fails to bind (the Temporal dev server panics). So the port
 * is first put in TIME_WAIT, by a connection to it that our side closes first: the kernel does not
 * hand a port in TIME_WAIT to a bind to port 0, while a server that binds it by number with
 * SO_REUSEADDR (Node, Go, Rust, PostgreSQL and Python's HTTP servers all set it) gets it at once.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = net.createServer();
  server.listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  try {
    const accepted = once(server, 'connection') as Promise<[net.Socket]>;
    const client = net.connect(port, host);
    await once(client, 'connect');
    const [ours] = await accepted;
    const clientClosed = once(client, 'close');
    client.on('end', () => client.end());
    ours.end(); // our side sends the first FIN, so the TIME_WAIT is on this port
    await Promise.all([once(ours, 'close'), clientClosed]);
  } finally {
    server.close();
  }
  return port;
}
