// Nothing recorded is lost or done twice, whatever fails. During one batch with webhooks to three
// subscriptions, on infrastructure of this test's own (a private PostgreSQL, a Temporal dev server
// persisted to a file, the worker as a separate process): the worker is SIGKILLed three times,
// PostgreSQL restarted twice (once as if it crashed), the Temporal server restarted once, and the
// receiver down for a while. Then: every record imported exactly once at the provider, the counters
// exact, one event per record, and every event at every subscription (by eventId), each delivery
// marked delivered.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTemporalDevServer, type TemporalDevServer } from '../../dev/temporal-dev-server.ts';
import { startProviderSim, type ProviderSim } from '../../provider-sim/server.ts';
import type { SimClient } from '../../provider-sim/state.ts';
import { createSubscription } from '../../store/subscriptions.ts';
import { bulkEntities, bulkTokens } from '../helpers/bulk.ts';
import { createDatabase } from '../helpers/infra.ts';
import { csvOf, upload } from '../helpers/imports.ts';
import { freePort } from '../helpers/ports.ts';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.ts';
import { start, type Running } from '../helpers/processes.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { codecKeysFile } from '../../runtime/codec-keys.ts';
import { eventually } from '../helpers/eventually.ts';

const ROWS = 600;
const SUBSCRIPTIONS = ['a', 'b', 'c'];
const say = (s: string) => process.stdout.write(`# ${s}\n`);

