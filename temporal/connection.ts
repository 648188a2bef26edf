// The client's connection to Temporal: one per API process (and per CLI command that needs one).
// A worker's native connection is temporal/worker-connection.ts, apart: it loads @temporalio/worker
// (the Rust core), which a process that only starts and reads workflows never needs.
import { readFileSync } from 'node:fs';
import { Client, Connection, type TLSConfig } from '@temporalio/client';
import type { Config } from '../runtime/config.ts';
import { encryptingDataConverter } from './payload-codec.ts';
import { loadCodecKeys } from '../runtime/codec-keys.ts';

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

export const connectionOptions = (t: Config['temporal']) => ({ address: t.address, tls: temporalTls(t), apiKey: t.apiKey });

export async function connectClient(config: Config): Promise<Client> {
  // every payload encrypted, and one that is not refused (temporal/payload-codec.ts)
  const dataConverter = encryptingDataConverter(await loadCodecKeys(config), config.payloadCodec.plaintext);
  const connection = await Connection.connect(connectionOptions(config.temporal));
  return new Client({ connection, namespace: config.temporal.namespace, dataConverter });
}
