// `npm test`: the test tiers, fastest first. Unit tests (test/unit) need no database, Temporal or
// workflow bundle and run first, so a broken unit fails in well under a minute; then one Temporal
// dev server and one fresh PostgreSQL database for the rest of the run — integration tests
// (test/integration: the real parts, one concern each) and end-to-end tests (test/e2e: processes,
// crashes, soaks' short forms). Everything is torn down after.
//   node test/run.ts                      every tier (unit first; the rest only if it passes)
//   node test/run.ts unit|integration|e2e one tier (`npm run test:unit`, …)
//   node test/run.ts <files…>             those files (the database and Temporal only if one needs them)
//   DATA_DIR           set to a directory of the run's own (never a developer's .data)
//   TEST_POSTGRES_URL  admin connection used to create and drop the run's database
//                      (default postgres://postgres@127.0.0.1:5432/postgres)
import { spawn, type ChildProcess } from 'node:child_process';
import { globSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, DEFAULT_POSTGRES_URL, startTemporal } from './helpers/infra.ts';

const say = (s: string) => process.stdout.write(`[test] ${s}\n`);

/**
 * Files run alone, one after the other, after the others: the ones that hold timing to a bound:
 * another business's reads within 1 s under an attack (alone 0.25 s; beside three busy files on two
 * cores once 1,033 ms), the provider's 10 calls a second counted where they arrive (the pace's 50 ms
 * margin; beside busy files the in-process simulator once saw two arrivals 44 ms apart), the provider
 * queue's turns between businesses. (The requirement batch killed mid-run, which loads the machine on
 * purpose, ran here too until 2026-12-01: alone it kept two cores for 35 s that the shared files can use.)
 */
const SOLO = ['test/integration/spec-rules.test.ts', 'test/integration/provider-fairness.test.ts', 'test/e2e/tenant-dos.test.ts'];

/**
 * The shared files that take longest, longest first (seconds each in a full run on the two-core
 * machine, 2026-12-01): started first, so the run does not end on one long file started late
 * while the third slot and a core idle. A file not listed starts after them, in name order; a list
 * gone stale only costs time.
 */
export const LONGEST = [
  'test/e2e/api-contract.test.ts', // 99 (Schemathesis)
  'test/e2e/faults.test.ts', // 82
  'test/e2e/kyb-crash.test.ts', // 78 (60 of them waiting for the reconciler's grace)
  'test/integration/webhook-hostile-receiver.test.ts', // 43
  'test/e2e/ukyc-crash.test.ts', // 39
  'test/integration/webhook-health.test.ts', // 38
  'test/e2e/sdk-crash.test.ts', // 37
  'test/e2e/requirement-batch-crash.test.ts', // 35
  'test/e2e/big-batch.test.ts', // 34
  'test/e2e/batch-crash.test.ts', // 34
  'test/integration/workflow-branches.test.ts', // 33
  'test/integration/temporal-tls.test.ts', // 32
  'test/integration/sync-import.test.ts', // 30
  'test/integration/evidence.test.ts', // 28
  'test/e2e/retention-crash.test.ts', // 27
  'test/integration/webhook-delivery.test.ts', // 27
  'test/e2e/kyc-share-token.test.ts', // 26
  'test/e2e/dev-start.test.ts', // 24
  'test/integration/requirement-batch.test.ts', // 21
  'test/integration/batch-processing.test.ts', // 21
];

/** Files longest first (LONGEST's order), the rest in the order given. */
export function longestFirst(files: readonly string[]): string[] {
  const rank = (f: string) => (LONGEST.includes(f) ? LONGEST.indexOf(f) : LONGEST.length);
  return [...files].sort((a, b) => rank(a) - rank(b));
}

export const TIERS = ['unit', 'integration', 'e2e'] as const;
type Tier = (typeof TIERS)[number];

/** What a run does, in order: files run on nothing (unit), then — only if they passed — files on the run's database and Temporal. */
export type RunPlan = {
  /** Run first, with no database, Temporal or bundle; a failure ends the run. */
  unit: string[];
  /** Whether the database, Temporal and the bundle are started (after `unit`). */
  infra: boolean;
  /** Run three at a time on them. */
  shared: string[];
  /** Then one at a time. */
  solo: string[];
};

const isUnit = (file: string) => path.normalize(file).startsWith(path.join('test', 'unit') + path.sep);

/** The plan for `node test/run.ts <args>`: tier names, test files, or nothing (every tier); `all` lists every test file by path. */
export function planRun(args: readonly string[], all: readonly string[]): RunPlan {
  const files = args.filter((a) => !(TIERS as readonly string[]).includes(a));
  // the files given run as given (three at a time), on infrastructure only if one is not a unit file
  if (files.length) return { unit: [], infra: files.some((f) => !isUnit(f)), shared: files, solo: [] };
  const tiers: readonly Tier[] = args.length === 0 ? TIERS : TIERS.filter((t) => args.includes(t));
  const inTier = (t: Tier) => all.filter((f) => path.normalize(f).startsWith(path.join('test', t) + path.sep));
  const rest = tiers.filter((t) => t !== 'unit').flatMap(inTier);
  const shared = (t: Tier) => (tiers.includes(t) ? longestFirst(inTier(t).filter((f) => !SOLO.includes(f))) : []);
  return {
    unit: tiers.includes('unit') ? inTier('unit') : [],
    infra: rest.length > 0,
    shared: spread(shared('e2e'), shared('integration')),
    solo: SOLO.filter((f) => rest.includes(f)),
  };
}

