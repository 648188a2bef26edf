// `npm start`: the whole service in one process on its embedded defaults. It starts the Temporal
// dev server (state in DATA_DIR, Web UI on TEMPORAL_UI_PORT) unless TEMPORAL_ADDRESS names one,
// the embedded PGlite database unless DATABASE_URL is set, the workers and the API; it creates a
// sandbox business on first start and prints its API key. Ctrl-C stops everything.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { listen } from '../api/server.ts';
import { createBusiness, findBusiness } from '../store/businesses.ts';
import type { Db } from '../store/db.ts';
import { startDevProviderSim, type DevSimCredentials } from '../provider-sim/dev.ts';
import { createWorkers } from '../worker.ts';
import { ensureSchedules } from '../temporal/schedules.ts';
import type { Config } from '../runtime/config.ts';
import { openDatabase } from '../runtime/database.ts';
import { createProvider } from '../runtime/provider.ts';
import { loadKeyRings, loadSigningRing, refreshable, refreshRings } from '../runtime/signing-keys.ts';
import { runProcess } from '../runtime/process.ts';
import { replaceAtomically } from '../runtime/secret-file.ts';
import { connectClient } from '../temporal/connection.ts';
import { connectWorker } from '../temporal/worker-connection.ts';
import { startTemporalDevServer } from '../dev/temporal-dev-server.ts';

type Sandbox = { businessId: string; apiKey: string };

/** The sandbox business made on first start; its key is kept in DATA_DIR (git-ignored) for development. */
async function sandboxBusiness(config: Config, db: Db): Promise<Sandbox & { created: boolean }> {
  const file = path.join(config.dataDir, 'sandbox.json');
  try {
    const saved = JSON.parse(await readFile(file, 'utf8')) as Sandbox;
    if (await findBusiness(db, saved.businessId)) return { ...saved, created: false };
  } catch {
    // first start, or the database was reset: make a new one
  }
  const { business, apiKey } = await createBusiness(db, { name: 'Sandbox', binSponsored: false, environment: config.environment });
  const sandbox = { businessId: business.id, apiKey };
  replaceAtomically(file, JSON.stringify(sandbox, null, 2)); // mode 600 from the start, never half written
  return { ...sandbox, created: true };
}

// the one process that may run without naming its environment: it is the sandbox
process.env.VOUCH_ENVIRONMENT ||= 'sandbox';

await runProcess('dev', async ({ config, log, onShutdown, fatal }) => {
  let uiUrl: string | undefined;
  if (!config.temporal.addressGiven) {
    const temporal = await startTemporalDevServer({
      port: config.temporal.devPort,
      uiPort: config.temporal.uiPort,
      dataDir: config.dataDir,
      namespace: config.temporal.namespace,
      // the Web UI shows decrypted payloads through our codec endpoint (docs/operations.md, "Operating Vouch")
      uiCodecEndpoint: `http://${config.http.host === '0.0.0.0' ? '127.0.0.1' : config.http.host}:${config.http.port}/codec`,
      ownProcessGroup: true, // Ctrl-C stops it last, after the workers (not at once, under their feet)
    });
    const exited = (code: number | null) => fatal(new Error(`Temporal dev server exited (${code})`));
    temporal.process.once('exit', exited);
    onShutdown(() => {
      temporal.process.off('exit', exited);
      return temporal.stop();
    });
    config.temporal.address = temporal.address;
    uiUrl = temporal.uiUrl;
  }
  let simulator: { url: string; donor: DevSimCredentials['donor']; samplesCsv: string; callbacksTo(url: string): void } | undefined;
  if (!config.provider.baseUrl) {
    const { sim, credentials, samplesCsv } = await startDevProviderSim({
      dataDir: config.dataDir,
      port: config.provider.simPort,
      host: config.provider.simHost,
      recipientClientId: config.provider.clientId,
    });
    onShutdown(() => sim.close());
    Object.assign(config.provider, {
      baseUrl: sim.url,
      appToken: credentials.recipient.appToken,
      secretKey: credentials.recipient.secretKey,
      webhookSecret: credentials.recipient.webhookSecret,
    });
    simulator = {
      url: sim.url,
      donor: credentials.donor,
      samplesCsv,
      // the simulator calls our provider-callback endpoint, as Sumsub would with its webhook configured
      callbacksTo: (url) => sim.state.updateClient(config.provider.clientId, { webhookUrl: url }),
    };
  }
  const database = await openDatabase(config, { serveEmbedded: true, auditSweep: log });
  onShutdown(() => database.close());
  const client = await connectClient(config);
  onShutdown(() => client.connection.close());
  const connection = await connectWorker(config, log);
  onShutdown(() => connection.close());
  await ensureSchedules(client, config);
  // the API's rings (public keys of the workers' rings) and the workers' own, from the same files
  const keys = await loadKeyRings(config);
  const webhookKeys = {
    signature: await loadSigningRing(config, 'webhook'),
    standard: await loadSigningRing(config, 'standard-webhook'),
    sealing: keys.sealing,
  };
  const checkpointKeys = await loadSigningRing(config, 'audit-checkpoint');
  // a rotation reaches the running processes within a minute
  const rings = refreshRings(
    config,
    { ...refreshable(keys), webhook: webhookKeys.signature, 'standard-webhook': webhookKeys.standard, 'audit-checkpoint': checkpointKeys },
    { log },
  );
  onShutdown(() => rings.stop());
  const workers = await createWorkers(config, connection, {
    db: database.db,
    log,
    provider: createProvider(config),
    temporal: client,
    webhookKeys,
    checkpointKeys,
  });
  onShutdown(() => workers.shutdown());
  workers.run().catch(fatal);
  const api = await listen({ config, db: database.db, temporal: client, log, keys });
  onShutdown(() => api.close());
  simulator?.callbacksTo(`${api.url}/provider-webhooks/sumsub`);
  const sandbox = await sandboxBusiness(config, database.db);

  const lines = [
    '',
    'Vouch is running (Ctrl-C stops everything).',
    `  API            ${api.url}    docs: ${api.url}/docs`,
    `  Temporal UI    ${
      uiUrl ? `${uiUrl}    (it decodes payloads through ${api.url}` + `/codec/decode, POST only)` : `(external Temporal at ${config.temporal.address})`
    }`,
    `  Metrics        ${api.url}/metrics    (Prometheus; Grafana dashboard: grafana/vouch-dashboard.json)`,
    `  Database       ${database.embedded ? `embedded PGlite in ${path.join(config.dataDir, 'pglite')} (${database.url})` : 'DATABASE_URL'}`,
    `  Provider       ${simulator ? `simulator (Sumsub API) at ${simulator.url}` : config.provider.baseUrl}`,
    ...(simulator
      ? [
          `  Donor account  SUMSUB_BASE_URL=${simulator.url} SUMSUB_APP_TOKEN=${simulator.donor.appToken} SUMSUB_SECRET_KEY=${simulator.donor.secretKey}`,
          `                 sample donor applicants: ${simulator.samplesCsv} (forClientId ${config.provider.clientId})`,
        ]
      : []),
    `  Sandbox business ${sandbox.businessId}${sandbox.created ? ' (created now)' : ''}`,
    `  API key        ${sandbox.apiKey}`,
    '',
    `  curl -H 'x-vouch-api-key: ${sandbox.apiKey}' -H 'Accept-Version: v1.0' ${api.url}/features`,
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  log.info({ url: api.url, temporalUi: uiUrl }, 'ready');
});
