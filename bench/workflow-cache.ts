// What a cached workflow costs a worker's memory: the figure WORKER_MAX_CACHED_WORKFLOWS is sized by
// (the Kubernetes manifests, the configuration table). A worker in this process, with Vouch's workflow
// bundle and a sticky cache larger than the run, on a task queue of its own on a Temporal dev server;
// --workflows person verifications (the longest-lived kind: each waits up to 7 days for a review), started
// in --steps steps. After each step, once every workflow has taken its first turn and sits in the cache,
// it samples the process's resident memory, its main thread's V8 heap and its workflow threads' V8 heap
// (runtime/workflow-thread-heap.ts), the medians of --samples samples a second apart (the threads'
// garbage comes and goes), and prints them with the cost per cached workflow (the slope of each line).
// No database and no activities: a person verification's first turn only waits.
//   node bench/workflow-cache.ts [--workflows 1000] [--steps 4] [--samples 7]
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { personVerificationWorkflow } from '../workflows/index.ts';
import { bundleWorkflows } from '../worker.ts';
import { workerThreadHeaps } from '../runtime/workflow-thread-heap.ts';
import { startTemporal } from '../test/helpers/infra.ts';
import { pct, pool } from './helpers.ts';
import { slope } from './soak/report.ts';

const { values: v } = parseArgs({
  options: {
    workflows: { type: 'string', default: '1000' },
    steps: { type: 'string', default: '4' },
    samples: { type: 'string', default: '7' },
  },
});
const total = Number(v.workflows);
const steps = Number(v.steps);
const samples = Number(v.samples);
const MB = 1024 * 1024;
const say = (s: string) => process.stdout.write(`${s}\n`);

Runtime.install({ logger: new DefaultLogger('WARN') });
const temporal = await startTemporal();
const taskQueue = `cache-bench-${randomUUID()}`;
const nativeConnection = await NativeConnection.connect({ address: temporal.address });
const worker = await Worker.create({
  connection: nativeConnection,
  taskQueue,
  workflowBundle: { code: await bundleWorkflows() },
  maxCachedWorkflows: total + 100,
});
const running = worker.run();
const connection = await Connection.connect({ address: temporal.address });
const client = new Client({ connection });

/** Resident memory and the two heaps (MB), each the median of `samples` samples a second apart. */
async function measure() {
  const rss: number[] = [];
  const main: number[] = [];
  const threads: number[] = [];
  for (let i = 0; i < samples; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    rss.push(process.memoryUsage().rss / MB);
    main.push(process.memoryUsage().heapUsed / MB);
    threads.push(workerThreadHeaps().used / MB);
  }
  return { rss: pct(rss, 50), main: pct(main, 50), threads: pct(threads, 50) };
}

try {
  // one workflow first: the threads start and the bundle loads; the baseline is measured after it
  const handles: WorkflowHandle[] = [];
  const startOne = async () => {
    const entityId = randomUUID();
    handles.push(
      await client.workflow.start(personVerificationWorkflow, {
        taskQueue,
        workflowId: `cache-bench-${entityId}`,
        args: [{ entityId, providerTaskQueue: `${taskQueue}-provider`, idleMs: 7 * 24 * 3600 * 1000 }],
      }),
    );
  };
  /** Until every workflow started has taken its first turn (its timer is set): then it is in the cache. */
  const settled = async () => {
    for (const h of handles) {
      for (;;) {
        const { historyLength } = await h.describe();
        if (historyLength >= 4) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  await startOne();
  await settled();
  const rows: { cached: number; rss: number; main: number; threads: number }[] = [{ cached: 1, ...(await measure()) }];
  const per = Math.ceil(total / steps);
  while (handles.length < total) {
    const n = Math.min(per, total - handles.length);
    await pool(
      Array.from({ length: n }, (_, i) => i),
      20,
      startOne,
    );
    await settled();
    rows.push({ cached: handles.length, ...(await measure()) });
    say(`${handles.length} workflows cached`);
  }
  const r1 = (x: number) => x.toFixed(1);
  const kb = (x: number) => (x * 1024).toFixed(0);
  say('');
  say(`### A cached workflow's memory (${total} person verifications, each waiting; medians of ${samples} samples)`);
  say('');
  say('| workflows cached | resident (MB) | main thread heap (MB) | workflow threads heap (MB) |');
  say('| --- | --- | --- | --- |');
  for (const r of rows) say(`| ${r.cached} | ${r1(r.rss)} | ${r1(r.main)} | ${r1(r.threads)} |`);
  const line = (k: 'rss' | 'main' | 'threads') => slope(rows.map((r) => [r.cached, r[k]] as const)) ?? NaN;
  say('');
  say(`Per cached workflow (slope): resident ${kb(line('rss'))} KB, main thread heap ${kb(line('main'))} KB, workflow threads heap ${kb(line('threads'))} KB`);
  await Promise.all(handles.map((h) => h.terminate('benchmark over').catch(() => undefined)));
} finally {
  worker.shutdown();
  await running.catch(() => undefined);
  await connection.close();
  await nativeConnection.close();
  await temporal.stop();
}
