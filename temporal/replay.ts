// Replays runs fetched from Temporal against workflow code (npm run replay, cli/replay.ts): the
// histories decoded with the payload codec, each replayed by the SDK's replayer; what did not
// replay is said with its workflow id, run id and the non-determinism.
import path from 'node:path';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { Config } from '../runtime/config.ts';
import { connectClient } from './connection.ts';
import { encryptingDataConverter, FAILURE_CONVERTER_PATH } from './payload-codec.ts';
import { loadCodecKeys } from '../runtime/codec-keys.ts';

export type RunsToReplay = { query: string } | { workflowId: string; runId?: string | undefined };

/** Replays the runs a visibility query (at most `limit`) or a workflow id names; `workflowsPath` defaults to this checkout's workflows/index.ts. */
export async function replayRuns(
  config: Config,
  which: RunsToReplay,
  options: { workflowsPath?: string | undefined; limit: number; say: (line: string) => void },
): Promise<{ replayed: number; failed: number }> {
  const { say, limit } = options;
  const client = await connectClient(config);
  try {
    const runs: { workflowId: string; runId?: string | undefined }[] = [];
    if ('workflowId' in which) runs.push(which);
    else for await (const w of client.workflow.list({ query: which.query })) if (runs.push({ workflowId: w.workflowId, runId: w.runId }) >= limit) break;
    say(`replaying ${runs.length} run${runs.length === 1 ? '' : 's'} against ${options.workflowsPath ?? 'workflows/index.ts'}`);
    // each history under its own workflow id (the codec checks a payload's workflow against it);
    // the run is named in what is printed, in the order the histories are replayed
    const labels: string[] = [];
    const histories = (async function* () {
      for (const r of runs) {
        labels.push(`${r.workflowId} ${r.runId ?? '(latest run)'}`);
        yield { workflowId: r.workflowId, history: await client.workflow.getHandle(r.workflowId, r.runId).fetchHistory() };
      }
    })();
    const workflowsPath = path.resolve(options.workflowsPath ?? path.join(import.meta.dirname, '..', 'workflows', 'index.ts'));
    const quiet = () => {};
    const { code } = await bundleWorkflowCode({
      workflowsPath,
      failureConverterPath: FAILURE_CONVERTER_PATH,
      logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: (m) => process.stderr.write(`${m}\n`) },
    });
    let replayed = 0;
    let failed = 0;
    // replaying only reads: histories from before payload encryption replay too
    const dataConverter = encryptingDataConverter(await loadCodecKeys(config), 'pass');
    for await (const result of Worker.runReplayHistories({ workflowBundle: { code }, dataConverter, replayName: 'vouch-replay' }, histories)) {
      replayed++;
      const label = labels.shift() ?? result.workflowId;
      if (result.error) {
        failed++;
        say(`NONDETERMINISTIC ${label}: ${result.error.name}: ${result.error.message.split('\n')[0]}`);
      }
    }
    say(`${replayed - failed} replayed, ${failed} failed`);
    return { replayed, failed };
  } finally {
    await client.connection.close();
  }
}
