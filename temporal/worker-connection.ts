// A worker process's native connection to Temporal (@temporalio/worker: the Rust core), with the
// core's logs and metrics routed through ours. Apart from temporal/connection.ts so that the API and
// the CLI, which only need a client, never load the core.
import { NativeConnection, Runtime } from '@temporalio/worker';
import type { Logger } from 'pino';
import type { Config } from '../runtime/config.ts';
import { freePort } from '../runtime/free-port.ts';
import { setCoreMetricsUrl } from '../runtime/metrics-export.ts';
import { connectionOptions } from './connection.ts';

let runtimeInstalled = false;

/**
 * Sends the Temporal core's and workers' logs through our logger, and has the core export its metrics
 * on a loopback port that /metrics reads (runtime/metrics-export.ts); must precede the first worker connection.
 */
function installRuntime(log: Logger, metricsPort: number) {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  setCoreMetricsUrl(`http://127.0.0.1:${metricsPort}/metrics`);
  const at = (level: 'trace' | 'debug' | 'info' | 'warn' | 'error') => (message: string, meta?: Record<string, unknown>) =>
    log[level]({ ...meta, component: 'temporal' }, message);
  Runtime.install({
    // Core (Rust) logs are forwarded too, so every line is JSON through pino.
    telemetryOptions: {
      logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
      metrics: { prometheus: { bindAddress: `127.0.0.1:${metricsPort}` } },
    },
    logger: {
      log: (level, message, meta) => at(level.toLowerCase() as 'info')(message, meta),
      trace: at('trace'),
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
    },
  });
}

export async function connectWorker(config: Config, log: Logger): Promise<NativeConnection> {
  if (!runtimeInstalled) installRuntime(log, config.metrics.corePort || (await freePort()));
  return NativeConnection.connect(connectionOptions(config.temporal));
}
