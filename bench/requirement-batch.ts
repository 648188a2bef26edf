// Benchmarks of batches of requirement submissions (interface v1.1.0) on a real stack: a Temporal dev
// server, a fresh PostgreSQL database, the API and workers in this process, loopback receivers.
//   upload   a 5,000-record JSON Lines file of canonical KYC data: upload → 201 (validated and
//            stored), the file's size, the process's memory growth;
//   decide   5,000 people whose identity document is already there, a business with 10
//            subscriptions: upload → every decision decided, and → every webhook delivered to all
//            10; decisions per second counted to the last delivery (goal ≥ 100/s);
//   node bench/requirement-batch.ts [--only upload,decide] [--records 5000] [--runs 3] [--subscriptions 10]
import { parseArgs } from 'node:util';
import os from 'node:os';
import { createSubscription } from '../store/subscriptions.ts';
import { bulkEntities, bulkIdDocuments, entityIdsOf } from '../test/helpers/bulk.ts';
import { canonicalRecords, jsonLines, uploadRecords, waitForRequirementBatch } from '../test/helpers/requirement-batches.ts';
import type { Stack } from '../test/helpers/stack.ts';
import { onBenchStack, pct, receiverProcess, waitUntil } from './helpers.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: 'upload,decide' },
    records: { type: 'string', default: '5000' },
    runs: { type: 'string', default: '3' },
    subscriptions: { type: 'string', default: '10' },
  },
});
const only = new Set(values.only.split(','));
const RECORDS = Number(values.records);
const RUNS = Number(values.runs);
const SUBSCRIPTIONS = Number(values.subscriptions);
const say = (s: string) => process.stdout.write(`${s}\n`);
const figures: Record<string, string>[] = [];

/** A business with `n` people (their identity documents uploaded when `withDocuments`) and the file of their canonical KYC data. */
async function people(stack: Stack, label: string, n: number, withDocuments: boolean) {
  const { apiKey, businessId } = await stack.newBusiness({ name: label });
  const externalIds = Array.from({ length: n }, (_, i) => `${label}-${i}`);
  await bulkEntities(stack.db, businessId, externalIds);
  const ids = await entityIdsOf(stack.db, businessId, externalIds);
  if (withDocuments) await bulkIdDocuments(stack.db, businessId, ids);
  return { apiKey, businessId, ids, file: jsonLines(canonicalRecords(ids)) };
}

async function uploadBench(stack: Stack) {
  const times: number[] = [];
  let bytes = 0;
  let grown = 0;
  for (let run = 0; run < RUNS; run++) {
    const p = await people(stack, `upload-${run}`, RECORDS, false);
    await createSubscription(stack.db, p.businessId, {
      notificationChannel: 'WEBHOOK',
      notificationTypes: ['account_status_change'],
      webhookUrl: 'http://127.0.0.1:9/unused',
    });
    bytes = Buffer.byteLength(p.file);
    global.gc?.();
    const rss = process.memoryUsage().rss;
    const t0 = performance.now();
    const res = await uploadRecords(stack, p.apiKey, p.file);
    times.push(performance.now() - t0);
    grown = Math.max(grown, process.memoryUsage().rss - rss);
    if (res.status !== 201) throw new Error(`upload: ${res.status} ${res.text}`);
    // cancel: the people have no documents and this part measures the upload only
    await stack.request('POST', `/entity/requirement/batch/${res.body.batchId}/cancel`, { key: p.apiKey });
  }
  const row = {
    part: 'upload',
    records: String(RECORDS),
    'file MB': (bytes / 1024 / 1024).toFixed(1),
    'upload → 201 ms (runs)': times.map((t) => t.toFixed(0)).join(' / '),
    'p50 ms': pct(times, 50).toFixed(0),
    'RSS growth MB': (grown / 1024 / 1024).toFixed(0),
  };
  figures.push(row);
  say(JSON.stringify(row));
}

async function decideBench(stack: Stack) {
  for (let run = 0; run < RUNS; run++) {
    const p = await people(stack, `decide-${run}`, RECORDS, true);
    const receiver = await receiverProcess('account_status_change');
    for (let i = 0; i < SUBSCRIPTIONS; i++)
      await createSubscription(stack.db, p.businessId, {
        notificationChannel: 'WEBHOOK',
        notificationTypes: ['account_status_change'],
        webhookUrl: receiver.url(`sub-${i}`),
      });
    const t0 = performance.now();
    const res = await uploadRecords(stack, p.apiKey, p.file);
    if (res.status !== 201) throw new Error(`upload: ${res.status} ${res.text}`);
    const uploaded = performance.now() - t0;
    const status = await waitForRequirementBatch(stack, p.apiKey, res.body.batchId, 600_000);
    const decidedAt = performance.now() - t0;
    if (status.summary.decided !== RECORDS)
      throw new Error(`decided ${status.summary.decided} of ${RECORDS}: ${JSON.stringify(status.summary.errors.slice(0, 2))}`);
    await waitUntil(() => receiver.deliveries() >= RECORDS * SUBSCRIPTIONS, 600_000, 'every delivery');
    const deliveredAt = performance.now() - t0;
    await receiver.close();
    // attempts that failed (each waits out its retry schedule before the next): what they met
    const failed = await stack.db.query<{ error: string; n: string }>(
      `SELECT a.error, count(*) AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE d.business_id = $1 AND NOT a.succeeded GROUP BY a.error ORDER BY n DESC`,
      [p.businessId],
    );
    const row = {
      part: 'decide',
      run: String(run + 1),
      'upload → 201 ms': uploaded.toFixed(0),
      'upload → all decided s': (decidedAt / 1000).toFixed(1),
      'upload → all delivered s': (deliveredAt / 1000).toFixed(1),
      'decisions/s (to the last delivery)': (RECORDS / (deliveredAt / 1000)).toFixed(1),
      'deliveries/s': ((RECORDS * SUBSCRIPTIONS) / (deliveredAt / 1000)).toFixed(0),
      deliveries: String(receiver.deliveries()),
      'failed attempts': failed.map((f) => `${f.n} × ${f.error}`).join('; ') || 'none',
    };
    figures.push(row);
    say(JSON.stringify(row));
  }
}

say(`node ${process.version}, ${os.cpus().length} cores, ${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB`);
await onBenchStack({ database: 'vouch_bench_requirements', workerProcess: true }, async (stack) => {
  if (only.has('upload')) await uploadBench(stack);
  if (only.has('decide')) await decideBench(stack);
});
say('\nfigures:');
for (const f of figures) say(JSON.stringify(f));
