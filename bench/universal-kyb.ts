// Benchmark of universal KYB on a real stack (Temporal dev server, PostgreSQL, API and workers in
// this process, the local file store, a receiver on loopback behind 10 subscriptions: the limit per
// business). Each business declares 2 owners and uploads its documents; the owners are verified by
// universal KYC (database work only, so the figure is KYB's own, not the provider's rate limit,
// which bench/hosted-sdk.ts measures).
//   idle   one business at a time: its last owner's last upload answered → kyb_status_change received;
//          also the answers of POST /ukyb, a document upload and POST /ukyb/submit.
//   burst  --businesses submitted, then every owner verified with --concurrency requests in flight:
//          KYB decisions per second and last owner's upload → kyb webhook p50/p95/max.
//   node bench/universal-kyb.ts [--businesses 100] [--idle 20] [--concurrency 20]
import os from 'node:os';
import { parseArgs } from 'node:util';
import { createSubscription } from '../store/subscriptions.ts';
import type { Stack } from '../test/helpers/stack.ts';
import { canonicalPayload, documentsForm, FILES, filesForm } from '../test/helpers/ukyc.ts';
import { loopbackReceiver, onBenchStack, pct, pool, waitUntil } from './helpers.ts';

const { values } = parseArgs({
  options: { businesses: { type: 'string', default: '100' }, idle: { type: 'string', default: '20' }, concurrency: { type: 'string', default: '20' } },
});
const BUSINESSES = Number(values.businesses);
const IDLE = Number(values.idle);
const CONCURRENCY = Number(values.concurrency);
const SUBSCRIPTIONS = 10;
const OWNERS = 2;
const say = (s: string) => process.stdout.write(`${s}\n`);
const figures: Record<string, string | number>[] = [];

