// Benchmarks of the webhook pipeline on a real stack (Temporal dev server, the database, API and
// workers in this process, the simulator over HTTP, receivers on loopback), on PostgreSQL or on the
// embedded PGlite (one connection, as `npm start` runs it).
//   peak   a batch at the provider cap (10 records/s) for a business with 10 subscriptions: 100
//          deliveries/s. Batch rate against the cap, event → receipt p50/p95/max, the last receipt
//          after the batch completed.
//   slow   the same with one of the 10 receivers answering after 6 s (every attempt times out):
//          the latency of the 9 others.
//   burst  10,000 deliveries made due at once (one transaction) to a healthy receiver, as
//          10,000 events × 1 subscription and as 1,000 events × 10: deliveries per second.
//   node bench/webhooks.ts [--database postgres|pglite] [--only peak,slow,burst] [--rows 300] [--burst 10000]
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbeddedPostgres } from '../store/embedded-postgres.ts';
import { recordEvent } from '../store/events.ts';
import { createSubscription } from '../store/subscriptions.ts';
import { bulkEntities, bulkTokens } from '../test/helpers/bulk.ts';
import { csvOf, upload } from '../test/helpers/imports.ts';
import { createDatabase, DEFAULT_POSTGRES_URL, startTemporal } from '../test/helpers/infra.ts';
import { startStack, type Stack } from '../test/helpers/stack.ts';

const { values } = parseArgs({
  options: {
    database: { type: 'string', default: 'postgres' },
    only: { type: 'string', default: 'peak,slow,burst' },
    rows: { type: 'string', default: '300' },
    burst: { type: 'string', default: '10000' },
    subscriptions: { type: 'string', default: '10' },
  },
});
const only = new Set(values.only.split(','));
const ROWS = Number(values.rows);
const BURST = Number(values.burst);
const SUBSCRIPTIONS = Number(values.subscriptions);
const pglite = values.database === 'pglite';
const say = (s: string) => process.stdout.write(`${s}\n`);
const pct = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]! : NaN);
const figures: Record<string, string | number>[] = [];

/** A receiver that answers (after `delayMs`) and notes when each event id arrived on which path. */
async function receiver(delayMs = 0) {
  const got: { path: string; eventId: string; at: number }[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const at = Date.now();
    got.push({ path: req.url!, eventId: JSON.parse(Buffer.concat(chunks).toString()).data.eventId, at });
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    res.writeHead(200).end('ok');
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (p: string) => `http://127.0.0.1:${port}/${p}`,
    got,
    close: () => new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections())),
  };
}

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const eventTimes = async (stack: Stack, businessId: string) =>
  new Map(
    (
      await stack.db.query<{ id: string; ms: string }>('SELECT id, (extract(epoch FROM created_at) * 1000)::bigint AS ms FROM events WHERE business_id = $1', [
        businessId,
      ])
    ).map((r) => [r.id, Number(r.ms)]),
  );

/** peak / slow: a batch of ROWS at the provider cap, 10 subscriptions; `slowOne`: one receiver times out. */
async function peak(stack: Stack, slowOne: boolean) {
  const label = slowOne ? 'slow' : 'peak';
  const { apiKey, businessId } = await stack.newBusiness({ name: `bench-${label}` });
  const fast = await receiver();
  const slow = await receiver(6000);
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    const url = slowOne && i === 0 ? slow.url('slow') : fast.url(`sub-${i}`);
    await createSubscription(stack.db, businessId, { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: url });
  }
  const externalIds = Array.from({ length: ROWS }, (_, i) => `${label}-${i}`);
  await bulkEntities(stack.db, businessId, externalIds);
  const tokens = bulkTokens(
    stack.sim!,
    `${label}-donor`,
    stack.recipient!.clientId,
    externalIds.map(() => 'complete'),
  );
  const started = Date.now();
  const res = await upload(
    stack,
    apiKey,
    csvOf(
      'externalId,shareToken',
      externalIds.map((e, i) => [e, tokens[i]!]),
    ),
  );
  if (res.status !== 201) throw new Error(res.text);
  let completedAt = 0;
  let startedAt = 0;
  await waitUntil(
    async () => {
      const [b] = await stack.db.query<{ status: string; s: string; c: string }>(
        'SELECT status, (extract(epoch FROM started_at) * 1000)::bigint AS s, (extract(epoch FROM ' +
          'completed_at) * 1000)::bigint AS c FROM import_batches WHERE id = $1',
        [res.body.batchId],
      );
      if (b!.status !== 'completed') return false;
      startedAt = Number(b!.s);
      completedAt = Number(b!.c);
      return true;
    },
    ROWS * 1000,
    'the batch',
  );
  const healthy = slowOne ? SUBSCRIPTIONS - 1 : SUBSCRIPTIONS;
  await waitUntil(() => fast.got.length >= ROWS * healthy, 120_000, 'every healthy delivery');
  const times = await eventTimes(stack, businessId);
  const latencies = fast.got.map((g) => g.at - times.get(g.eventId)!);
  const lastReceipt = Math.max(...fast.got.map((g) => g.at));
  const batchSeconds = (completedAt - startedAt) / 1000;
  const unique = new Set(fast.got.map((g) => `${g.path} ${g.eventId}`)).size;
  figures.push({
    scenario: slowOne
      ? `slow: ${ROWS} rows at 10/s, ${healthy} healthy subscriptions + 1 timing out`
      : `peak: ${ROWS} rows at 10/s × ${SUBSCRIPTIONS} subscriptions`,
    'batch records/s': (ROWS / batchSeconds).toFixed(2),
    'of cap': `${((ROWS / batchSeconds / 10) * 100).toFixed(1)} %`,
    'upload → completed (s)': ((completedAt - started) / 1000).toFixed(1),
    deliveries: `${fast.got.length} (${unique} distinct)`,
    'receipt p50 (ms)': pct(latencies, 50),
    'p95 (ms)': pct(latencies, 95),
    'max (ms)': Math.max(...latencies),
    'last receipt after completed (ms)': lastReceipt - completedAt,
    ...(slowOne ? { 'slow receiver got': slow.got.length } : {}),
  });
  await fast.close();
  await slow.close();
}

