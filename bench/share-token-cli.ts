// Benchmark: the kyc-share-token CLI minting 1,000 share tokens against the simulator at a set rate.
// Prints the achieved request rate (measured at the simulator, first to last request) against the
// set rate, the wall time of the whole run, and how many 429s the simulator answered.
//   node bench/share-token-cli.ts [--rows 1000] [--rates 8,10] [--concurrency 8]
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startProviderSim } from '../provider-sim/server.ts';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '1000' }, rates: { type: 'string', default: '8,10' }, concurrency: { type: 'string', default: '8' } },
});
const rows = Number(values.rows);
const root = path.resolve(import.meta.dirname, '..');

const sim = await startProviderSim();
sim.state.addClient({ clientId: 'vouch' });
const dir = await mkdtemp(path.join(os.tmpdir(), 'vouch-bench-'));
const results: Record<string, string | number>[] = [];
try {
  for (const rate of values.rates.split(',').map(Number)) {
    const donor = sim.state.addClient({ clientId: `donor-${rate}` }); // fresh limit window per run
    const lines = ['externalId,applicantId'];
    for (let i = 0; i < rows; i++) lines.push(`card-${i},${sim.state.addScenarioApplicant(donor.clientId, 'complete', `a-${rate}-${i}`, i).id}`);
    const input = path.join(dir, `in-${rate}.csv`);
    await writeFile(input, `${lines.join('\n')}\n`);
    const stamps: number[] = [];
    const onRequest = (req: { url?: string; method?: string }) => {
      if (req.method === 'POST' && req.url?.startsWith('/resources/accessTokens/shareToken')) stamps.push(performance.now());
    };
    sim.server.on('request', onRequest);
    const limitedBefore = sim.state.stats.rateLimited;
    const started = performance.now();
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(
        process.execPath,
        ['cli/kyc-share-token.ts', '--input', input, '--for-client-id', 'vouch', '--rate', String(rate), '--concurrency', values.concurrency, '--quiet'],
        {
          cwd: root,
          env: { ...process.env, SUMSUB_BASE_URL: sim.url, SUMSUB_APP_TOKEN: donor.appToken, SUMSUB_SECRET_KEY: donor.secretKey },
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
      child.once('exit', resolve);
    });
    const wall = (performance.now() - started) / 1000;
    sim.server.off('request', onRequest);
    const span = (stamps.at(-1)! - stamps[0]!) / 1000;
    const achieved = (stamps.length - 1) / span;
    results.push({
      'set rate (/s)': rate,
      'achieved (/s)': achieved.toFixed(3),
      'achieved / set': (achieved / rate).toFixed(4),
      requests: stamps.length,
      '429s': sim.state.stats.rateLimited - limitedBefore,
      'wall time (s)': wall.toFixed(1),
      exit: String(code),
    });
  }
} finally {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
}
process.stdout.write(`\nkyc-share-token: ${rows} tokens per run, simulator limit 50 POST / 5 s per client, ${os.cpus().length} cores\n`);
console.table(results);
