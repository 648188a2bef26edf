// `npm run replay`: runs found by a visibility query or by id, fetched from Temporal, decoded with
// the payload codec and replayed against the current code; a deliberately non-deterministic change
// is reported with the workflow id, and the exit code says so.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { housekeepingWorkflow } from '../../workflows/index.ts';
import { run, root } from '../helpers/processes.ts';
import { startStack, testEnv, type Stack } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

describe('npm run replay', () => {
  let stack: Stack;
  const ids: string[] = [];
  before(async () => {
    stack = await startStack({ workers: true });
    for (let i = 0; i < 2; i++) {
      const workflowId = `replay-cli-${randomUUID()}`;
      await stack.temporal.workflow.execute(housekeepingWorkflow, { taskQueue: stack.config.temporal.taskQueue, workflowId });
      ids.push(workflowId);
    }
  });
  after(async () => {
    await stack.close();
  });
  const env = () => ({ TEMPORAL_ADDRESS: testEnv('TEMPORAL_ADDRESS'), LOG_LEVEL: 'silent' });

  it('replays the runs a visibility query finds, and one by id, against the current code', async () => {
    const query = `WorkflowId='${ids[0]}' OR WorkflowId='${ids[1]}'`;
    // visibility catches up within moments
    let found = { code: null as number | null, stdout: '', stderr: '' };
    await eventually(
      'both runs found and replayed',
      async () => {
        found = await run('cli/replay.ts', ['--query', query], env());
        return found.stdout.includes('2 replayed');
      },
      { everyMs: 200, state: () => found.stdout + found.stderr },
    );
    assert.equal(found.code, 0, found.stdout + found.stderr);
    assert.match(found.stdout, /2 replayed, 0 failed/);
    const one = await run('cli/replay.ts', ['--workflow-id', ids[0]!], env());
    assert.equal(one.code, 0, one.stdout + one.stderr);
    assert.match(one.stdout, /1 replayed, 0 failed/);
  });

  it('reports a deliberately non-deterministic change with the workflow id, and exits 1', async () => {
    const changed = path.join(root, 'test', 'fixtures', 'nondeterministic', 'housekeeping.ts');
    const res = await run('cli/replay.ts', ['--workflow-id', ids[1]!, '--workflows', changed], env());
    assert.equal(res.code, 1, res.stdout + res.stderr);
    assert.match(res.stdout, new RegExp(`NONDETERMINISTIC ${ids[1]} .*(Nondeterminism|DeterminismViolation)`, 'i'));
    assert.match(res.stdout, /0 replayed, 1 failed/);
  });

  it('exits 2 on a usage error', async () => {
    const res = await run('cli/replay.ts', [], env());
    assert.equal(res.code, 2);
    assert.match(res.stderr, /give --query or --workflow-id/);
  });
});
