// The API process on its own (production): `npm run start:api`. Scale it out behind a load balancer;
// it keeps no state of its own.
import { createServer, type Server } from 'node:http';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../runtime/config.ts';
import type { Db } from '../store/db.ts';
import { buildApp, type AppDeps } from './app.ts';

export async function listen(deps: AppDeps, port = deps.config.http.port): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const http = createServer(buildApp(deps).callback());
  http.keepAliveTimeout = 65_000; // longer than common load balancers' idle timeout
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, deps.config.http.host, () => resolve());
  });
  const address = http.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return {
    server: http,
    url: `http://${deps.config.http.host}:${actualPort}`,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeIdleConnections();
      }),
  };
}

if (import.meta.main) {
  const { runProcess } = await import('../runtime/process.ts');
  await runProcess('api', async ({ config, log, onShutdown }) => {
    const { openDatabase } = await import('../runtime/database.ts');
    const { connectClient } = await import('../temporal/connection.ts');
    const database = await openDatabase(config, { auditSweep: log });
    onShutdown(() => database.close());
    const temporal = await connectClient(config);
    onShutdown(() => temporal.connection.close());
    const { loadKeyRings, refreshable, refreshRings } = await import('../runtime/signing-keys.ts');
    const keys = await loadKeyRings(config);
    const rings = refreshRings(config, refreshable(keys), { log }); // a rotation reaches this process within a minute
    onShutdown(() => rings.stop());
    const api = await listen({ config, db: database.db, temporal, log, keys });
    onShutdown(() => api.close());
    log.info({ url: api.url }, 'API listening');
  });
}
