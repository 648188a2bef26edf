// The kyc-share-token CLI end to end against the simulator: output, bad rows, retries on 429 and
// 5xx, and resume after SIGKILL or Ctrl-C with nothing lost or doubled.
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { run, start } from '../helpers/processes.ts';
import { startSimWorld, type SimWorld } from '../helpers/sim.ts';
import { eventually } from '../helpers/eventually.ts';

describe('kyc-share-token', () => {
  let w: SimWorld;
  let dir: string;
  let n = 0;
  before(async () => {
    w = await startSimWorld();
    // checking every token by importing it is not what is under test here: lift our own limit
    w.sim.state.updateClient(w.us.clientId, { limits: { postPer5s: 100_000 } });
    dir = await mkdtemp(path.join(os.tmpdir(), 'vouch-sharetoken-'));
  });
  after(async () => {
    await w.close();
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await w.admin('PUT', '/_sim/faults', {});
    w.sim.state.updateClient(w.donor.clientId, { limits: { postPer5s: 50, getPer5s: 300 } });
  });

  const env = (account = w.donor) => ({ SUMSUB_BASE_URL: w.sim.url, SUMSUB_APP_TOKEN: account.appToken, SUMSUB_SECRET_KEY: account.secretKey });

  /** An input CSV of `count` donor applicants; returns its path and rows. */
  async function input(count: number, extraLines: string[] = [], header = 'externalId,applicantId') {
    const made: { id: string }[] = await w.admin('POST', '/_sim/applicants', { clientId: w.donor.clientId, scenario: 'complete', count });
    const rows = made.map((a, i) => ({ externalId: `card-${n}-${i}`, applicantId: a.id }));
    const file = path.join(dir, `in-${n++}.csv`);
    const cols = header.split(',');
    const body = rows.map((r) => cols.map((c) => r[c as 'externalId']).join(','));
    await writeFile(file, [header, ...body, ...extraLines].join('\n') + '\n');
    return { file, rows, out: file.replace(/\.csv$/, '.tokens.csv'), errs: file.replace(/\.csv$/, '.errors.csv') };
  }

  async function waitForLines(file: string, lines: number) {
    await eventually(`more than ${lines} lines in ${file}`, async () => (await readFile(file, 'utf8').catch(() => '')).split('\n').length > lines, {
      timeoutMs: 60_000,
      everyMs: 20,
    });
  }

  const readCsv = async (file: string) => parse(await readFile(file, 'utf8'), { columns: true, bom: true }) as Record<string, string>[];

  /** Every token imports at the recipient, once: proves the token is real, unexpired and unused. */
  async function assertAllImportable(tokens: string[]) {
    for (const t of tokens) assert.equal((await w.recipientApi.importApplicant({ shareToken: t })).review.answer, 'GREEN');
  }

  it('writes a token per row, reports bad rows with reasons, and exits 3 when some rows failed', async () => {
    const { file, rows, out, errs } = await input(12, [
      'no-applicant,',
      `card-${n}-0,dup-of-first-externalId`.replace(`card-${n}-0`, 'card-PLACEHOLDER'),
      'ghost,0123456789abcdef01234567',
      '"quoted, id",',
    ]);
    // make the duplicate line name the first row's externalId
    const text = (await readFile(file, 'utf8')).replace('card-PLACEHOLDER', rows[0]!.externalId);
    await writeFile(file, `\ufeff${text}`);
    const res = await run('cli/kyc-share-token.ts', ['--input', file, '--for-client-id', 'vouch', '--rate', '50'], env());
    assert.equal(res.code, 3, res.stderr);
    const written = await readCsv(out);
    assert.deepEqual(written.map((r) => r.externalId).sort(), rows.map((r) => r.externalId).sort());
    await assertAllImportable(written.map((r) => r.shareToken!));
    const errors = await readCsv(errs);
    assert.deepEqual(
      errors.map((e) => [e.externalId, e.error]).sort(),
      [
        ['ghost', 'The identity provider has no such applicant.'],
        ['no-applicant', 'missing applicantId'],
        ['quoted, id', 'missing applicantId'],
        [rows[0]!.externalId, 'duplicate externalId (first on line 2)'],
      ].sort(),
    );
    assert.match(res.stderr, /12 share tokens written/);
    assert.match(res.stderr, /4 rows failed/);
    for (const f of [out, errs]) assert.equal((await stat(f)).mode & 0o777, 0o600, `${f}: share tokens are readable by their owner only`);
  });

  it('accepts the columns in any order and exits 0 when every row is done', async () => {
    const { file, rows, out } = await input(3, [], 'applicantId,externalId');
    const res = await run('cli/kyc-share-token.ts', ['--input', file, '--for-client-id', 'vouch', '--rate', '50'], env());
    assert.equal(res.code, 0, res.stderr);
    assert.equal((await readCsv(out)).length, rows.length);
  });

  it('resumes after SIGKILL and a torn last line: every row exactly once, every token valid', async () => {
    const { file, rows, out } = await input(60);
    const first = start('cli/kyc-share-token.ts', ['--input', file, '--for-client-id', 'vouch', '--rate', '25', '--concurrency', '4', '--quiet'], env());
    await waitForLines(out, 20);
    await first.stop('SIGKILL');
    await appendFile(out, 'card-torn-line,_act-jwt-half-writ'); // a write cut short by the crash
    const before = (await readCsv(out).catch(() => [])).length;
    assert.ok(before > 0 && before < rows.length);
    const second = await run('cli/kyc-share-token.ts', ['--input', file, '--for-client-id', 'vouch', '--rate', '50'], env());
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /already there from an earlier run/);
    const written = await readCsv(out);
    const ids = written.map((r) => r.externalId);
    assert.equal(new Set(ids).size, ids.length, 'no externalId twice');
    assert.deepEqual([...ids].sort(), rows.map((r) => r.externalId).sort(), 'every row, and nothing else');
    await assertAllImportable(written.map((r) => r.shareToken!));
  });

  it('stops on Ctrl-C after writing what is in flight (exit 130), and a rerun completes the rest', async () => {
    const { file, rows, out } = await input(40);
    const first = start('cli/kyc-share-token.ts', ['--input', file, '--for-client-id', 'vouch', '--rate', '20', '--quiet'], env());
    await waitForLines(out, 5); // the tool is running and writing (its Ctrl-C handler is in place)
    assert.equal(await first.stop('SIGINT'), 130);
    assert.match(first.output(), /interrupted/);
    assert.match(first.output(), /rerun the same command to resume/);
    const partial = await readCsv(out);
    assert.ok(partial.length > 0 && partial.length < rows.length, `${partial.length} written before Ctrl-C`);
    const second = await run('cli/kyc-share-token.ts', ['--input', file, '--for-client-id', 'vouch', '--rate', '50'], env());
    assert.equal(second.code, 0, second.stderr);
    const ids = (await readCsv(out)).map((r) => r.externalId);
    assert.deepEqual([...ids].sort(), rows.map((r) => r.externalId).sort());
  });

  it('waits out 429s (Retry-After) and finishes every row', async () => {
    w.sim.state.updateClient(w.donor.clientId, { limits: { postPer5s: 4, getPer5s: 300 } });
    const limitedBefore = w.sim.state.stats.rateLimited;
    const { file, rows, out } = await input(8);
    // the admin call above does not count against the limit; the CLI's own calls do
    // generous retries: this test is about waiting out 429s, not about giving up
    const res = await run('cli/kyc-share-token.ts', ['--input', file, '--for-client-id', 'vouch', '--rate', '20', '--retries', '30'], env());
    assert.equal(res.code, 0, res.stderr);
    assert.ok(w.sim.state.stats.rateLimited > limitedBefore, 'the simulator did answer 429');
    assert.doesNotMatch(res.stderr, / 0 retries/);
    assert.equal((await readCsv(out)).length, rows.length);
  });

  it('retries 5xx answers with backoff', async () => {
    const { file, rows, out } = await input(5);
    await w.admin('PUT', '/_sim/faults', { failNext: 3, pathPattern: 'shareToken' });
    const res = await run('cli/kyc-share-token.ts', ['--input', file, '--for-client-id', 'vouch', '--rate', '50'], env());
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, / 3 retries/);
    assert.equal((await readCsv(out)).length, rows.length);
  });

  it('gives up on a row after --retries and says so in the errors file', async () => {
    const { file, errs } = await input(2);
    await w.admin('PUT', '/_sim/faults', { errorRate: 1, pathPattern: 'shareToken' });
    const res = await run('cli/kyc-share-token.ts', ['--input', file, '--for-client-id', 'vouch', '--rate', '50', '--retries', '1'], env());
    assert.equal(res.code, 3, res.stderr);
    const errors = await readCsv(errs);
    assert.equal(errors.length, 2);
    assert.match(errors[0]!.error!, /gave up after 2 attempts/);
  });

  it('stops at once with exit 1 when the provider refuses the credentials', async () => {
    const { file } = await input(3);
    const res = await run('cli/kyc-share-token.ts', ['--input', file, '--for-client-id', 'vouch'], { ...env(), SUMSUB_SECRET_KEY: 'wrong' });
    assert.equal(res.code, 1);
    assert.match(res.stderr, /fatal: The identity provider refused our credentials/);
  });

  for (const [what, args, envOverride, message] of [
    ['no --input', ['--for-client-id', 'vouch'], {}, '--input is required'],
    ['no --for-client-id', ['--input', 'x.csv'], {}, '--for-client-id is required'],
    ['a rate of zero', ['--input', 'x.csv', '--for-client-id', 'v', '--rate', '0'], {}, '--rate must be'],
    ['no credentials', ['--input', 'x.csv', '--for-client-id', 'v'], { SUMSUB_APP_TOKEN: undefined }, 'SUMSUB_APP_TOKEN'],
    ['a missing input file', ['--input', '/nonexistent/in.csv', '--for-client-id', 'v'], {}, 'cannot read'],
  ] as const) {
    it(`exits 2 on ${what}`, async () => {
      const res = await run('cli/kyc-share-token.ts', [...args], { ...env(), ...envOverride });
      assert.equal(res.code, 2, res.stderr);
      assert.ok(res.stderr.includes(message), res.stderr);
    });
  }

  it('exits 2 on an input without the required header', async () => {
    const file = path.join(dir, 'noheader.csv');
    await writeFile(file, 'abc,def\n1,2\n');
    const res = await run('cli/kyc-share-token.ts', ['--input', file, '--for-client-id', 'vouch'], env());
    assert.equal(res.code, 2);
    assert.match(res.stderr, /header row with the columns externalId and applicantId/);
  });
});
