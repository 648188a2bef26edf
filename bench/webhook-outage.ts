// A receiver that is down costs other businesses nothing (issue 38, item 0), on a real stack: a
// Temporal dev server, a fresh PostgreSQL database, the API and workers in this process (as
// `npm start` runs them), loopback receivers.
//   B       decides a person every 250 ms by universal KYC (canonical data posted, the identity
//           document already there), one subscription: POST → receipt of its account_status_change
//           p50 / p95 / max, first alone (quiet), then while A's batch runs with A's receivers down.
//   A       decides N people by one requirement batch, 10 subscriptions: upload → every person
//           decided, once with its receivers up and once with all 10 refusing connections (10 × N
//           failing deliveries, each then waiting for its retries), B deciding all along (its
//           figures for both). Meanwhile: the most workflows running at once in Temporal (sampled
//           every second).
//   waiting 100,000 deliveries waiting for a dead receiver (seeded as failed attempts leave them):
//           the database bytes they cost, this process's memory, and what a dispatcher's turn
//           (promotion and claim) costs with them waiting against without.
//   node bench/webhook-outage.ts [--people 1000,5000] [--subscriptions 10] [--waiting 100000] [--b-every-ms 250]
import os from 'node:os';
import { parseArgs } from 'node:util';
import { claimDueDeliveries, promoteDueDeliveries } from '../store/deliveries.ts';
import { recordEvents } from '../store/events.ts';
import { createSubscription } from '../store/subscriptions.ts';
import { bulkEntities, bulkIdDocuments, entityIdsOf } from '../test/helpers/bulk.ts';
import { canonicalRecords, jsonLines, uploadRecords, waitForRequirementBatch } from '../test/helpers/requirement-batches.ts';
import type { Stack } from '../test/helpers/stack.ts';
import { canonicalPayload } from '../test/helpers/ukyc.ts';
import { refusingUrl } from '../test/helpers/receiver.ts';
import { loopbackReceiver, onBenchStack, pct, waitUntil } from './helpers.ts';

const { values } = parseArgs({
  options: {
    people: { type: 'string', default: '1000,5000' },
    subscriptions: { type: 'string', default: '10' },
    waiting: { type: 'string', default: '100000' },
    'b-every-ms': { type: 'string', default: '250' },
    only: { type: 'string', default: 'outage,waiting' },
  },
});
const PEOPLE = values.people.split(',').map(Number);
const SUBSCRIPTIONS = Number(values.subscriptions);
const WAITING = Number(values.waiting);
const B_EVERY_MS = Number(values['b-every-ms']);
const only = new Set(values.only.split(','));
/** People B has to decide while A's batch runs (at one per B_EVERY_MS: 1,500 last over 6 minutes). */
const B_PEOPLE = 1500;
const say = (s: string) => process.stdout.write(`${s}\n`);
const figures: Record<string, string>[] = [];
const ms = (x: number) => x.toFixed(0);

