// Connections to Temporal: one client per API process, one native connection per worker process.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime } from '@temporalio/worker';
import type { Logger } from 'pino';
import type { Config } from './config.ts';

const connectionOptions = (t: Config['temporal']) => ({
  address: t.address,
  tls: t.tls || t.apiKey ? {} : undefined,
  apiKey: t.apiKey,
});

export async function connectClient(config: Config): Promise<Client> {
  const connection = await Connection.connect(connectionOptions(config.temporal));
  return new Client({ connection, namespace: config.temporal.namespace });
}

let runtimeInstalled = false;
/** Sends the Temporal core's and workers' logs through our logger; must precede the first worker connection. */
function installRuntime(log: Logger) {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const at = (level: 'trace' | 'debug' | 'info' | 'warn' | 'error') => (message: string, meta?: Record<string, unknown>) =>
    log[level]({ ...meta, component: 'temporal' }, message);
  Runtime.install({
    // Core (Rust) logs are forwarded too, so every line is JSON through pino.
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
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

export function connectWorker(config: Config, log: Logger): Promise<NativeConnection> {
  installRuntime(log);
  return NativeConnection.connect(connectionOptions(config.temporal));
}