describe('the pipeline under faults', () => {
  let tmp: string;
  let pg: PrivatePostgres;
  let temporal: TemporalDevServer;
  let temporalPort: number;
  let stack: Stack;
  let sim: ProviderSim;
  let us: SimClient;
  let worker: Running | undefined;
  let receiver: Server;
  let receiverDown = false;
  const received: { path: string; eventId: string }[] = [];

  const startTemporal = () => startTemporalDevServer({ port: temporalPort, dataDir: path.join(tmp, 'temporal'), headless: true });
  const startWorker = () =>
    start('worker.ts', [], {
      DATABASE_URL: stack.config.database.url,
      TEMPORAL_ADDRESS: temporal.address,
      TASK_QUEUE: stack.config.temporal.taskQueue,
      PROVIDER_TASK_QUEUE: stack.config.temporal.providerTaskQueue,
      SYNC_TASK_QUEUE: stack.config.temporal.syncTaskQueue,
      WEBHOOK_TASK_QUEUE: stack.config.webhooks.taskQueue,
      WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      PROVIDER_BASE_URL: sim.url,
      PROVIDER_APP_TOKEN: us.appToken,
      PROVIDER_SECRET_KEY: us.secretKey,
      PROVIDER_RATE_LIMIT_PER_SECOND: '20',
      DATA_DIR: path.join(tmp, 'worker'), // the webhook key ring, the same across restarts
      PAYLOAD_CODEC_KEYS_FILE: codecKeysFile(stack.config), // every process of a deployment shares the payload key ring
      LOG_LEVEL: 'info',
    });

  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'vouch-faults-'));
    pg = await startPrivatePostgres();
    const database = await createDatabase(pg.url, 'vouch_faults');
    temporalPort = await freePort();
    temporal = await startTemporal();
    stack = await startStack({ env: { DATABASE_URL: database.url, TEMPORAL_ADDRESS: temporal.address } }); // the API, in this process
    sim = await startProviderSim();
    us = sim.state.addClient({ clientId: 'vouch', limits: { postPer5s: 1e9, getPer5s: 1e9 } });
    receiver = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      if (receiverDown) return void res.writeHead(503).end();
      received.push({ path: req.url!, eventId: JSON.parse(Buffer.concat(chunks).toString()).data.eventId });
      res.writeHead(200).end();
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  });
  after(async () => {
    await worker?.stop('SIGKILL');
    await new Promise<void>((r) => (receiver.close(() => r()), receiver.closeAllConnections()));
    await sim?.close();
    await stack?.close().catch(() => {});
    await temporal?.stop();
    await pg?.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  it('imports every record once, counts exactly, and delivers every event to every subscription', async () => {
    const { apiKey, businessId } = await stack.newBusiness({ name: 'Faults' });
    const port = (receiver.address() as AddressInfo).port;
    for (const s of SUBSCRIPTIONS) {
      await createSubscription(stack.db, businessId, {
        notificationChannel: 'WEBHOOK',
        notificationTypes: ['account_status_change'],
        webhookUrl: `http://127.0.0.1:${port}/${s}`,
      });
    }
    const externalIds = Array.from({ length: ROWS }, (_, i) => `fault-${i}`);
    await bulkEntities(stack.db, businessId, externalIds);
    const tokens = bulkTokens(
      sim,
      'fault-donor',
      us.clientId,
      externalIds.map(() => 'complete'),
    );
    sim.state.faults = { ...sim.state.faults, latencyMs: 150, pathPattern: 'reusableIdentity' }; // answers in flight when things die
    worker = startWorker();
    await worker.waitFor(/worker polling/, 60_000);
    const res = await upload(
      stack,
      apiKey,
      csvOf(
        'externalId,shareToken',
        externalIds.map((e, i) => [e, tokens[i]!]),
      ),
    );
    assert.equal(res.status, 201, res.text);
    const batchId: string = res.body.batchId;

    const processed = async () => {
      try {
        const [b] = await stack.db.query<{ n: number; status: string }>(
          'SELECT successful_records + failed_records AS n, status FROM import_batches WHERE id = $1',
          [batchId],
        );
        return { n: Number(b!.n), status: b!.status };
      } catch {
        return { n: -1, status: 'unknown' }; // PostgreSQL is restarting
      }
    };
    const alive = () => assert.ok(worker!.child.exitCode === null && worker!.child.signalCode === null, `the worker died:\n${worker!.output().slice(-3000)}`);
    const at = async (n: number) => {
      await eventually(
        `${n} processed`,
        async () => {
          const p = await processed();
          if (p.n >= n || p.status === 'completed') return true;
          alive();
          return false;
        },
        { timeoutMs: 120_000, state: async () => ({ processed: await processed(), worker: worker!.output().slice(-3000) }) },
      );
    };
    const kill = async () => {
      await worker!.stop('SIGKILL');
      worker = startWorker();
    };
    const faults: [number, string, () => Promise<void>][] = [
      [60, 'SIGKILL the worker', kill],
      [120, 'restart PostgreSQL (fast)', () => pg.restart('fast')],
      [
        180,
        'receiver down for 3 s',
        async () => {
          receiverDown = true;
          setTimeout(() => (receiverDown = false), 3000);
        },
      ],
      [240, 'SIGKILL the worker', kill],
      [
        300,
        'restart the Temporal server',
        async () => {
          await temporal.stop();
          temporal = await startTemporal();
        },
      ],
      [380, 'restart PostgreSQL (immediate, as after a crash)', () => pg.restart('immediate')],
      [460, 'SIGKILL the worker', kill],
    ];
    for (const [n, what, fault] of faults) {
      await at(n);
      say(`${what} at ${(await processed()).n} processed`);
      await fault();
    }

    // the batch completes (the reconciler and Temporal's retries carry it through)
    await eventually(
      'the batch completed',
      async () => {
        if ((await processed()).status === 'completed') return true;
        alive();
        return false;
      },
      { timeoutMs: 240_000, everyMs: 200, state: processed },
    );
    // and every delivery is made
    const pending = async () => {
      const [d] = await stack.db.query<{ pending: string }>(
        "SELECT count(*) FILTER (WHERE status <> 'delivered') AS pending FROM webhook_deliveries WHERE business_id = $1",
        [businessId],
      );
      return Number(d!.pending);
    };
    await eventually('every delivery made', async () => (await pending()) === 0, { timeoutMs: 120_000, everyMs: 200, state: pending });

    const status = (await stack.request('GET', `/entity/kyc/import/batch/${batchId}`, { key: apiKey })).body;
    assert.equal(status.status, 'completed');
    assert.deepEqual(
      [status.processedRecords, status.summary.successfulRecords, status.failedRecords],
      [ROWS, ROWS, 0],
      JSON.stringify(status.summary.errors.slice(0, 3)),
    );
    const [rows] = await stack.db.query<{ succeeded: string }>(
      "SELECT count(*) FILTER (WHERE status = 'succeeded') AS succeeded FROM import_records WHERE batch_id = $1",
      [batchId],
    );
    assert.equal(Number(rows!.succeeded), ROWS, 'the counters match the rows');
    for (const t of tokens) assert.equal(sim.state.stats.imports[t]?.succeeded, 1, 'each share token imported exactly once');

    const events = (await stack.db.query<{ id: string }>('SELECT id FROM events WHERE business_id = $1', [businessId])).map((e) => e.id);
    assert.equal(events.length, ROWS, 'one event per record');
    const [deliveries] = await stack.db.query<{ n: string }>("SELECT count(*) AS n FROM webhook_deliveries WHERE business_id = $1 AND status = 'delivered'", [
      businessId,
    ]);
    assert.equal(Number(deliveries!.n), ROWS * SUBSCRIPTIONS.length);
    let duplicates = 0;
    for (const s of SUBSCRIPTIONS) {
      const mine = received.filter((r) => r.path === `/${s}`).map((r) => r.eventId);
      const distinct = new Set(mine);
      duplicates += mine.length - distinct.size;
      assert.deepEqual([...distinct].sort(), [...events].sort(), `subscription ${s} received every event, and only ours`);
    }
    // A receipt whose 2xx the worker heard but could not record before it was killed is sent again:
    // receivers deduplicate on data.eventId (spec section 6). Say how often it happened.
    say(`${ROWS} records, ${ROWS * SUBSCRIPTIONS.length} deliveries; ${duplicates} receipts were repeats of an eventId already received`);
  });
});