/** Business B: people with their documents, one subscription; decides one every B_EVERY_MS until stopped. */
async function businessB(stack: Stack, label: string, n: number) {
  const { apiKey, businessId } = await stack.newBusiness({ name: label });
  const externalIds = Array.from({ length: n }, (_, i) => `${label}-${i}`);
  await bulkEntities(stack.db, businessId, externalIds);
  const ids = await entityIdsOf(stack.db, businessId, externalIds);
  await bulkIdDocuments(stack.db, businessId, ids);
  const receiver = await loopbackReceiver((e) => e.eventType === 'account_status_change');
  await createSubscription(stack.db, businessId, {
    notificationChannel: 'WEBHOOK',
    notificationTypes: ['account_status_change'],
    webhookUrl: receiver.url('b'),
  });
  const posted = new Map<string, number>();
  let next = 0;
  let stopped = false;
  const run = (async () => {
    while (!stopped && next < ids.length) {
      const id = ids[next++]!;
      const t = Date.now();
      posted.set(id, t);
      const res = await stack.request('POST', `/entity/${id}/requirement`, {
        key: apiKey,
        json: { requirementSlug: 'ukyc-canonical-kyc-data', value: JSON.stringify(canonicalPayload()) },
      });
      if (res.status !== 201) throw new Error(`B's submission: ${res.status} ${res.text}`);
      await new Promise((r) => setTimeout(r, Math.max(0, t + B_EVERY_MS - Date.now())));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await run;
      await waitUntil(() => receiver.first.size >= posted.size, 300_000, "B's receipts");
      await receiver.close();
      const latencies = [...posted].map(([id, t]) => receiver.first.get(id)! - t);
      return { n: latencies.length, p50: pct(latencies, 50), p95: pct(latencies, 95), max: Math.max(...latencies) };
    },
  };
}

/** Business A: N people with their documents and 10 subscriptions (to `url`); its batch, upload → every person decided. */
async function businessA(stack: Stack, label: string, n: number, url: (i: number) => string) {
  const { apiKey, businessId } = await stack.newBusiness({ name: label });
  const externalIds = Array.from({ length: n }, (_, i) => `${label}-${i}`);
  await bulkEntities(stack.db, businessId, externalIds);
  const ids = await entityIdsOf(stack.db, businessId, externalIds);
  await bulkIdDocuments(stack.db, businessId, ids);
  const subscriptions: string[] = [];
  for (let i = 0; i < SUBSCRIPTIONS; i++)
    subscriptions.push(
      (await createSubscription(stack.db, businessId, { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: url(i) })).id,
    );
  return {
    businessId,
    async batch(): Promise<number> {
      const t0 = performance.now();
      const res = await uploadRecords(stack, apiKey, jsonLines(canonicalRecords(ids)));
      if (res.status !== 201) throw new Error(`A's upload: ${res.status} ${res.text}`);
      const status = await waitForRequirementBatch(stack, apiKey, res.body.batchId, 1_800_000);
      if (status.summary.decided !== n) throw new Error(`A decided ${status.summary.decided} of ${n}`);
      return performance.now() - t0;
    },
    /** Its subscriptions deleted: what still waits is canceled, so the next scenario starts clean. */
    async retire() {
      for (const id of subscriptions) await stack.request('DELETE', `/notification/${id}`, { key: apiKey });
    },
  };
}

/** The most workflows running at once while `during` runs (sampled every second). */
async function runningWorkflows<T>(stack: Stack, during: Promise<T>): Promise<{ result: T; maxRunning: number }> {
  let maxRunning = 0;
  let done = false;
  const sampler = (async () => {
    while (!done) {
      const { count } = await stack.temporal.workflow.count("ExecutionStatus = 'Running'");
      maxRunning = Math.max(maxRunning, count);
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  try {
    return { result: await during, maxRunning };
  } finally {
    done = true;
    await sampler;
  }
}

async function outage(stack: Stack) {
  for (const n of PEOPLE) {
    // B alone
    const quietB = await businessB(stack, `b-quiet-${n}`, 80);
    await new Promise((r) => setTimeout(r, 80 * B_EVERY_MS));
    const quiet = await quietB.stop();
    // A with its receivers up, B deciding meanwhile
    const up = await loopbackReceiver();
    const aUp = await businessA(stack, `a-up-${n}`, n, (i) => up.url(`a-${i}`));
    const bUp = await businessB(stack, `b-up-${n}`, B_PEOPLE);
    const { result: upMs, maxRunning: upRunning } = await runningWorkflows(stack, aUp.batch());
    await waitUntil(() => up.deliveries() >= n * SUBSCRIPTIONS, 600_000, "A's deliveries");
    await new Promise((r) => setTimeout(r, 10_000)); // as long as below
    const withUp = await bUp.stop();
    await up.close();
    await aUp.retire();
    // A with its receivers down, B deciding meanwhile
    const refused = await refusingUrl();
    const aDown = await businessA(stack, `a-down-${n}`, n, (i) => `${refused}/a-${i}`);
    const b = await businessB(stack, `b-down-${n}`, B_PEOPLE);
    const { result: downMs, maxRunning } = await runningWorkflows(stack, aDown.batch());
    await new Promise((r) => setTimeout(r, 10_000)); // and the first retries of A's deliveries (5 s after each first attempt)
    const busy = await b.stop();
    const [waiting] = await stack.db.query<{ n: string; attempts: string }>(
      "SELECT count(*) FILTER (WHERE status = 'pending') AS n, sum(attempts) AS attempts FROM webhook_deliveries WHERE business_id = $1",
      [aDown.businessId],
    );
    await aDown.retire();
    const row = {
      people: String(n),
      'B quiet p50 / p95 / max ms': `${ms(quiet.p50)} / ${ms(quiet.p95)} / ${ms(quiet.max)}`,
      "B during A's batch, A's receivers up p50 / p95 / max ms": `${ms(withUp.p50)} / ${ms(withUp.p95)} / ${ms(withUp.max)} (${withUp.n} decisions)`,
      "B during A's outage p50 / p95 / max ms": `${ms(busy.p50)} / ${ms(busy.p95)} / ${ms(busy.max)} (${busy.n} decisions)`,
      'B p95 against quiet': `${(busy.p95 / quiet.p95).toFixed(2)} ×`,
      "A's batch, receivers up s": (upMs / 1000).toFixed(1),
      "A's batch, receivers down s": (downMs / 1000).toFixed(1),
      'A down against up': `${(downMs / upMs).toFixed(3)} ×`,
      'workflows running (most), receivers up / down': `${upRunning} / ${maxRunning}`,
      "A's failing deliveries (attempts)": `${waiting!.n} (${waiting!.attempts})`,
    };
    figures.push(row);
    say(JSON.stringify(row));
  }
}

const bytes = async (stack: Stack) =>
  Number(
    (
      await stack.db.query<{ b: string }>(
        "SELECT sum(pg_total_relation_size(c)) AS b FROM unnest(ARRAY['webhook_deliveries', 'events', 'webhook_attempts']::regclass[]) c",
      )
    )[0]!.b,
  );

async function turn(stack: Stack): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 21; i++) {
    const t = performance.now();
    await promoteDueDeliveries(stack.db, 2000);
    await claimDueDeliveries(stack.db, {
      limit: 200,
      leaseMs: 30_000,
      perSubscription: 16,
      perBusiness: 64,
      inFlight: { bySubscription: new Map(), byBusiness: new Map() },
    });
    times.push(performance.now() - t);
  }
  return pct(times, 50);
}

async function waitingBacklog(stack: Stack) {
  const refused = await refusingUrl();
  const { businessId } = await stack.newBusiness({ name: 'dead receiver' });
  const subs: string[] = [];
  for (let i = 0; i < SUBSCRIPTIONS; i++)
    subs.push(
      (
        await createSubscription(stack.db, businessId, {
          notificationChannel: 'WEBHOOK',
          notificationTypes: ['account_status_change'],
          webhookUrl: `${refused}/dead-${i}`,
        })
      ).id,
    );
  await stack.db.query('VACUUM ANALYZE webhook_deliveries');
  const idleTurn = await turn(stack);
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  const bytes0 = await bytes(stack);
  const events = WAITING / SUBSCRIPTIONS;
  for (let done = 0; done < events; done += 1000) {
    // as failed attempts leave each: waiting for its next slot (hours away), its attempts logged;
    // in the events' own transaction, so no dispatcher sees them due
    await stack.db.tx(async (q) => {
      await recordEvents(
        q,
        Array.from({ length: Math.min(1000, events - done) }, (_, i) => ({
          businessId,
          entityId: null,
          eventName: 'card_issuance_api_access_updated',
          eventType: 'account_status_change',
          payload: (id: string) => ({ eventName: 'card_issuance_api_access_updated', eventType: 'account_status_change', data: { eventId: id, n: done + i } }),
          sourceKey: `dead-${businessId}-${done + i}`,
        })),
      );
      await q.query(
        `WITH w AS (UPDATE webhook_deliveries SET mode = 'waiting', attempts = 3, run_attempts = 3, last_error = 'connection refused (ECONNREFUSED)',
                           next_attempt_at = now() + interval '2 hours' WHERE business_id = $1 AND mode = 'dispatcher' AND status = 'pending' RETURNING id)
         INSERT INTO webhook_attempts (id, delivery_id, attempt, url, started_at, latency_ms, error, succeeded)
         SELECT gen_random_uuid(), w.id, a, $2 || '/dead', now(), 1, 'connection refused (ECONNREFUSED)', false FROM w CROSS JOIN generate_series(1, 3) a`,
        [businessId, refused],
      );
    });
  }
  await stack.db.query('VACUUM ANALYZE webhook_deliveries');
  const [{ n }] = (await stack.db.query<{ n: string }>("SELECT count(*) AS n FROM webhook_deliveries WHERE business_id = $1 AND mode = 'waiting'", [
    businessId,
  ])) as [{ n: string }];
  const busyTurn = await turn(stack);
  global.gc?.();
  const grown = await bytes(stack);
  const row = {
    part: 'waiting',
    'deliveries waiting': n,
    'database MB (deliveries, events, 3 attempts each)': ((grown - bytes0) / 1024 / 1024).toFixed(1),
    'bytes per waiting delivery': ((grown - bytes0) / Number(n)).toFixed(0),
    'process RSS growth MB': ((process.memoryUsage().rss - rss0) / 1024 / 1024).toFixed(0),
    "dispatcher's turn (promote + claim) ms, none waiting / all waiting": `${idleTurn.toFixed(2)} / ${busyTurn.toFixed(2)}`,
  };
  figures.push(row);
  say(JSON.stringify(row));
}

say(`node ${process.version}, ${os.cpus().length} cores, ${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB`);
await onBenchStack({ database: 'vouch_bench_webhook_outage' }, async (stack) => {
  if (only.has('outage')) await outage(stack);
  if (only.has('waiting')) await waitingBacklog(stack);
});
say('\nfigures:');
for (const f of figures) say(JSON.stringify(f));
