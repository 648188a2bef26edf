// The API description is the API: Schemathesis (pinned in .tools/venv by npm install) generates
// requests from /openapi.json — valid ones, invalid ones, missing headers, stateful sequences — and
// runs every check against the real service (`--checks all`). Any finding fails the test. Where a
// schema-valid request may be refused for reasons of state or content no schema can state,
// schemathesis.toml lists those statuses per operation, with the reason. A fixed seed makes a CI
// run reproducible; explore with other seeds by running the same command by hand. Its phases run as
// tests of their own — the examples and the coverage phase (every parameter's boundaries), then
// fuzzing and the stateful sequences — each a finding of its own and each within the run's bound
// on one test even on a busy machine (together they are two minutes of two cores).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { venvBin } from '../../dev/temporal-cli.ts';
import { root } from '../helpers/processes.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

const SEED = '20261122';

describe('the API against its OpenAPI document (Schemathesis)', () => {
  let stack: Stack;
  let key: string;
  before(async () => {
    // its requests come fast: lift the per-business limits so they test the rules, not the limiter
    stack = await startStack({
      workers: true,
      env: { API_RATE_LIMIT_PER_SECOND: '1000000', SYNC_IMPORT_RATE_LIMIT_PER_SECOND: '1000000', WEBHOOK_REDELIVERIES_PER_SECOND: '1000000' },
    });
    ({ apiKey: key } = await stack.newBusiness({ name: 'Schemathesis' }));
  });
  after(() => stack.close());

  /** Runs Schemathesis's `phases` against the stack with every check on; fails on any finding, with its report. */
  async function schemathesis(phases: string) {
    const bin = path.join(venvBin, 'schemathesis');
    assert.ok(existsSync(bin), 'Schemathesis is installed by npm install (scripts/test-tools-requirements.txt)');
    // run from a temporary folder: Schemathesis keeps a cache in its working directory
    const cwd = await mkdtemp(path.join(os.tmpdir(), 'vouch-schemathesis-'));
    const args = [
      '--config-file',
      path.join(root, 'schemathesis.toml'),
      'run',
      `${stack.url}/openapi.json`,
      '--url',
      stack.url,
      '--checks',
      'all',
      '--phases',
      phases,
      '-H',
      `x-vouch-api-key: ${key}`,
    ];
    args.push('--max-examples', '30', '--seed', SEED, '--generation-database', 'none', '--no-color');
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = execFile(bin, args, { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
      );
      child.stdin?.end();
    });
    await rm(cwd, { recursive: true, force: true });
    const summary = output.slice(output.lastIndexOf('SUMMARY'));
    process.stdout.write(
      `# ${summary
        .split('\n')
        .filter((l) => /generated|passed|failures|Selected|Tested/.test(l))
        .map((l) => l.trim())
        .join('; ')}\n`,
    );
    const report = path.join(os.tmpdir(), `vouch-schemathesis-report-${phases.replace(',', '-')}.txt`);
    if (code !== 0) await writeFile(report, output); // the whole report; the assertion shows its tail
    assert.equal(code, 0, `full report: ${report}\n${output.slice(-6000)}`);
    assert.match(summary, /\d+ generated, \d+ passed/);
    assert.doesNotMatch(summary, /failures?:/i);
  }

  it('finds nothing with every check on: examples and every parameter at its boundaries (coverage)', () => schemathesis('examples,coverage'));

  it('finds nothing with every check on: generated requests and stateful sequences (fuzzing, stateful)', () => schemathesis('fuzzing,stateful'));
});
