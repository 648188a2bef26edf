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
//   recovery  a receiver back after an hour's outage with 10,000 deliveries waiting for their retry
//          slots (seeded in that state: failing for an hour, each after two failed attempts): one
//          success sends the whole backlog at once. Its drain rate, the most requests it had in
//          flight, and meanwhile the commit → receipt latency of 5 other businesses' steady traffic
//          (10 subscriptions each, 2 events/s) against the same before it came back. The receiver
//          that comes back answers in --receiver-ms (20 ms).
//   node bench/webhooks.ts [--database postgres|pglite] [--only peak,slow,burst,recovery] [--rows 300] [--burst 10000] [--backlog 10000] [--receiver-ms 20]
//     [--no-secrets]   subscriptions without their own secret (no `v1` HMAC per delivery: the figures before issue 38, item 2)
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbeddedPostgres } from '../store/embedded-postgres.ts';
import { recordEvent, recordEvents } from '../store/events.ts';
import { createSubscription } from '../store/subscriptions.ts';
import { bulkEntities, bulkTokens } from '../test/helpers/bulk.ts';
import { csvOf, upload } from '../test/helpers/imports.ts';
import { createDatabase, DEFAULT_POSTGRES_URL, startTemporal } from '../test/helpers/infra.ts';
import { startStack, testSealingRing, type Stack } from '../test/helpers/stack.ts';
import { createSecretBox } from '../domain/secret-box.ts';
import { newSubscriptionSecret } from '../domain/subscription-secret.ts';

const { values } = parseArgs({
  options: {
    database: { type: 'string', default: 'postgres' },
    only: { type: 'string', default: 'peak,slow,burst,recovery' },
    rows: { type: 'string', default: '300' },
    burst: { type: 'string', default: '10000' },
    backlog: { type: 'string', default: '10000' },
    'receiver-ms': { type: 'string', default: '20' },
    subscriptions: { type: 'string', default: '10' },
    'no-secrets': { type: 'boolean', default: false },
  },
});
/** Each subscription's secret, sealed as the API seals it (unless --no-secrets): every delivery then carries its `v1` HMAC. */
const sealSecret = values['no-secrets'] ? undefined : (id: string) => createSecretBox(testSealingRing()).seal(id, newSubscriptionSecret());
const only = new Set(values.only.split(','));
const ROWS = Number(values.rows);
const BURST = Number(values.burst);
const BACKLOG = Number(values.backlog);
const RECEIVER_MS = Number(values['receiver-ms']);
const SUBSCRIPTIONS = Number(values.subscriptions);
const pglite = values.database === 'pglite';
const say = (s: string) => process.stdout.write(`${s}\n`);
const pct = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]! : NaN);
const figures: Record<string, string | number>[] = [];

