// `npm test`: one Temporal dev server and one fresh PostgreSQL database for the whole run, then
// node's test runner over test/**/*.test.ts (or the files given). Everything is torn down after.
//   DATA_DIR           set to a directory of the run's own (never a developer's .data)
//   TEST_POSTGRES_URL  admin connection used to create and drop the run's database
//                      (default postgres://postgres@127.0.0.1:5432/postgres)
import { spawn } from 'node:child_process';
import { globSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflows } from '../worker.ts';
import { createDatabase, DEFAULT_POSTGRES_URL, startTemporal } from './helpers/infra.ts';

const say = (s: string) => process.stdout.write(`[test] ${s}\n`);

/**
 * Files run alone, one after the other, after the others: the ones that load the machine on purpose
 * (5,000 records as fast as it goes, with a worker killed) and the ones that hold timing to a bound:
 * another business's reads within 1 s under an attack (alone 0.25 s; beside three busy files on two
 * cores once 1,033 ms), the provider's 10 calls a second counted where they arrive (the pace's 50 ms
 * margin; beside busy files the in-process simulator once saw two arrivals 44 ms apart), the provider
 * queue's turns between businesses.
 */
const SOLO = [
  'test/integration/spec-rules.test.ts',
  'test/integration/provider-fairness.test.ts',
  'test/e2e/tenant-dos.test.ts',
  'test/e2e/requirement-batch-crash.test.ts',
];

async function main(): Promise<number> {
  const started = performance.now();
  const files = process.argv.slice(2);
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'vouch-test-'));
  const cleanups: (() => Promise<unknown>)[] = [() => rm(tmp, { recursive: true, force: true })];
  try {
    const adminUrl = process.env.TEST_POSTGRES_URL ?? DEFAULT_POSTGRES_URL;
    const database = await createDatabase(adminUrl);
    cleanups.push(() => database.drop());

    const [temporal, bundle] = await Promise.all([startTemporal(), bundleWorkflows()]);
    cleanups.push(() => temporal.stop());
    const bundlePath = path.join(tmp, 'workflow-bundle.js');
    await writeFile(bundlePath, bundle);
    say(`PostgreSQL database ready, Temporal dev server at ${temporal.address}, workflows bundled (${((performance.now() - started) / 1000).toFixed(1)} s)`);

    const env = {
      ...process.env,
      TEST_DATABASE_URL: database.url,
      TEST_POSTGRES_URL: adminUrl,
      TEMPORAL_ADDRESS: temporal.address,
      WORKFLOW_BUNDLE_PATH: bundlePath,
      // keys, secrets and files of this run only: made on first use by test files starting together
      DATA_DIR: path.join(tmp, 'data'),
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    };
    /** Runs node's test runner over these files, `concurrency` files at a time; its exit code. */
    const run = (paths: string[], concurrency: number) => {
      const child = spawn(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=300000', ...paths], { stdio: 'inherit', env });
      const stop = (signal: NodeJS.Signals) => child.kill(signal);
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return new Promise<number>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
    };
    if (files.length) return await run(files, 3);
    // the whole suite: three files at a time, then the ones that load the machine on purpose, alone
    // (they neither slow the timing-sensitive files beside them nor are slowed by them)
    const all = globSync('test/**/*.test.ts').sort();
    const shared = await run(
      all.filter((f) => !SOLO.includes(f)),
      3,
    );
    say('the files that run alone: ' + SOLO.join(', '));
    const alone = await run(SOLO, 1);
    return shared || alone;
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch((err) => say(`clean-up failed: ${(err as Error).message}`));
  }
}

if (import.meta.main) {
  process.exitCode = await main();
}
