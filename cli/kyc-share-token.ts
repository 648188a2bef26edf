#!/usr/bin/env node
// kyc-share-token: mints a Sumsub share token for each applicant of a donor account, so the donor
// can share them with Vouch (batch CSV or sync import). Reads `externalId,applicantId`, writes
// `externalId,shareToken`. Paced to a set rate, retried with backoff on 429 and 5xx, and resumable:
// rerun the same command after a crash or Ctrl-C and it carries on where it stopped.
import { parseArgs } from 'node:util';
import { ProviderError } from '../provider/errors.ts';
import { inPool } from '../lib/pool.ts';
import { createSumsubClient } from '../provider/sumsub/client.ts';
import { InputError, readInput, type InputRow } from './share-tokens/csv.ts';
import { AppendCsv, OUTPUT_HEADER, resumeOutput } from './share-tokens/output.ts';
import { backoffMs, Pacer } from './share-tokens/pacer.ts';
import { Progress } from './share-tokens/progress.ts';

const SHARE_TOKEN_TTL_S = 1200;

const usage = `usage: kyc-share-token --input applicants.csv --for-client-id CLIENT_ID [options]

Reads a CSV with the columns externalId,applicantId and writes externalId,shareToken.

  --input FILE           input CSV (required)
  --for-client-id ID     the recipient's client id at the provider (required; Vouch's account manager gives it)
  --output FILE          output CSV (default: INPUT with .tokens.csv)
  --errors FILE          rows that could not be done, with the reason (default: INPUT with .errors.csv)
  --rate N               requests per second (default 8; the provider allows 50 POST per 5 s)
  --concurrency N        requests in flight at once (default 4)
  --retries N            retries of a row after a 429, 5xx or timeout (default 6)
  --ttl SECONDS          share token lifetime (default 1200, the provider's default)
  --timeout-ms N         per-request timeout (default 10000)
  --fresh                start over: discard an earlier run's output instead of resuming
  --quiet                no progress bar

Credentials come from the environment: SUMSUB_APP_TOKEN, SUMSUB_SECRET_KEY, and SUMSUB_BASE_URL
(default https://api.sumsub.com).
Exit status: 0 all rows done, 3 some rows failed (see --errors), 2 bad usage or input, 1 fatal, 130 interrupted.`;

class UsageError extends Error {}

function options(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      input: { type: 'string' },
      'for-client-id': { type: 'string' },
      output: { type: 'string' },
      errors: { type: 'string' },
      rate: { type: 'string', default: '8' },
      concurrency: { type: 'string', default: '4' },
      retries: { type: 'string', default: '6' },
      ttl: { type: 'string', default: String(SHARE_TOKEN_TTL_S) },
      'timeout-ms': { type: 'string', default: '10000' },
      fresh: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) throw new UsageError(usage);
  if (!values.input) throw new UsageError(`--input is required\n\n${usage}`);
  if (!values['for-client-id']) throw new UsageError(`--for-client-id is required\n\n${usage}`);
  const num = (name: 'rate' | 'concurrency' | 'retries' | 'ttl' | 'timeout-ms', min: number) => {
    const n = Number(values[name]);
    if (!Number.isFinite(n) || n < min) throw new UsageError(`--${name} must be a number of at least ${min}`);
    return n;
  };
  const appToken = process.env.SUMSUB_APP_TOKEN;
  const secretKey = process.env.SUMSUB_SECRET_KEY;
  if (!appToken || !secretKey) throw new UsageError('set SUMSUB_APP_TOKEN and SUMSUB_SECRET_KEY (the donor account credentials)');
  const base = values.input.replace(/\.csv$/i, '');
  return {
    input: values.input,
    forClientId: values['for-client-id'],
    output: values.output ?? `${base}.tokens.csv`,
    errors: values.errors ?? `${base}.errors.csv`,
    rate: num('rate', 0.01),
    concurrency: Math.floor(num('concurrency', 1)),
    retries: Math.floor(num('retries', 0)),
    ttl: Math.floor(num('ttl', 1)),
    timeoutMs: Math.floor(num('timeout-ms', 100)),
    fresh: values.fresh,
    quiet: values.quiet,
    provider: { baseUrl: process.env.SUMSUB_BASE_URL ?? 'https://api.sumsub.com', appToken, secretKey },
  };
}

