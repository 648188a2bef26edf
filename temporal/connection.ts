// Connections to Temporal: one client per API process, one native connection per worker process.
import { readFileSync } from 'node:fs';
import { Client, Connection, type TLSConfig } from '@temporalio/client';
import { NativeConnection, Runtime } from '@temporalio/worker';
import type { Logger } from 'pino';
import type { Config } from '../runtime/config.ts';
import { encryptingDataConverter } from './payload-codec.ts';
import { loadCodecKeys } from '../runtime/codec-keys.ts';
import { freePort } from '../runtime/free-port.ts';
import { setCoreMetricsUrl } from '../runtime/metrics-export.ts';

/**
 * TLS to the Temporal frontend: off for the dev server; on with TEMPORAL_TLS, an API key (Temporal
 * Cloud), or any of the mTLS settings — our client certificate and key, the CA of a private
 * cluster, the name its certificate carries. Files are read at connection time.
 */
export function temporalTls(t: Config['temporal']): TLSConfig | undefined {
  if (!t.tls && !t.apiKey) return undefined;
  return {
    ...(t.tlsClientCertPath && t.tlsClientKeyPath ? { clientCertPair: { crt: readFileSync(t.tlsClientCertPath), key: readFileSync(t.tlsClientKeyPath) } } : {}),
    ...(t.tlsServerCaCertPath ? { serverRootCACertificate: readFileSync(t.tlsServerCaCertPath) } : {}),
    ...(t.tlsServerName ? { serverNameOverride: t.tlsServerName } : {}),
  };
}

const connectionOptions = (t: Config['temporal']) => ({ address: t.address, tls: temporalTls(t), apiKey: t.apiKey });

export async function connectClient(config: Config): Promise<Client> {
  const dataConverter = encryptingDataConverter(await loadCodecKeys(config)); // every payload encrypted (temporal/payload-codec.ts)
  const connection = await Connection.connect(connectionOptions(config.temporal));
  return new Client({ connection, namespace: config.temporal.namespace, dataConverter });
}

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
