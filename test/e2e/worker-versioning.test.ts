// Releasing workflow code with Worker Versioning, on the run's Temporal server, as docs/architecture.md's
// "Releasing workflow code" says: release 1's workers join the Worker Deployment with Vouch's own
// options (temporal/worker-deployment.ts) and are made current with the Temporal CLI; runs start;
// release 2 ships a change that is not replay-safe; once it is current, release 1's pinned run still
// finishes on release 1, a new run starts on release 2, and an auto-upgrade run moves to release 2.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { findTemporalCli } from '../../dev/temporal-cli.ts';
import { loadConfig } from '../../runtime/config.ts';
import { workerDeploymentOptions } from '../../temporal/worker-deployment.ts';
import { testEnv } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

const { VERSIONING_BEHAVIOR_PINNED } = proto.temporal.api.enums.v1.VersioningBehavior;
const { ROUTING_CONFIG_UPDATE_STATE_COMPLETED } = proto.temporal.api.enums.v1.RoutingConfigUpdateState;
const address = testEnv('TEMPORAL_ADDRESS');
const deployment = `vouch-versioning-${process.pid}`;
const taskQueue = `versioning-${process.pid}`;
const fixture = (release: string) => path.resolve(import.meta.dirname, '..', 'fixtures', 'versioning', `${release}.ts`);

/** `temporal worker deployment set-current-version`, as a release does it; retried until the version's workers have polled. */
async function promote(buildId: string): Promise<string> {
  const cli = findTemporalCli();
  assert.ok(cli, 'the Temporal CLI is installed (npm install)');
  const args = ['worker', 'deployment', 'set-current-version', '--deployment-name', deployment, '--build-id', buildId, '--yes', '--address', address];
  // the version is not known until its workers have polled
  let last: unknown;
  const { stdout } = await eventually(
    `version ${buildId} made current`,
    () =>
      promisify(execFile)(cli, args).catch((err: unknown) => {
        last = err;
        return undefined;
      }),
    { timeoutMs: 20_000, everyMs: 200, state: () => String(last) },
  );
  return stdout;
}

describe('releasing workflow code with Worker Versioning', () => {
  let nativeConnection: NativeConnection;
  let connection: Connection;
  let client: Client;
  const workers: { worker: Worker; running: Promise<void> }[] = [];

  /** A worker of one release, configured as Vouch's are (TEMPORAL_WORKER_BUILD_ID, TEMPORAL_WORKER_DEPLOYMENT). */
  async function release(buildId: string): Promise<void> {
    const config = loadConfig({ TEMPORAL_WORKER_BUILD_ID: buildId, TEMPORAL_WORKER_DEPLOYMENT: deployment });
    const worker = await Worker.create({ connection: nativeConnection, taskQueue, workflowsPath: fixture(buildId), ...workerDeploymentOptions(config) });
    workers.push({ worker, running: worker.run() });
  }
  /** Until the new routing has reached every task queue partition (the deployment's routingConfigUpdateState). */
  async function propagated(): Promise<void> {
    await eventually(
      'the routing propagated',
      async () => {
        const { workerDeploymentInfo } = await connection.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName: deployment });
        return workerDeploymentInfo?.routingConfigUpdateState === ROUTING_CONFIG_UPDATE_STATE_COMPLETED;
      },
      { timeoutMs: 10_000, everyMs: 100 },
    );
  }
  const start = (type: string) => client.workflow.start(type, { taskQueue, workflowId: `${type}-${randomUUID()}` });
  const versionOf = async (handle: WorkflowHandle) => {
    const info = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
    return { behavior: info?.behavior, buildId: info?.deploymentVersion?.buildId };
  };

  before(async () => {
    nativeConnection = await NativeConnection.connect({ address });
    connection = await Connection.connect({ address });
    client = new Client({ connection });
  });
  after(async () => {
    for (const w of workers) w.worker.shutdown();
    await Promise.all(workers.map((w) => w.running));
    await connection?.close();
    await nativeConnection?.close();
  });

  it('runs the same workflow code on unversioned workers (no build id: `npm start`, compose, the tests): no behaviour is named there', async () => {
    const unversioned = `${taskQueue}-unversioned`;
    const worker = await Worker.create({
      connection: nativeConnection,
      taskQueue: unversioned,
      workflowsPath: fixture('v1'),
      ...workerDeploymentOptions(loadConfig({})),
    });
    await worker.runUntil(async () => {
      const handle = await client.workflow.start('pinnedDecision', { taskQueue: unversioned, workflowId: `unversioned-${randomUUID()}` });
      await handle.signal('proceed');
      // a refused task completion retries for ever: give up after a while with the reason
      const refused = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('the run did not finish: its task completions were refused')), 30_000).unref(),
      );
      assert.equal(await Promise.race([handle.result(), refused]), 'v1');
      assert.equal((await versionOf(handle)).buildId, undefined);
    });
  });

  it('keeps a pinned run on the release that started it, starts new runs on the new one, and moves an auto-upgrade run along', async () => {
    assert.deepEqual(workerDeploymentOptions(loadConfig({})), {}, 'without a build id the workers are unversioned');

    await release('v1');
    await promote('v1');
    const pinnedOld = await start('pinnedDecision');
    const upgrading = await start('upgradingLoop');
    // each has run its first workflow task on release 1
    for (const h of [pinnedOld, upgrading]) {
      await eventually('its first workflow task on release 1', async () => (await versionOf(h)).buildId === 'v1', { timeoutMs: 10_000, everyMs: 100 });
    }
    assert.deepEqual(await versionOf(pinnedOld), { behavior: VERSIONING_BEHAVIOR_PINNED, buildId: 'v1' }, 'pinned on release 1');

    await release('v2');
    await promote('v2');
    await propagated();
    const pinnedNew = await start('pinnedDecision');
    for (const h of [pinnedOld, upgrading, pinnedNew]) await h.signal('proceed');

    assert.equal(await pinnedOld.result(), 'v1', 'the pinned run finished on the code that started it');
    assert.equal(await pinnedNew.result(), 'v2', 'a new run starts on the current release');
    assert.equal(await upgrading.result(), 'v2', 'the auto-upgrade run moved to the current release');
    assert.equal((await versionOf(pinnedNew)).buildId, 'v2');

    // and the change really was not replay-safe: release 1's history does not replay on release 2's code
    const history = await pinnedOld.fetchHistory();
    await assert.rejects(Worker.runReplayHistory({ workflowsPath: fixture('v2') }, history), (err: Error) =>
      /Nondeterminism|DeterminismViolation/i.test(`${err.name} ${err.message}`),
    );
    await Worker.runReplayHistory({ workflowsPath: fixture('v1') }, history);
  });
});
