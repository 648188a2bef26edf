// `npm run replay -- --query "<visibility query>"` or `--workflow-id ID [--run-id RUN]`: fetches the
// matching runs' histories from Temporal (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS settings as the
// service uses them), decodes them with the payload codec (PAYLOAD_CODEC_KEYS…), and replays each
// against the current workflow code (or --workflows PATH). Prints how many replayed and, for each
// that did not, the workflow id and run id with the non-determinism; exits 1 when any failed,
// 2 on a usage error.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { loadConfig } from '../runtime/config.ts';
import { encryptingDataConverter, loadCodecKeys } from '../runtime/payload-codec.ts';
import { connectClient } from '../runtime/temporal.ts';

const usage = `usage: npm run replay -- (--query "<visibility query>" | --workflow-id ID [--run-id RUN_ID]) [--workflows PATH] [--limit N]
  --query        e.g. "WorkflowType='batchImportWorkflow' AND StartTime > '2026-11-01T00:00:00Z'", "BusinessId='…' AND VouchStatus='failed'"
  --workflow-id  one workflow (its latest run, or --run-id)
  --workflows    the workflow code to replay against (default workflows/index.ts: the code of this checkout)
  --limit        at most this many runs (default 1000)`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      query: { type: 'string' },
      'workflow-id': { type: 'string' },
      'run-id': { type: 'string' },
      workflows: { type: 'string' },
      limit: { type: 'string', default: '1000' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) throw new UsageError(usage);
  if (Boolean(values.query) === Boolean(values['workflow-id'])) throw new UsageError(`give --query or --workflow-id\n${usage}`);
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive integer');

  const config = loadConfig();
  const client = await connectClient(config);
  const say = (s: string) => process.stdout.write(`${s}\n`);
  try {
    const runs: { workflowId: string; runId?: string | undefined }[] = [];
    if (values['workflow-id']) runs.push({ workflowId: values['workflow-id'], runId: values['run-id'] });
    else for await (const w of client.workflow.list({ query: values.query! })) if (runs.push({ workflowId: w.workflowId, runId: w.runId }) >= limit) break;
    say(`replaying ${runs.length} run${runs.length === 1 ? '' : 's'} against ${values.workflows ?? 'workflows/index.ts'}`);
    const histories = (async function* () {
      for (const r of runs) yield { workflowId: `${r.workflowId} ${r.runId ?? '(latest run)'}`, history: await client.workflow.getHandle(r.workflowId, r.runId).fetchHistory() };
    })();
    const workflowsPath = path.resolve(values.workflows ?? path.join(import.meta.dirname, '..', 'workflows', 'index.ts'));
    const quiet = () => {};
    const { code } = await bundleWorkflowCode({ workflowsPath, logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: (m) => process.stderr.write(`${m}\n`) } });
    let replayed = 0;
    let failed = 0;
    const dataConverter = encryptingDataConverter(await loadCodecKeys(config));
    for await (const result of Worker.runReplayHistories({ workflowBundle: { code }, dataConverter, replayName: 'vouch-replay' }, histories)) {
      replayed++;
      if (result.error) {
        failed++;
        say(`NONDETERMINISTIC ${result.workflowId}: ${result.error.name}: ${result.error.message.split('\n')[0]}`);
      }
    }
    say(`${replayed - failed} replayed, ${failed} failed`);
    return failed > 0 ? 1 : 0;
  } finally {
    await client.connection.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`replay: ${(err as Error).message}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
}
