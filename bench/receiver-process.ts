// A webhook receiver in a process of its own (bench/helpers.ts receiverProcess): answers 200 at once
// and tells its parent, ten times a second, how many deliveries of the counted event type arrived.
// The receiver is the client's system: on the same machine, but not in Vouch's process.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const eventType = process.argv[2];
let deliveries = 0;
const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const event = JSON.parse(Buffer.concat(chunks).toString()) as { eventType: string };
  if (eventType === undefined || event.eventType === eventType) deliveries++;
  res.writeHead(200).end('ok');
});
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
const tell = setInterval(() => process.send!({ deliveries }), 100);
process.on('disconnect', () => {
  clearInterval(tell);
  server.closeAllConnections();
  server.close();
});
