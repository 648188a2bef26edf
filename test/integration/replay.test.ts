// Replay safety: every recorded history (test/fixtures/histories, made by `npm run
// histories:record`) replays against the current workflow code without a determinism error. A
// change that would break workflows already running — some live for days — fails here first; see
// docs/architecture.md's "Changing a workflow" for how to make such a change safely (patching).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import * as workflows from '../../workflows/index.ts';
import { testEnv } from '../helpers/stack.ts';

const dir = path.resolve(import.meta.dirname, '..', 'fixtures', 'histories');
const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(path.join(dir, file), 'utf8')));
    const type = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '?';
    return { file, type, history };
  });

async function replay(workflowBundle: { codePath: string } | { code: string }, chosen = fixtures) {
  const failures: string[] = [];
  let replayed = 0;
  const histories = chosen.map((f) => ({ workflowId: f.file, history: f.history }));
  for await (const result of Worker.runReplayHistories({ workflowBundle, replayName: 'fixtures' }, histories)) {
    replayed++;
    if (result.error) failures.push(`${result.workflowId}: ${result.error.name}: ${result.error.message.split('\n')[0]}`);
  }
  return { replayed, failures };
}

describe('replay of recorded histories', () => {
  it('has a recorded history of every workflow type the worker runs', () => {
    const recorded = new Set(fixtures.map((f) => f.type));
    for (const name of Object.keys(workflows)) assert.ok(recorded.has(name), `no recorded history of ${name}: run npm run histories:record`);
  });

  it('replays every recorded history against the current code without a determinism error', async () => {
    const { replayed, failures } = await replay({ codePath: testEnv('WORKFLOW_BUNDLE_PATH') });
    assert.deepEqual(failures, []);
    assert.equal(replayed, fixtures.length);
  });

  it('catches an incompatible change (steps reordered)', async () => {
    const code = await bundleWorkflowCode({
      workflowsPath: path.resolve(import.meta.dirname, '..', 'fixtures', 'nondeterministic', 'housekeeping.ts'),
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
    const housekeeping = fixtures.filter((f) => f.type === 'housekeepingWorkflow');
    const { failures } = await replay({ code: code.code }, housekeeping);
    assert.equal(failures.length, housekeeping.length, 'every housekeeping history is caught');
    for (const f of failures) assert.match(f, /Nondeterminism|DeterminismViolation/i);
  });
});