async function run(stack: Stack) {
  const { apiKey, businessId } = await stack.newBusiness({ name: 'bench-ukyb' });
  const r = await loopbackReceiver((e) => e.eventType === 'kyb_status_change');
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    await createSubscription(stack.db, businessId, {
      notificationChannel: 'WEBHOOK',
      notificationTypes: ['account_status_change', 'kyb_status_change'],
      webhookUrl: r.url(`sub-${i}`),
    });
  }
  const ok = (res: { status: number; text: string }, status: number) => {
    if (res.status !== status) throw new Error(res.text);
  };
  const timed = async <T>(xs: number[], fn: () => Promise<T>) => {
    const t0 = performance.now();
    const v = await fn();
    xs.push(performance.now() - t0);
    return v;
  };
  const profileMs: number[] = [];
  const documentMs: number[] = [];
  const submitMs: number[] = [];
  /** A business with its owners and documents, submitted; returns its id and its owners' ids. */
  const prepared = async (name: string) => {
    const id = (await stack.request('POST', '/entity', { key: apiKey, json: { externalId: name, type: 'BUSINESS' } })).body.id as string;
    const ubos = Array.from({ length: OWNERS }, (_, i) => ({
      externalId: `${name}-owner-${i}`,
      firstName: 'Ada',
      lastName: 'Lovelace',
      dob: '1980-12-10',
      nationality: 'GBR',
      ownershipPercentage: 40,
    }));
    const profile = await timed(profileMs, () =>
      stack.request('POST', '/ukyb', {
        key: apiKey,
        json: {
          entityId: id,
          business: {
            legalName: `${name} Ltd`,
            registrationNumber: '1',
            country: 'GBR',
            address: { country: 'GBR', postCode: 'EC1A 1BB', street: 'King Street' },
          },
          ubos,
        },
      }),
    );
    ok(profile, 201);
    const owners = (profile.body.ubos as { entityId: string }[]).map((o) => o.entityId);
    const document = async (fields: Record<string, string>) => {
      const form = documentsForm(fields);
      ok(await timed(documentMs, () => stack.request('POST', '/ukyb/documents', { key: apiKey, form })), 201);
    };
    for (const requirementSlug of ['ukyb-certificate-of-incorporation', 'ukyb-proof-of-address', 'ukyb-register-of-shareholders'])
      await document({ entityId: id, requirementSlug });
    for (const memberId of owners) await document({ entityId: id, memberId, documentType: 'PASSPORT' });
    ok(await timed(submitMs, () => stack.request('POST', '/ukyb/submit', { key: apiKey, json: { entityId: id } })), 202);
    return { id, owners };
  };
  /** The owner verified by universal KYC: the data, then the identity document (the last step). */
  const verify = async (owner: string) => {
    ok(
      await stack.request('POST', `/entity/${owner}/requirement`, {
        key: apiKey,
        json: { requirementSlug: 'ukyc-canonical-kyc-data', value: JSON.stringify(canonicalPayload()) },
      }),
      201,
    );
    ok(
      await stack.request('POST', `/entity/${owner}/requirement-slug/ukyc-id-document/upload`, {
        key: apiKey,
        form: filesForm([{ bytes: FILES.pdf, name: 'p.pdf' }]),
      }),
      201,
    );
  };

  // idle
  const decisionMs: number[] = [];
  for (let i = 0; i < IDLE; i++) {
    const b = await prepared(`idle-${i}`);
    for (const o of b.owners) await verify(o);
    const answered = Date.now();
    await waitUntil(() => r.first.has(b.id), 60_000, 'the KYB decision');
    decisionMs.push(r.first.get(b.id)! - answered);
  }
  figures.push({
    scenario: `idle: ${IDLE} businesses one at a time, ${OWNERS} owners each, ${SUBSCRIPTIONS} subscriptions`,
    'POST /ukyb p50 (ms)': Math.round(pct(profileMs, 50)),
    'document upload p50 (ms)': Math.round(pct(documentMs, 50)),
    'submit p50 (ms)': Math.round(pct(submitMs, 50)),
    'last owner upload → kyb webhook p50 (ms)': pct(decisionMs, 50),
    'p95 (ms)': pct(decisionMs, 95),
    'max (ms)': Math.max(...decisionMs),
  });

  // burst
  const bs: { id: string; owners: string[] }[] = [];
  await pool(
    Array.from({ length: BUSINESSES }, (_, i) => i),
    CONCURRENCY,
    async (i) => {
      bs.push(await prepared(`burst-${i}`));
    },
  );
  const lastOwnerAnswered = new Map<string, number>();
  const t0 = Date.now();
  await pool(bs, CONCURRENCY, async (b) => {
    for (const o of b.owners) await verify(o);
    lastOwnerAnswered.set(b.id, Date.now());
  });
  await waitUntil(() => bs.every((b) => r.first.has(b.id)), BUSINESSES * 2000, 'every KYB decision');
  const latencies = bs.map((b) => r.first.get(b.id)! - lastOwnerAnswered.get(b.id)!);
  const last = Math.max(...bs.map((b) => r.first.get(b.id)!));
  await waitUntil(() => r.deliveries() >= (IDLE + BUSINESSES) * SUBSCRIPTIONS, 120_000, 'every kyb delivery');
  figures.push({
    scenario:
      `burst: ${BUSINESSES} businesses submitted, then ${BUSINESSES * OWNERS} owners verified, ` + `${CONCURRENCY} in flight, ${SUBSCRIPTIONS} subscriptions`,
    'KYB decisions/s': (BUSINESSES / ((last - t0) / 1000)).toFixed(1),
    'last owner upload → kyb webhook p50 (ms)': pct(latencies, 50),
    'p95 (ms)': pct(latencies, 95),
    'max (ms)': Math.max(...latencies),
    'kyb deliveries': r.deliveries(),
  });
  await r.close();
}

await onBenchStack({ database: 'vouch_bench_ukyb' }, async (stack) => {
  say(`universal KYB benchmark on PostgreSQL, ${os.cpus().length} cores, local file store`);
  await run(stack);
  console.table(figures);
});