const say = (s: string) => process.stderr.write(`${s}\n`);

async function main(argv: string[]): Promise<number> {
  const o = options(argv);
  const { rows, bad } = await readInput(o.input);
  const resumed = o.fresh ? { done: new Set<string>(), oldestAgeMs: null } : await resumeOutput(o.output);
  if (resumed.done.size && resumed.oldestAgeMs !== null && resumed.oldestAgeMs > o.ttl * 1000) {
    say(
      `warning: ${o.output} was last written ${Math.round(resumed.oldestAgeMs / 60000)} min ago; ` +
        `tokens in it older than ${o.ttl} s have expired. Rerun with --fresh to regenerate them ` +
        `all.`,
    );
  }
  const todo = rows.filter((r) => !resumed.done.has(r.externalId));
  const out = await AppendCsv.open(o.output, OUTPUT_HEADER, { truncateFirst: o.fresh });
  const errors = await AppendCsv.open(o.errors, ['line', 'externalId', 'applicantId', 'error'], { truncateFirst: true });
  for (const b of bad) await errors.write([String(b.line), b.externalId, b.applicantId, b.reason]);

  const client = createSumsubClient({ ...o.provider, timeoutMs: o.timeoutMs });
  const pacer = new Pacer(o.rate);
  const progress = new Progress(todo.length, !o.quiet && Boolean(process.stderr.isTTY));
  let interrupted = false;
  let fatal: ProviderError | undefined;
  const onSigint = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    say('\ninterrupted: finishing the requests in flight (Ctrl-C again to quit at once)');
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);

  async function mint(row: InputRow): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      await pacer.slot();
      if (interrupted || fatal) return;
      try {
        const { token } = await client.createShareToken({ applicantId: row.applicantId, forClientId: o.forClientId, ttlInSecs: o.ttl });
        await out.write([row.externalId, token]);
        progress.done++;
        return;
      } catch (err) {
        if (!(err instanceof ProviderError)) throw err;
        if (err.kind === 'credentials') {
          fatal ??= err;
          return;
        }
        if (err.retryable && attempt < o.retries) {
          progress.retries++;
          await new Promise((r) => setTimeout(r, err.kind === 'rate_limited' ? (err.retryAfterMs ?? 5000) : backoffMs(attempt)));
          continue;
        }
        const reason = err.retryable ? `${err.message} (gave up after ${attempt + 1} attempts)` : err.message;
        await errors.write([String(row.line), row.externalId, row.applicantId, reason]);
        progress.failed++;
        return;
      } finally {
        progress.tick();
      }
    }
  }

  await inPool(todo, o.concurrency, mint, { until: () => interrupted || fatal !== undefined });
  progress.end();
  await out.close();
  await errors.close();

  const failed = bad.length + progress.failed;
  say(
    `${interrupted ? 'stopped' : 'done'}: ${progress.done} share tokens written to ${o.output}` +
      (resumed.done.size ? ` (${resumed.done.size} already there from an earlier run)` : '') +
      `, ${failed} rows failed${failed ? ` (see ${o.errors})` : ''}, ${progress.retries} retries, ` +
      `${progress.elapsedSeconds().toFixed(1)} s at ${progress.rate().toFixed(2)} tokens/s`,
  );
  if (fatal) {
    say(`fatal: ${fatal.message} Check SUMSUB_APP_TOKEN and SUMSUB_SECRET_KEY. Rerun to resume.`);
    return 1;
  }
  if (interrupted) {
    say(`rerun the same command to resume; ${todo.length - progress.done - progress.failed} rows remain`);
    return 130;
  }
  return failed ? 3 : 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError || err instanceof InputError) {
    say(`kyc-share-token: ${err.message}`);
    process.exitCode = 2;
  } else {
    say(`kyc-share-token: ${(err as Error).stack ?? err}`);
    process.exitCode = 1;
  }
}
