// `npm run replay -- --query "<visibility query>"` or `--workflow-id ID [--run-id RUN]`: fetches the
// matching runs' histories from Temporal (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS settings as the
// service uses them), decodes them with the payload codec (PAYLOAD_CODEC_KEYS…), and replays each
// against the current workflow code (or --workflows PATH). Prints how many replayed and, for each
// that did not, the workflow id and run id with the non-determinism; exits 1 when any failed,
// 2 on a usage error.
import { parseArgs } from 'node:util';
import { loadProcessConfig } from '../runtime/config.ts';
import { replayRuns } from '../temporal/replay.ts';

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

  const say = (line: string) => process.stdout.write(`${line}\n`);
  const which = values['workflow-id'] ? { workflowId: values['workflow-id'], runId: values['run-id'] } : { query: values.query! };
  const { failed } = await replayRuns(loadProcessConfig(), which, { workflowsPath: values.workflows, limit, say });
  return failed > 0 ? 1 : 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`replay: ${(err as Error).message}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
}
