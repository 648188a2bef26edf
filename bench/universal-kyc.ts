// Benchmark of universal KYC on a real stack (Temporal dev server, PostgreSQL, API and workers in
// this process, the local file store on disk, a receiver on loopback behind 10 subscriptions, the
// limit per business).
//   idle   one person at a time: the KYC data, then the identity document; last upload's answer →
//          first webhook receipt; also the answers of the two requests, and a 10 MB upload (the limit).
//   burst  --persons people at once (data for all, then every document, --concurrency requests in
//          flight): decisions per second and last upload → webhook p50/p95/max.
//   node bench/universal-kyc.ts [--persons 300] [--idle 20] [--concurrency 20]
import os from 'node:os';
import { parseArgs } from 'node:util';
import { createSubscription } from '../store/subscriptions.ts';
import type { Stack } from '../test/helpers/stack.ts';
import { canonicalPayload, FILES, filesForm } from '../test/helpers/ukyc.ts';
import { loopbackReceiver, onBenchStack, pct, pool, waitUntil } from './helpers.ts';

const { values } = parseArgs({
  options: { persons: { type: 'string', default: '300' }, idle: { type: 'string', default: '20' }, concurrency: { type: 'string', default: '20' } },
});
const PERSONS = Number(values.persons);
const IDLE = Number(values.idle);
const CONCURRENCY = Number(values.concurrency);
const SUBSCRIPTIONS = 10;
const say = (s: string) => process.stdout.write(`${s}\n`);
const figures: Record<string, string | number>[] = [];

async function run(stack: Stack) {
  const { apiKey, businessId } = await stack.newBusiness({ name: 'bench-ukyc' });
  const r = await loopbackReceiver();
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    await createSubscription(stack.db, businessId, {
      notificationChannel: 'WEBHOOK',
      notificationTypes: ['account_status_change'],
      webhookUrl: r.url(`sub-${i}`),
    });
  }
  const person = async (name: string) =>
    (await stack.request('POST', '/entity', { key: apiKey, json: { externalId: name, type: 'INDIVIDUAL' } })).body.id as string;
  const submit = async (id: string) => {
    const res = await stack.request('POST', `/entity/${id}/requirement`, {
      key: apiKey,
      json: { requirementSlug: 'ukyc-canonical-kyc-data', value: JSON.stringify(canonicalPayload()) },
    });
    if (res.status !== 201) throw new Error(res.text);
  };
  const uploadDocument = async (id: string, bytes = FILES.pdf) => {
    const res = await stack.request('POST', `/entity/${id}/requirement-slug/ukyc-id-document/upload`, {
      key: apiKey,
      form: filesForm([{ bytes, name: 'passport.pdf' }]),
    });
    if (res.status !== 201) throw new Error(res.text);
  };

  // idle
  const dataMs: number[] = [];
  const uploadMs: number[] = [];
  const decisionMs: number[] = [];
  for (let i = 0; i < IDLE; i++) {
    const id = await person(`idle-${i}`);
    let t0 = performance.now();
    await submit(id);
    dataMs.push(performance.now() - t0);
    t0 = performance.now();
    await uploadDocument(id);
    uploadMs.push(performance.now() - t0);
    const answered = Date.now();
    await waitUntil(() => r.first.has(id), 60_000, 'the decision');
    decisionMs.push(r.first.get(id)! - answered);
  }
  const big = Buffer.concat([FILES.pdf, Buffer.alloc(10 * 1024 * 1024 - FILES.pdf.length - 1024)]);
  const bigMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const id = await person(`big-${i}`);
    const t0 = performance.now();
    await uploadDocument(id, big);
    bigMs.push(performance.now() - t0);
  }
  figures.push({
    scenario: `idle: ${IDLE} people one at a time, ${SUBSCRIPTIONS} subscriptions`,
    'data answer p50 (ms)': Math.round(pct(dataMs, 50)),
    'upload answer p50 (ms)': Math.round(pct(uploadMs, 50)),
    '10 MB upload p50 (ms)': Math.round(pct(bigMs, 50)),
    'last upload → webhook p50 (ms)': pct(decisionMs, 50),
    'p95 (ms)': pct(decisionMs, 95),
    'max (ms)': Math.max(...decisionMs),
  });

  // burst
  const ids: string[] = [];
  for (let i = 0; i < PERSONS; i++) ids.push(await person(`burst-${i}`));
  await pool(ids, CONCURRENCY, submit);
  const answeredAt = new Map<string, number>();
  const t0 = Date.now();
  await pool(ids, CONCURRENCY, async (id) => {
    await uploadDocument(id);
    answeredAt.set(id, Date.now());
  });
  await waitUntil(() => ids.every((id) => r.first.has(id)), PERSONS * 1000, 'every decision');
  const latencies = ids.map((id) => r.first.get(id)! - answeredAt.get(id)!);
  const last = Math.max(...ids.map((id) => r.first.get(id)!));
  await waitUntil(() => r.deliveries() >= (IDLE + PERSONS) * SUBSCRIPTIONS, 120_000, 'every delivery');
  figures.push({
    scenario: `burst: ${PERSONS} people, ${CONCURRENCY} uploads in flight, ${SUBSCRIPTIONS} subscriptions`,
    'decisions/s': (PERSONS / ((last - t0) / 1000)).toFixed(1),
    'last upload → webhook p50 (ms)': pct(latencies, 50),
    'p95 (ms)': pct(latencies, 95),
    'max (ms)': Math.max(...latencies),
    deliveries: r.deliveries(),
  });
  await r.close();
}

await onBenchStack({ database: 'vouch_bench_ukyc' }, async (stack) => {
  say(`universal KYC benchmark on PostgreSQL, ${os.cpus().length} cores, local file store`);
  await run(stack);
  console.table(figures);
});
