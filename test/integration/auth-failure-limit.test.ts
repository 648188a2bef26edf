// A flood of wrong keys from one address, refused before it costs the database (api/middleware/
// auth-failure-limit.ts): AUTH_FAILURE_LIMIT_PER_SECOND 401s an address, then 429 with Retry-After
// and no key looked up; other addresses, and requests that need no key, go on as before.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { listen } from '../../api/server.ts';
import { parseAddressRanges } from '../../domain/client-address.ts';
import { createLogger } from '../../runtime/logger.ts';
import type { Db } from '../../store/db.ts';
import { startStack, testKeyRings, type Stack } from '../helpers/stack.ts';

const PER_SECOND = 5;

describe('wrong keys from one address', () => {
  let stack: Stack;
  let key: string;
  before(async () => {
    stack = await startStack();
    key = (await stack.newBusiness({ name: 'Keyed' })).apiKey;
  });
  after(() => stack.close());

  /** An API on the stack's database that counts its API-key lookups, with these proxies trusted. */
  async function api(trusted: string) {
    const counted = { lookups: 0 };
    const db = Object.assign(Object.create(stack.db) as Db, {
      query: (text: string, params?: unknown[]) => {
        if (text.includes('FROM api_keys')) counted.lookups++;
        return stack.db.query(text, params as never);
      },
    });
    const config = { ...stack.config, http: { ...stack.config.http, authFailuresPerSecond: PER_SECOND, trustedProxies: parseAddressRanges(trusted) } };
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l));
        done();
      },
    });
    const server = await listen({ config, db, temporal: stack.temporal, log: createLogger('info', 'vouch-test', sink), keys: testKeyRings() }, 0);
    const get = async (path: string, headers: Record<string, string>) => {
      const res = await fetch(`${server.url}${path}`, { headers: { 'accept-version': 'v1.0', ...headers } });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { code: string; parameter: string } };
    };
    /** `n` requests at once; their answers, and how many a second's refill could have let through meanwhile. */
    const flood = async (n: number, headers: (i: number) => Record<string, string>) => {
      const started = performance.now();
      const answers = await Promise.all(Array.from({ length: n }, (_, i) => get('/features', headers(i))));
      return { answers, leak: Math.ceil((PER_SECOND * (performance.now() - started)) / 1000) + 1 };
    };
    return { counted, lines, get, flood, close: () => server.close() };
  }

  it('answers 401 to the first AUTH_FAILURE_LIMIT_PER_SECOND, then 429 with Retry-After without looking the key up; another address is served', async () => {
    const a = await api('127.0.0.1');
    try {
      const from = (addr: string, k: string) => ({ 'x-forwarded-for': addr, 'x-vouch-api-key': k });
      const wrong = await a.flood(PER_SECOND, (i) => from('203.0.113.7', `vk_sandbox_wrong${i}`));
      assert.deepEqual(
        wrong.answers.map((r) => r.status),
        Array(PER_SECOND).fill(401),
      );
      const lookups = a.counted.lookups;
      const { answers, leak } = await a.flood(200, (i) => from('203.0.113.7', `vk_sandbox_flood${i}`));
      assert.ok(!answers.some((r) => r.status === 200), 'none served');
      const refused = answers.filter((r) => r.status === 429);
      // what refills while the flood arrives (PER_SECOND a second) may each cost a lookup, nothing more
      assert.ok(refused.length >= 200 - leak, `${refused.length} of 200 refused at once (at most ${leak} refilled meanwhile)`);
      assert.deepEqual([refused[0]!.body.code, refused[0]!.body.parameter, Number(refused[0]!.retryAfter) >= 1], ['0000000910', '', true]);
      assert.ok(a.counted.lookups - lookups <= leak, `${a.counted.lookups - lookups} key lookups for 200 requests`);
      // the refused requests have no log line each: one warning sums them up (and at most one every 10 s)
      assert.equal(a.lines.filter((l) => l.msg === 'request' && l.status === 429).length, 0);
      const summaries = a.lines.filter((l) => l.msg === 'requests refused unread: too many 401s from their addresses');
      assert.deepEqual([summaries.length, summaries[0]?.refused, summaries[0]?.addresses], [1, 1, 1], 'the first refusal is reported at once');
      // the flooded address with a valid key shares the flood's fate (it is the same address) …
      assert.equal((await a.get('/features', from('203.0.113.7', key))).status, 429);
      // … another address is served, and requests that need no key are not counted
      assert.equal((await a.get('/features', from('198.51.100.9', key))).status, 200);
      for (let i = 0; i < 20; i++) assert.equal((await a.get('/health', from('198.51.100.10', ''))).status, 200);
      const burst = await a.flood(50, () => from('198.51.100.11', key)); // a client with a valid key, 50 at once: no 401 on record, no limit
      assert.deepEqual([...new Set(burst.answers.map((r) => r.status))], [200]);
      assert.equal((await a.get('/features', from('198.51.100.10', key))).status, 200);
      // a token back (1 / PER_SECOND s later), the address's valid key is served again
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal((await a.get('/features', from('203.0.113.7', key))).status, 200);
    } finally {
      await a.close();
    }
  });

  it('without trusted proxies the peer is the address: a forged X-Forwarded-For does not escape the limit', async () => {
    const a = await api('');
    try {
      const forged = (n: number, first: number) => a.flood(n, (i) => ({ 'x-forwarded-for': `198.51.100.${first + i}`, 'x-vouch-api-key': `vk_sandbox_x${i}` }));
      const wrong = await forged(PER_SECOND, 0);
      assert.deepEqual(
        wrong.answers.map((r) => r.status),
        Array(PER_SECOND).fill(401),
      );
      const { answers, leak } = await forged(20, 100);
      const refused = answers.filter((r) => r.status === 429).length;
      assert.ok(refused >= 20 - leak, `every address the header names is the peer's: ${refused} of 20 refused`);
    } finally {
      await a.close();
    }
  });
});