/** A receiver that answers (after `delayMs`) and notes when each event id arrived on which path. */
async function receiver(delayMs = 0) {
  const got: { path: string; eventId: string; at: number }[] = [];
  let status = 200;
  let inFlight = 0;
  let maxInFlight = 0;
  const server: Server = createServer(async (req, res) => {
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const at = Date.now();
    if (status === 200) got.push({ path: req.url!, eventId: JSON.parse(Buffer.concat(chunks).toString()).data.eventId, at });
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    inFlight--;
    res.writeHead(status).end('ok');
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (p: string) => `http://127.0.0.1:${port}/${p}`,
    got,
    /** Answer with this status from now on (only 200s are counted in `got`). */
    answer: (code: number) => void (status = code),
    maxInFlight: () => maxInFlight,
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
    await createSubscription(
      stack.db,
      businessId,
      { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: url },
      sealSecret,
    );
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
    await createSubscription(
      stack.db,
      businessId,
      {
        notificationChannel: 'WEBHOOK',
        notificationTypes: ['account_status_change'],
        webhookUrl: r.url(`sub-${i}`),
      },
      sealSecret,
    );
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

const benchEvent = (businessId: string, sourceKey: string) => ({
  businessId,
  entityId: null,
  eventName: 'card_issuance_api_access_updated',
  eventType: 'account_status_change',
  payload: (id: string) => ({
    eventName: 'card_issuance_api_access_updated',
    eventType: 'account_status_change',
    data: { eventId: id, message: 'bench', timestamp: new Date().toISOString(), status: 'APPROVED' },
  }),
  sourceKey,
});

/** recovery: BACKLOG deliveries waiting for an endpoint that comes back, beside other businesses' steady traffic. */
async function recovery(stack: Stack) {
  const { businessId } = await stack.newBusiness({ name: 'bench-recovery' });
  const back = await receiver(RECEIVER_MS);
  back.answer(503);
  const subscription = await createSubscription(
    stack.db,
    businessId,
    {
      notificationChannel: 'WEBHOOK',
      notificationTypes: ['account_status_change'],
      webhookUrl: back.url('back'),
    },
    sealSecret,
  );
  // the backlog, as an hour's outage leaves it: each delivery attempted twice, its next slot minutes away
  await stack.db.tx(async (q) => {
    for (let from = 0; from < BACKLOG; from += 1000)
      await recordEvents(
        q,
        Array.from({ length: Math.min(1000, BACKLOG - from) }, (_, i) => benchEvent(businessId, `backlog-${from + i}-${businessId}`)),
      );
    await q.query(
      `UPDATE webhook_deliveries SET mode = 'workflow', attempts = 2, run_attempts = 2, next_attempt_at = now() + interval '5 minutes'
        WHERE subscription_id = $1`,
      [subscription.id],
    );
    await q.query("UPDATE notification_subscriptions SET failing_since = now() - interval '1 hour' WHERE id = $1", [subscription.id]);
  });

  // others: 5 businesses × 10 subscriptions, an event every 500 ms each
  const steady = await receiver();
  const others: string[] = [];
  for (let b = 0; b < 5; b++) {
    const other = await stack.newBusiness({ name: `bench-steady-${b}` });
    others.push(other.businessId);
    for (let i = 0; i < 10; i++)
      await createSubscription(
        stack.db,
        other.businessId,
        {
          notificationChannel: 'WEBHOOK',
          notificationTypes: ['account_status_change'],
          webhookUrl: steady.url(`b${b}-s${i}`),
        },
        sealSecret,
      );
  }
  let sending = true;
  let n = 0;
  const traffic = (async () => {
    while (sending) {
      const tick = Date.now();
      await Promise.all(others.map((id) => recordEvent(stack.db, benchEvent(id, `steady-${n}-${id}`))));
      n++;
      await new Promise((r) => setTimeout(r, Math.max(0, 500 - (Date.now() - tick))));
    }
  })();
  await new Promise((r) => setTimeout(r, 10_000));

  // back: the next event succeeds, and the backlog follows at once
  const cameBack = Date.now();
  back.answer(200);
  await recordEvent(stack.db, benchEvent(businessId, `back-${businessId}`));
  await waitUntil(() => back.got.length >= BACKLOG + 1, 600_000, 'the backlog');
  const drained = Math.max(...back.got.map((g) => g.at));
  await new Promise((r) => setTimeout(r, 2000));
  sending = false;
  await traffic;
  await waitUntil(() => steady.got.length >= n * others.length * 10, 60_000, 'the steady traffic');

  const times = new Map<string, number>();
  for (const id of others) for (const [k, v] of await eventTimes(stack, id)) times.set(k, v);
  const lat = (from: number, to: number) => steady.got.filter((g) => g.at >= from && g.at < to).map((g) => g.at - times.get(g.eventId)!);
  const before = lat(cameBack - 8000, cameBack);
  const during = lat(cameBack, drained);
  const [left] = await stack.db.query<{ n: string }>("SELECT count(*) AS n FROM webhook_deliveries WHERE subscription_id = $1 AND status <> 'delivered'", [
    subscription.id,
  ]);
  figures.push({
    scenario:
      `recovery: ${BACKLOG.toLocaleString('en')} waiting for an endpoint that comes back (answering in ${RECEIVER_MS} ms); ` +
      '5 businesses × 10 subscriptions at 2 events/s beside it',
    'drain (s)': ((drained - cameBack) / 1000).toFixed(1),
    'deliveries/s': (BACKLOG / ((drained - cameBack) / 1000)).toFixed(0),
    'most in flight to it': back.maxInFlight(),
    'not delivered': Number(left!.n),
    'others p50/p95 before (ms)': `${pct(before, 50)} / ${pct(before, 95)}`,
    'others p50/p95 during (ms)': `${pct(during, 50)} / ${pct(during, 95)}`,
    'others max during (ms)': Math.max(...during),
  });
  await back.close();
  await steady.close();
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
  if (only.has('recovery')) await recovery(stack);
  console.table(figures);
} finally {
  for (const c of cleanups.reverse()) await c().catch((err) => say(`clean-up: ${(err as Error).message}`));
}
