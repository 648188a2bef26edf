// The worker process: polls the general task queue (workflows and database activities), the
// provider task queue (activities that call the identity provider, batches and sync imports alike,
// rate-limited fleet-wide by the Temporal server through maxTaskQueueActivitiesPerSecond), the sync
// task queue (sync-import workflows, kept apart from batch backlogs) and the webhook task queue.
// Run alone with `npm run start:worker`; `npm start` runs the same workers in its all-in-one process.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import type { Context } from '@temporalio/activity';
import { bundleWorkflowCode, Worker, type ActivityInterceptors, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities, createProviderActivities, createWebhookQueueActivities, type ActivityDeps } from './activities/index.ts';
import { noteAttemptStarted } from './activities/provider-pace.ts';
import type { Config } from './runtime/config.ts';
import { runsWorkflows, taskQueueOf, type WorkerRole } from './runtime/worker-roles.ts';
import { registerWorkflowThreadHeapMetrics } from './runtime/workflow-thread-heap.ts';
import { actAs } from './store/audit-actor.ts';
import { createFileStore } from './runtime/file-store.ts';
import { createRuns } from './temporal/runs.ts';
import { createStarters } from './temporal/starters.ts';
import { workerDeploymentOptions } from './temporal/worker-deployment.ts';
import { providerConcurrency, providerDispatchPerSecond, providerPace } from './domain/provider-pace.ts';
import { encryptingDataConverter, FAILURE_CONVERTER_PATH } from './temporal/payload-codec.ts';
import { loadCodecKeys } from './runtime/codec-keys.ts';

export const workflowsPath = fileURLToPath(new URL('./workflows/index.ts', import.meta.url));

export type Workers = {
  workers: Worker[];
  /** Starts polling every queue; resolves when all workers have stopped, rejects if one fails. */
  run(): Promise<void>;
  /** Stops polling, lets running tasks finish, and resolves when the workers are done. */
  shutdown(): Promise<void>;
  /** Each worker's task queue and state (`GET /health` of the worker's metrics port); ok when all are RUNNING. */
  health(): { ok: boolean; workers: { taskQueue: string; state: string }[] };
};

/** Bundles the workflow code (webpack); only warnings and errors are printed. */
export async function bundleWorkflows(): Promise<string> {
  const quiet = () => {};
  const loud = (message: string) => process.stderr.write(`${message}\n`);
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    // the workflows' own failures leave the sandbox with their messages encoded (temporal/failure-converter.ts)
    failureConverterPath: FAILURE_CONVERTER_PATH,
    logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: loud, error: loud },
  });
  return code;
}

/** Workflow code: the prebuilt bundle when present (production), else bundled from source once. */
export async function workflowBundle(config: Config): Promise<{ codePath: string } | { code: string }> {
  if (existsSync(config.temporal.workflowBundlePath)) return { codePath: config.temporal.workflowBundlePath };
  return { code: await bundleWorkflows() };
}

/** An activity acts as its workflow run: the audit log names the workflow id and run id of what the system did. */
const actingAsItsRun = (ctx: Context): ActivityInterceptors => ({
  inbound: {
    execute: (input, next) => {
      const run = ctx.info.workflowExecution;
      const actor = run ? { type: 'workflow' as const, id: run.workflowId, runId: run.runId } : { type: 'system' as const, id: ctx.info.activityType };
      return actAs(actor, null, () => next(input));
    },
  },
});

/** A provider call's budget runs from its attempt's start (activities/provider-pace.ts). */
const attemptClock = (ctx: Context): ActivityInterceptors => ({
  inbound: {
    execute: (input, next) => {
      noteAttemptStarted(ctx);
      return next(input);
    },
  },
});

/** What a worker process brings: its database, logger, provider, Temporal client and webhook keys. */
export type WorkerDeps = Omit<ActivityDeps, 'settings' | 'start' | 'runs' | 'files'> & { temporal: Client };

/**
 * Up to four workers, one per role of WORKER_ROLES (runtime/worker-roles.ts), share one connection and one workflow bundle:
 * - general queue: the batch import, requirement batch, person verification (hosted SDK), sandbox review,
 *   universal KYC, universal KYB, retention, housekeeping and audit checkpoint workflows, and the database activities;
 * - provider queue: every provider call (batch rows, sync imports, hosted SDK, sandbox), at most
 *   PROVIDER_RATE_LIMIT_PER_SECOND across the fleet, each business's lanes served in turn (contract/provider-queue.ts);
 * - sync queue: sync-import workflows and their database steps, so a waiting caller never queues behind a batch;
 * - webhook queue: the dispatcher and the retry workflows of deliveries, apart from imports.
 * With the webhook role, the webhook dispatcher workflow is started (if it is not running) before they poll.
 */