/**
 * The heavy files (end-to-end: processes, crashes, a fuzzer) spread among the light ones, each
 * followed by its share of them: taken three at a time in this order, the heavy ones seldom run
 * together, so none of them (Schemathesis above all) waits on two others for the machine's two cores.
 * Both come longest first (LONGEST), so the last files to start are short ones.
 */
export function spread(heavy: readonly string[], light: readonly string[]): string[] {
  const out: string[] = [];
  let next = 0;
  heavy.forEach((file, i) => {
    out.push(file);
    for (const until = Math.round(((i + 1) * light.length) / heavy.length); next < until;) out.push(light[next++]!);
  });
  return [...out, ...light.slice(next)];
}

async function main(): Promise<number> {
  const started = performance.now();
  const plan = planRun(process.argv.slice(2), globSync('test/**/*.test.ts').sort());
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'vouch-test-'));
  const cleanups: (() => Promise<unknown>)[] = [() => rm(tmp, { recursive: true, force: true })];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // keys, secrets and files of this run only: made on first use by test files starting together
    DATA_DIR: path.join(tmp, 'data'),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    // every process must name its environment; the ones tests start are sandboxes unless a test names another
    VOUCH_ENVIRONMENT: 'sandbox',
    // every test file is a process, and many start more (the API, workers, the CLI): each would strip
    // and compile the same TypeScript again; Node's compile cache keeps it (by content) for all of them
    NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? path.resolve('node_modules', '.cache', 'node-compile'),
  };
  /** Runs node's test runner over these files, `concurrency` files at a time, in its own order (by name); its exit code. */
  const run = (paths: string[], concurrency: number) => {
    if (paths.length === 0) return Promise.resolve(0);
    const child = spawn(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=300000', ...paths], { stdio: 'inherit', env });
    return exitOf(child);
  };
  /**
   * Runs these files in this order, `concurrency` at a time: node's runner sorts the files it is given
   * by name, which ended a run on its longest files (webhook-*) started last. Each file is a runner
   * of its own that runs it in its own process (no second process per file, as before); its report
   * is printed whole when it ends, so three files' lines never interleave. Its exit code: 0 when every file passed.
   */
  const runInOrder = async (paths: string[], concurrency: number) => {
    const queue = [...paths];
    const failed: string[] = [];
    const one = async (file: string) => {
      const child = spawn(process.execPath, ['--test', '--test-isolation=none', '--test-timeout=300000', file], { stdio: ['ignore', 'pipe', 'pipe'], env });
      const out: Buffer[] = [];
      child.stdout!.on('data', (c: Buffer) => out.push(c));
      child.stderr!.on('data', (c: Buffer) => out.push(c));
      const code = await exitOf(child);
      process.stdout.write(Buffer.concat(out));
      if (code !== 0) failed.push(file);
    };
    await Promise.all(
      Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
        for (let file = queue.shift(); file !== undefined; file = queue.shift()) await one(file);
      }),
    );
    if (failed.length) say(`FAILED: ${failed.join(', ')}`);
    return failed.length ? 1 : 0;
  };
  /** One PostgreSQL database, one Temporal dev server and the workflow bundle, for every file that follows. */
  const startInfra = async () => {
    const adminUrl = process.env.TEST_POSTGRES_URL ?? DEFAULT_POSTGRES_URL;
    const database = await createDatabase(adminUrl);
    cleanups.push(() => database.drop());
    const { bundleWorkflows } = await import('../worker.ts'); // the Temporal SDK: loaded only when a tier needs it
    const [temporal, bundle] = await Promise.all([startTemporal(), bundleWorkflows()]);
    cleanups.push(() => temporal.stop());
    const bundlePath = path.join(tmp, 'workflow-bundle.js');
    await writeFile(bundlePath, bundle);
    Object.assign(env, { TEST_DATABASE_URL: database.url, TEST_POSTGRES_URL: adminUrl, TEMPORAL_ADDRESS: temporal.address, WORKFLOW_BUNDLE_PATH: bundlePath });
    say(`PostgreSQL database ready, Temporal dev server at ${temporal.address}, workflows bundled (${seconds(started)} s)`);
  };
  try {
    if (plan.unit.length) {
      const unit = await run(plan.unit, 4);
      say(`unit tier ${unit === 0 ? 'passed' : 'FAILED'} (${seconds(started)} s)`);
      if (unit !== 0) return unit;
    }
    if (plan.infra) await startInfra();
    // three files at a time, then the ones that load the machine on purpose, alone
    // (they neither slow the timing-sensitive files beside them nor are slowed by them)
    const shared = await runInOrder(plan.shared, 3);
    if (plan.solo.length) say('the files that run alone: ' + plan.solo.join(', '));
    const alone = await runInOrder(plan.solo, 1);
    if (plan.infra) say(`done in ${seconds(started)} s`);
    return shared || alone;
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch((err) => say(`clean-up failed: ${(err as Error).message}`));
  }
}

/** A child's exit code (1 when a signal ended it); SIGINT and SIGTERM to this process reach it meanwhile. */
function exitOf(child: ChildProcess): Promise<number> {
  const stop = (signal: NodeJS.Signals) => child.kill(signal);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return new Promise<number>((resolve) =>
    child.once('exit', (code, signal) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(code ?? (signal ? 1 : 0));
    }),
  );
}

const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);

if (import.meta.main) {
  process.exitCode = await main();
}
