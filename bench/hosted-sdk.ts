// Benchmark of the hosted-SDK path on a real stack (Temporal dev server, PostgreSQL, API and
// workers in this process, the simulator over HTTP calling our callback endpoint, a receiver on
// loopback behind 10 subscriptions, the limit per business).
//   idle   one person at a time: SDK token request → answer; reviewer's GREEN → first webhook receipt.
//   burst  --persons people reviewed at once: every decision reads the applicant once at the
//          provider, inside the 10/s cap; callback → receipt p50/p95/max and decisions per second.
//   node bench/hosted-sdk.ts [--persons 100] [--idle 20]
import os from 'node:os';
import { parseArgs } from 'node:util';
import { createSubscription } from '../store/subscriptions.ts';
import { personFillsInSdk, providerAccount } from '../test/helpers/sdk.ts';
import type { Stack } from '../test/helpers/stack.ts';
import { loopbackReceiver, onBenchStack, pct, waitUntil } from './helpers.ts';

const { values } = parseArgs({ options: { persons: { type: 'string', default: '100' }, idle: { type: 'string', default: '20' } } });
const PERSONS = Number(values.persons);
const IDLE = Number(values.idle);
const SUBSCRIPTIONS = 10;
const say = (s: string) => process.stdout.write(`${s}\n`);
const figures: Record<string, string | number>[] = [];

/** Notes the first receipt of each entity's decisions (by status), and counts every delivery. */

async function run(stack: Stack) {
  const { apiKey, businessId } = await stack.newBusiness({ name: 'bench-sdk' });
  const r = await loopbackReceiver();
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    await createSubscription(stack.db, businessId, {
      notificationChannel: 'WEBHOOK',
      notificationTypes: ['account_status_change'],
      webhookUrl: r.url(`sub-${i}`),
    });
  }
  const reviewer = providerAccount(stack);
  const person = async (name: string) =>
    (await stack.request('POST', '/entity', { key: apiKey, json: { externalId: name, type: 'INDIVIDUAL' } })).body.id as string;

  // idle: one at a time
  const tokenMs: number[] = [];
  const reviewMs: number[] = [];
  for (let i = 0; i < IDLE; i++) {
    const id = await person(`idle-${i}`);
    const t0 = performance.now();
    const res = await stack.request('POST', `/entity/${id}/kyc`, { key: apiKey });
    if (res.status !== 200) throw new Error(res.text);
    tokenMs.push(performance.now() - t0);
    const applicant = personFillsInSdk(stack, id);
    const sent = Date.now();
    await reviewer.completeSandboxReview(applicant.id, { reviewAnswer: 'GREEN' });
    await waitUntil(() => r.first.has(id), 60_000, 'the decision');
    reviewMs.push(r.first.get(id)! - sent);
  }
  figures.push({
    scenario: `idle: ${IDLE} people one at a time, ${SUBSCRIPTIONS} subscriptions`,
    'token p50 (ms)': Math.round(pct(tokenMs, 50)),
    'token p95 (ms)': Math.round(pct(tokenMs, 95)),
    'review → webhook p50 (ms)': pct(reviewMs, 50),
    'p95 (ms)': pct(reviewMs, 95),
    'max (ms)': Math.max(...reviewMs),
  });

  // burst: everyone reviewed at once
  const ids: string[] = [];
  for (let i = 0; i < PERSONS; i++) ids.push(await person(`burst-${i}`));
  const t0 = performance.now();
  await Promise.all(ids.map((id) => stack.request('POST', `/entity/${id}/kyc`, { key: apiKey })));
  const tokensSeconds = (performance.now() - t0) / 1000;
  const applicants = ids.map((id) => personFillsInSdk(stack, id));
  const sent = Date.now();
  await Promise.all(applicants.map((a) => reviewer.completeSandboxReview(a.id, { reviewAnswer: 'GREEN' })));
  await waitUntil(() => ids.every((id) => r.first.has(id)), PERSONS * 2000, 'every decision');
  const latencies = ids.map((id) => r.first.get(id)! - sent);
  const last = Math.max(...ids.map((id) => r.first.get(id)!));
  await waitUntil(() => r.deliveries() >= (IDLE + PERSONS) * SUBSCRIPTIONS, 60_000, 'every delivery');
  figures.push({
    scenario: `burst: ${PERSONS} people reviewed at once, ${SUBSCRIPTIONS} subscriptions`,
    [`${PERSONS} tokens at once (s)`]: tokensSeconds.toFixed(1),
    'decisions/s': (PERSONS / ((last - sent) / 1000)).toFixed(2),
    'review → webhook p50 (ms)': pct(latencies, 50),
    'p95 (ms)': pct(latencies, 95),
    'max (ms)': last - sent,
    deliveries: r.deliveries(),
  });
  await r.close();
}

await onBenchStack({ database: 'vouch_bench_sdk', providerCallbacks: true }, async (stack) => {
  stack.sim!.state.updateClient(stack.recipient!.clientId, { limits: { postPer5s: 1e9, getPer5s: 1e9 } });
  say(`hosted-SDK benchmark on PostgreSQL, ${os.cpus().length} cores, provider cap ${stack.config.temporal.providerRateLimitPerSecond}/s`);
  await run(stack);
  console.table(figures);
});