export async function createWorkers(config: Config, connection: NativeConnection, base: WorkerDeps): Promise<Workers> {
  const { temporal, ...rest } = base;
  const start = createStarters(temporal, config);
  const w = config.webhooks;
  const settings = {
    defaultLevel: config.provider.defaultLevel,
    providerPace: providerPace(config.temporal.providerRateLimitPerSecond, config.provider.timeoutMs),
    ukycDeadlineSeconds: config.universalKyc.deadlineSeconds,
    webhooks: {
      allowInsecureUrls: w.allowInsecureUrls,
      maxInFlight: w.maxInFlight,
      maxInFlightPerSubscription: w.maxInFlightPerSubscription,
      maxInFlightPerBusiness: w.maxInFlightPerBusiness,
      pollMs: w.pollMs,
      disableAfterMs: w.disableAfterMs,
    },
  };
  const deps: ActivityDeps = { ...rest, settings, start, runs: createRuns(temporal), files: createFileStore(config) };
  const t = config.temporal;
  // only the roles that run workflows need the workflow code
  const bundle = t.workerRoles.some(runsWorkflows) ? await workflowBundle(config) : undefined;
  // where the sticky cache lives: the workflow threads' heaps, on /metrics
  if (bundle) registerWorkflowThreadHeapMetrics();
  // every payload encrypted, as the clients do (temporal/payload-codec.ts)
  const common = {
    connection,
    namespace: t.namespace,
    dataConverter: encryptingDataConverter(await loadCodecKeys(config), config.payloadCodec.plaintext),
    // every audit entry an activity writes names its workflow and run (store/audit-actor.ts)
    interceptors: { activity: [actingAsItsRun] },
    // this release's version of the Worker Deployment, when it names one (temporal/worker-deployment.ts)
    ...workerDeploymentOptions(config),
    // the sticky cache: what a worker's memory grows to (unset: the SDK sizes it from the heap limit)
    ...(t.maxCachedWorkflows ? { maxCachedWorkflows: t.maxCachedWorkflows } : {}),
  };
  // what each role's worker runs beside the shared options; made only for the roles this process has
  const byRole: Record<WorkerRole, () => Omit<WorkerOptions, Exclude<keyof typeof common, 'interceptors'> | 'taskQueue'>> = {
    general: () => ({ workflowBundle: bundle, activities: createActivities(deps) }),
    sync: () => ({ workflowBundle: bundle, activities: createActivities(deps) }),
    provider: () => ({
      activities: createProviderActivities(deps),
      interceptors: { activity: [actingAsItsRun, attemptClock] },
      // the server's limit lets bursts through; the pace (activities/provider-pace.ts) spaces them and holds the cap
      maxTaskQueueActivitiesPerSecond: providerDispatchPerSecond(t.providerRateLimitPerSecond),
      maxConcurrentActivityTaskExecutions: providerConcurrency(t.providerRateLimitPerSecond),
    }),
    webhooks: () => ({
      workflowBundle: bundle,
      activities: createWebhookQueueActivities(deps),
      // room for the long-lived dispatcher activities besides the retry attempts
      maxConcurrentActivityTaskExecutions: 100 + config.webhooks.dispatchers,
      // shutdownGraceTime stays 0: a dispatcher is canceled at once, finishes its requests in flight
      // (5 s at most), records them and returns
    }),
  };
  const workers: Worker[] = [];
  for (const role of t.workerRoles) workers.push(await Worker.create({ ...common, taskQueue: taskQueueOf(config, role), ...byRole[role]() }));
  if (t.workerRoles.includes('webhooks')) await start.webhookDispatcher();
  let running: Promise<void> | undefined;
  return {
    workers,
    run() {
      running ??= Promise.all(workers.map((w) => w.run())).then(() => undefined);
      return running;
    },
    async shutdown() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running?.catch(() => {});
    },
    health() {
      const states = workers.map((w) => ({ taskQueue: w.options.taskQueue, state: w.getState() }));
      return { ok: states.every((w) => w.state === 'RUNNING'), workers: states };
    },
  };
}

if (import.meta.main) {
  const { runProcess } = await import('./runtime/process.ts');
  await runProcess('worker', async ({ config, log, onShutdown, fatal }) => {
    // only the secrets its roles use (runtime/secrets-by-role.ts): a webhook worker holds no provider
    // credentials, a provider worker no signing ring; read first, so a missing one stops the process
    // before it connects to anything
    const { loadWorkerSecrets } = await import('./runtime/worker-secrets.ts');
    const { provider, webhookKeys, checkpointKeys, rings } = await loadWorkerSecrets(config, log);
    onShutdown(() => rings.stop());
    const { openDatabase } = await import('./runtime/database.ts');
    const [{ connectClient }, { connectWorker }] = await Promise.all([import('./temporal/connection.ts'), import('./temporal/worker-connection.ts')]);
    const database = await openDatabase(config, { auditSweep: log });
    onShutdown(() => database.close());
    const connection = await connectWorker(config, log);
    onShutdown(() => connection.close());
    const client = await connectClient(config);
    onShutdown(() => client.connection.close());
    const { ensureSchedules } = await import('./temporal/schedules.ts');
    await ensureSchedules(client, config);
    const workers = await createWorkers(config, connection, {
      db: database.db,
      log,
      provider,
      temporal: client,
      webhookKeys,
      checkpointKeys,
    });
    onShutdown(() => workers.shutdown());
    workers.run().catch(fatal);
    if (config.metrics.workerPort > 0) {
      const { startMetricsServer } = await import('./runtime/metrics-export.ts');
      const { bearerAllowed } = await import('./domain/bearer.ts');
      const server = await startMetricsServer({
        host: config.metrics.workerHost,
        port: config.metrics.workerPort,
        log,
        allowed: (a) => bearerAllowed(config.environment, config.metrics.token, a),
        health: () => workers.health(),
      });
      onShutdown(() => new Promise<void>((r) => server.close(() => r())));
      log.info({ url: `http://${config.metrics.workerHost}:${config.metrics.workerPort}/metrics` }, 'worker metrics');
    }
    const version = config.temporal.workerVersion;
    log.info({ roles: config.temporal.workerRoles, taskQueues: workers.health().workers.map((w) => w.taskQueue), version }, 'worker polling');
  });
}