/** burst: `events` × `subscriptions` deliveries committed at once; deliveries per second to the last receipt. */
async function burst(stack: Stack, subscriptions: number) {
  const events = BURST / subscriptions;
  const { businessId } = await stack.newBusiness({ name: `bench-burst-${subscriptions}` });
  const r = await receiver();
  for (let i = 0; i < subscriptions; i++) {
    await createSubscription(stack.db, businessId, {
      notificationChannel: 'WEBHOOK',
      notificationTypes: ['account_status_change'],
      webhookUrl: r.url(`sub-${i}`),
    });
  }
  await stack.db.tx(async (q) => {
    for (let i = 0; i < events; i++) {
      await recordEvent(q, {
        businessId,
        entityId: null,
        eventName: 'card_issuance_api_access_updated',
        eventType: 'account_status_change',
        payload: (id) => ({
          eventName: 'card_issuance_api_access_updated',
          eventType: 'account_status_change',
          data: { eventId: id, message: 'bench', timestamp: new Date().toISOString(), status: 'APPROVED', n: i },
        }),
        sourceKey: `burst-${subscriptions}-${i}-${businessId}`,
      });
    }
  });
  const committed = Date.now();
  await waitUntil(() => r.got.length >= BURST, 600_000, 'the burst');
  const last = Math.max(...r.got.map((g) => g.at));
  const latencies = r.got.map((g) => g.at - committed);
  figures.push({
    scenario: `burst: ${events.toLocaleString('en')} events × ${subscriptions} subscription${subscriptions > 1 ? 's' : ''} due at once`,
    deliveries: `${r.got.length} (${new Set(r.got.map((g) => `${g.path} ${g.eventId}`)).size} distinct)`,
    'deliveries/s': (BURST / ((last - committed) / 1000)).toFixed(0),
    'commit → receipt p50 (ms)': pct(latencies, 50),
    'p95 (ms)': pct(latencies, 95),
    'max (ms)': last - committed,
  });
  await r.close();
}

const cleanups: (() => Promise<unknown>)[] = [];
try {
  let databaseUrl: string;
  if (pglite) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'vouch-bench-pglite-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const embedded = await startEmbeddedPostgres({ dataDir: dir, port: 0 });
    cleanups.push(() => embedded.stop());
    databaseUrl = embedded.url;
  } else {
    const database = await createDatabase(process.env.TEST_POSTGRES_URL ?? DEFAULT_POSTGRES_URL, 'vouch_bench');
    cleanups.push(() => database.drop());
    databaseUrl = database.url;
  }
  const temporal = await startTemporal();
  cleanups.push(() => temporal.stop());
  process.env.TEST_DATABASE_URL = databaseUrl;
  process.env.TEMPORAL_ADDRESS = temporal.address;
  const stack = await startStack({
    workers: true,
    poolSize: pglite ? 1 : 10,
    env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', LOG_LEVEL: 'warn', DATABASE_POOL_SIZE: pglite ? '1' : '10' },
  });
  cleanups.push(() => stack.close());
  stack.sim!.state.updateClient(stack.recipient!.clientId, { limits: { postPer5s: 1e9, getPer5s: 1e9 } });
  say(
    `webhooks benchmark on ${pglite ? 'embedded PGlite (one connection)' : 'PostgreSQL'}, ` +
      `${os.cpus().length} cores, provider cap ` +
      `${stack.config.temporal.providerRateLimitPerSecond}/s`,
  );
  if (only.has('peak')) await peak(stack, false);
  if (only.has('slow')) await peak(stack, true);
  if (only.has('burst')) {
    await burst(stack, 1);
    await burst(stack, 10);
  }
  console.table(figures);
} finally {
  for (const c of cleanups.reverse()) await c().catch((err) => say(`clean-up: ${(err as Error).message}`));
}
