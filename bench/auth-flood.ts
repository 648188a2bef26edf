// Wrong API keys from one address (issue 40): the API as its own process behind a trusted proxy
// (TRUSTED_PROXIES=127.0.0.1, so X-Forwarded-For names each client), one address sending requests
// with made-up keys as fast as the target rate allows, another business reading its entities every
// 20 ms from its own address. Reported: the flood's rate and answers, the API-key lookups it cost
// PostgreSQL (api_keys index scans beyond the reader's own), and the reader's p50 / p95 against idle.
// Run twice: with the limit (AUTH_FAILURE_LIMIT_PER_SECOND, default 10) and without it (1,000,000).
//   node bench/auth-flood.ts [--rate 2000] [--seconds 10]
import { parseArgs } from 'node:util';
import { createBusiness } from '../store/businesses.ts';
import type { Db } from '../store/db.ts';
import { pct } from '../test/helpers/attacks.ts';
import { createDatabase, DEFAULT_POSTGRES_URL, startTemporal } from '../test/helpers/infra.ts';
import { apiProcess } from './helpers.ts';

const { values } = parseArgs({ options: { rate: { type: 'string', default: '2000' }, seconds: { type: 'string', default: '10' } } });
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const say = (s: string) => process.stdout.write(`${s}\n`);

const database = await createDatabase(process.env.TEST_POSTGRES_URL ?? DEFAULT_POSTGRES_URL, 'vouch_auth_flood');
const temporal = await startTemporal();
process.env.TEST_DATABASE_URL = database.url;
process.env.VOUCH_ENVIRONMENT = 'sandbox';

/** Index scans of api_keys so far: one per key looked up. */
const keyLookups = async (db: Db) =>
  Number(
    (
      await db.query<{ n: string }>(
        "SELECT coalesce(idx_scan, 0) + coalesce(seq_scan, 0) AS n FROM pg_stat_user_tables WHERE relname = 'api_keys' AND schemaname = current_schema()",
      )
    )[0]?.n ?? 0,
  );

async function run(limit: string) {
  const { api, db, base } = await apiProcess(temporal.address, {
    TRUSTED_PROXIES: '127.0.0.1',
    AUTH_FAILURE_LIMIT_PER_SECOND: limit,
    API_RATE_LIMIT_PER_SECOND: '100000',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', // as deployed: a line per request
  });
  try {
    for (let up = false; !up; await new Promise((r) => setTimeout(r, 100))) up = (await fetch(`${base}/health`).catch(() => null))?.status === 200;
    const reader = (await createBusiness(db, { name: 'Reader', binSponsored: false, environment: 'sandbox' })).apiKey;
    const read = async () => {
      const t = performance.now();
      const res = await fetch(`${base}/entity?limit=1`, {
        headers: { 'x-vouch-api-key': reader, 'accept-version': 'v1.0', 'x-forwarded-for': '198.51.100.9' },
      });
      await res.arrayBuffer();
      return performance.now() - t;
    };
    for (let i = 0; i < 50; i++) await read(); // warm
    /** The reader every 20 ms for the bench's seconds; its latencies and its requests' count. */
    const readFor = async (seconds: number) => {
      const out: number[] = [];
      const until = performance.now() + seconds * 1000;
      while (performance.now() < until) {
        out.push(await read());
        await new Promise((r) => setTimeout(r, 20));
      }
      return out;
    };
    const idle = await readFor(SECONDS);
    await new Promise((r) => setTimeout(r, 11_000));
    const lookupsBefore = await keyLookups(db);
    const statuses = new Map<number, number>();
    let sent = 0;
    let flooding = true;
    const flood = (async () => {
      const started = performance.now();
      const inFlight = new Set<Promise<void>>();
      while (flooding) {
        // keep to RATE a second: send what is due by now, at most 256 in flight
        const due = Math.floor(((performance.now() - started) / 1000) * RATE);
        while (sent < due && inFlight.size < 256) {
          const n = sent++;
          const p = fetch(`${base}/entity?limit=1`, {
            headers: { 'x-vouch-api-key': `vk_sandbox_made-up-${n}`, 'accept-version': 'v1.0', 'x-forwarded-for': '203.0.113.7' },
          })
            .then(async (res) => {
              await res.arrayBuffer();
              statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            })
            .catch(() => void statuses.set(0, (statuses.get(0) ?? 0) + 1))
            .finally(() => inFlight.delete(p));
          inFlight.add(p);
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      await Promise.all(inFlight);
      return (performance.now() - started) / 1000;
    })();
    const during = await readFor(SECONDS);
    flooding = false;
    const floodSeconds = await flood;
    // a backend's statistics reach pg_stat_user_tables at its next transaction a second on, or after 10 s idle
    await new Promise((r) => setTimeout(r, 11_000));
    const attackerLookups = (await keyLookups(db)) - lookupsBefore - during.length;
    const row = {
      limit,
      'flood rate /s': Math.round(sent / floodSeconds),
      answers: [...statuses].map(([s, n]) => `${s}×${n}`).join(' '),
      'key lookups by the flood': attackerLookups,
      'reader idle p50/p95 ms': `${pct(idle, 50).toFixed(1)} / ${pct(idle, 95).toFixed(1)}`,
      'reader flooded p50/p95 ms': `${pct(during, 50).toFixed(1)} / ${pct(during, 95).toFixed(1)}`,
      'p95 flooded / idle': (pct(during, 95) / pct(idle, 95)).toFixed(2),
    };
    say(JSON.stringify(row));
    return row;
  } finally {
    await api.stop('SIGTERM');
    await db.close();
  }
}

try {
  const rows = [await run('10'), await run('1000000')];
  say('\n| ' + Object.keys(rows[0]!).join(' | ') + ' |');
  say(
    '|' +
      Object.keys(rows[0]!)
        .map(() => ' --- |')
        .join(''),
  );
  for (const r of rows) say('| ' + Object.values(r).join(' | ') + ' |');
} finally {
  await temporal.stop();
  await database.drop();
}
