// The Sumsub client says when its request has left (provider/send-notice.ts): the pace counts a
// provider call against the cap from that moment. Said once the request's bytes are handed to the
// operating system — before the provider answers — and not at all when nothing could be sent.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { withSendNotice } from '../../provider/send-notice.ts';
import { createSumsubClient } from '../../provider/sumsub/client.ts';

describe('the provider client says when its request left', () => {
  let server: Server;
  let url = '';
  const arrivals: number[] = [];
  before(async () => {
    // answers 300 ms after a request arrives
    server = createServer((req, res) => {
      arrivals.push(Date.now());
      req.resume();
      req.on('end', () => setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"a1"}'), 300));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('as soon as the request has gone, before the answer', async () => {
    const client = createSumsubClient({ baseUrl: url, appToken: 'tkn', secretKey: 'sec' });
    const said: number[] = [];
    const started = Date.now();
    await withSendNotice(
      () => said.push(Date.now()),
      () => client.call('POST', '/resources/accessTokens/sdk', { userId: 'u', levelName: 'basic' }),
    );
    const answered = Date.now();
    assert.equal(said.length, 1, 'said once');
    assert.ok(said[0]! >= started && said[0]! <= arrivals.at(-1)! + 5, 'when the request left, about when it arrived');
    assert.ok(answered - said[0]! >= 290, 'long before the answer');
  });

  it('not at all when nothing could be sent', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const client = createSumsubClient({ baseUrl: `http://127.0.0.1:${port}`, appToken: 'tkn', secretKey: 'sec' });
    let said = 0;
    await assert.rejects(
      withSendNotice(
        () => said++,
        () => client.call('GET', '/resources/applicants/x/one'),
      ),
    );
    assert.equal(said, 0);
  });
});
