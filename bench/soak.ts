// A soak run (issue 23, item 4): the service as deployed, in separate processes on this machine — a
// Temporal dev server, a fresh database on the real PostgreSQL, the provider simulator
// (provider-sim/main.ts), TWO API processes (api/server.ts) and workers per role (worker.ts:
// general+sync, provider ×2, webhooks) on a prebuilt workflow bundle — and --businesses businesses
// (20), each with 10 webhook subscriptions to loopback receivers in this process, sending for
// --minutes (30) a mix over HTTP to both APIs in turn: sync imports, batch uploads, hosted-SDK
// reviews played by the sandbox, universal KYC, universal KYB with two owners, downloads of KYB
// documents, and reads.
// Sync imports: each business sends at the spec's 3/s in its turn (--sync-hot businesses at a time,
// each once over the run) and a trickle otherwise. All 20 at 3/s at once would be 60 provider calls a
// second against a cap of 10: the provider queue then holds a backlog the whole run, and each lane
// (a business's sync calls, a business's batch) gets its turn in it, so most sync calls wait out
// their answer's time and are skipped by the client. That is a stress test, not a soak; --sync-hot 20
// runs it. By default the provider runs at about 70 % of the cap, at the cap while a batch runs
// beside a business's turn.
// Faults, at fixed fractions of the run: at 20 % a rolling restart of every worker (SIGTERM, wait for
// the exit, start again, one at a time), at 40 % one worker SIGKILLed (and started again, as a
// supervisor would), at 60 % one API process SIGKILLed (clients find out by their requests failing and
// use the other; started again --api-down-seconds later), at 80 % PostgreSQL restarted (pg_ctlcluster:
// the whole shared server; --no-pg-restart leaves it alone).
// Then a drain (--drain-minutes, 5) for the work under way, and the checks (bench/soak/checks.ts):
// every record handled once, every event delivered to every subscription that takes it (repeats
// counted), provider calls never above the cap (counted where they reach the provider, at a door in
// this process: bench/soak/doors.ts). Figures: p50/p95 per route template per window
// (--window-minutes, 5), end to end latencies, provider calls per window, resident memory and CPU per
// process every --sample-seconds (30), the database's size over time and its largest tables' rows at
// start and end. Prints Markdown, writes JSON to --out (/tmp/soak.json), exits 1 when a check fails;
// the run's directory (logs of every process, DATA_DIR) and database are kept when one does (--keep:
// always).
//   node bench/soak.ts [--minutes 30] [--businesses 20] [--window-minutes 5] [--drain-minutes 5]
//     [--no-pg-restart] [--out /tmp/soak.json] [--keep] [--max-cached-workflows N (WORKER_MAX_CACHED_WORKFLOWS)]
//   rates (seconds between a business's flows): --sync-rate 3 --sync-hot 1 --sync-background 0.05
//     --batch-every 240 --batch-rows 25 --sdk-every 180 --ukyc-every 60 --kyb-every 300
//     --download-every 30 --read-every 15
//   a short trial: node bench/soak.ts --minutes 4 --businesses 4 --window-minutes 1 --drain-minutes 3
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { connectDb, type Db } from '../store/db.ts';
import { createDatabase, DEFAULT_POSTGRES_URL, startTemporal } from '../test/helpers/infra.ts';
import { freePort } from '../runtime/free-port.ts';
import { bundleWorkflows } from '../worker.ts';
import { drain, runChecks } from './soak/checks.ts';
import { createClient } from './soak/client.ts';
import { startCallbackDoor, startProviderDoor } from './soak/doors.ts';
import { cpuSeconds, createSlot, heapUsedMb, logProblems, rssMb, sleep, startSlot, stopSlot, type Slot } from './soak/fleet.ts';
import { startReceivers } from './soak/receivers.ts';
import { byWindow, markdown, memoryByWindow, providerByWindow, rssSummary, samplePoints, windowsOf, type Report, type RssSeries } from './soak/report.ts';
import { createDonor, createTraffic, setUpBusiness, type Business } from './soak/traffic.ts';

const { values: v } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    businesses: { type: 'string', default: '20' },
    'window-minutes': { type: 'string', default: '5' },
    'drain-minutes': { type: 'string', default: '5' },
    out: { type: 'string', default: '/tmp/soak.json' },
    'no-pg-restart': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    'sync-rate': { type: 'string', default: '3' },
    'sync-hot': { type: 'string', default: '1' },
    'sync-background': { type: 'string', default: '0.05' },
    'batch-every': { type: 'string', default: '240' },
    'batch-rows': { type: 'string', default: '25' },
    'sdk-every': { type: 'string', default: '180' },
    'ukyc-every': { type: 'string', default: '60' },
    'kyb-every': { type: 'string', default: '300' },
    'download-every': { type: 'string', default: '30' },
    'read-every': { type: 'string', default: '15' },
    'provider-cap': { type: 'string', default: '10' },
    'provider-workers': { type: 'string', default: '2' },
    'kill-worker': { type: 'string', default: 'worker-general' },
    'api-down-seconds': { type: 'string', default: '10' },
    'sample-seconds': { type: 'string', default: '30' },
    pool: { type: 'string', default: '8' },
    'max-cached-workflows': { type: 'string', default: '' },
    'log-level': { type: 'string', default: 'info' },
  },
});
const num = (name: keyof typeof v) => {
  const x = Number(v[name]);
  if (!Number.isFinite(x) || x < 0) throw new Error(`--${name} must be a number ≥ 0`);
  return x;
};
const MINUTES = num('minutes');
const BUSINESSES = Math.max(1, Math.round(num('businesses')));
const CAP = num('provider-cap');
const say = (s: string) => process.stdout.write(`${s}\n`);
const runStart = Date.now();
const at = () => `[${((Date.now() - runStart) / 60_000).toFixed(1)} min]`;

const cleanups: (() => Promise<unknown>)[] = [];
const slots: Slot[] = [];
let failed = true;
let keepRun = v.keep;
let runDir = '';
// Ctrl-C (or a SIGTERM) stops the fleet and cleans up as the end of a run does, then exits 130
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    if (interrupted) return;
    interrupted = true;
    say(`${at()} ${signal}: stopping the fleet`);
    void (async () => {
      for (const c of cleanups.reverse()) await c().catch((err: Error) => say(`clean-up: ${err.message}`));
      process.exit(130);
    })();
  });
try {
  runDir = await mkdtemp(path.join(tmpdir(), 'vouch-soak-'));
  const dataDir = path.join(runDir, 'data');
  const logDir = path.join(runDir, 'logs');
  mkdirSync(dataDir, { mode: 0o700 });
  mkdirSync(logDir);
  say(`${at()} soak: ${BUSINESSES} businesses, ${MINUTES} min of traffic; logs in ${logDir}`);

  // ---- the infrastructure: database, Temporal, the workflow bundle, the doors ----
  const database = await createDatabase(process.env.TEST_POSTGRES_URL ?? DEFAULT_POSTGRES_URL, 'vouch_soak');
  cleanups.push(() => (keepRun ? Promise.resolve(say(`database kept: ${database.url}`)) : database.drop()));
  const temporal = await startTemporal();
  cleanups.push(() => temporal.stop());
  const bundlePath = path.join(runDir, 'workflow-bundle.js');
  writeFileSync(bundlePath, await bundleWorkflows()); // as `npm run build` does for production workers
  say(`${at()} database ${new URL(database.url).pathname.slice(1)}, Temporal at ${temporal.address}, workflow bundle built`);

  const simPort = await freePort();
  const simUrl = `http://127.0.0.1:${simPort}`;
  const door = await startProviderDoor(simUrl);
  cleanups.push(() => door.close());
  const apis = () => slots.filter((s) => s.kind === 'api' && s.up).map((s) => s.healthUrl.replace(/\/health$/, ''));
  const callbacks = await startCallbackDoor(apis);
  cleanups.push(() => callbacks.close());

  // ---- the processes ----
  const common = {
    VOUCH_ENVIRONMENT: 'sandbox',
    DATABASE_URL: database.url,
    DATABASE_POOL_SIZE: String(v.pool),
    TEMPORAL_ADDRESS: temporal.address,
    DATA_DIR: dataDir, // shared, as compose's volume: the sandbox's key rings, the simulator's accounts, the file store
    PROVIDER_BASE_URL: door.url,
    PROVIDER_RATE_LIMIT_PER_SECOND: String(CAP),
    WEBHOOK_ALLOW_INSECURE_URLS: 'true', // the receivers are on loopback
    WORKFLOW_BUNDLE_PATH: bundlePath,
    LOG_LEVEL: v['log-level'],
    ...(v['max-cached-workflows'] ? { WORKER_MAX_CACHED_WORKFLOWS: v['max-cached-workflows'] } : {}),
  };
  const plans = new Map<Slot, { entry: string; env: Record<string, string> }>();
  /** A slot on a port of its own (the same one at each start): the API's PORT, a worker's WORKER_METRICS_PORT, the simulator's. */
  const add = async (name: string, kind: Slot['kind'], entry: string, env: Record<string, string>, port?: number) => {
    port ??= await freePort();
    const health = kind === 'simulator' ? `http://127.0.0.1:${port}/_sim/scenarios` : `http://127.0.0.1:${port}/health`;
    const slot = createSlot(name, kind, health, logDir);
    const portVar = kind === 'api' ? 'PORT' : kind === 'worker' ? 'WORKER_METRICS_PORT' : 'PROVIDER_SIM_PORT';
    plans.set(slot, { entry, env: { ...common, ...env, [portVar]: String(port) } });
    slots.push(slot);
    return slot;
  };
  const crashes: string[] = [];
  /** Starts a slot and, like a process supervisor, starts it again if it exits when we did not stop it. */
  const launch = async (slot: Slot) => {
    const plan = plans.get(slot)!;
    const inc = await startSlot(slot, plan.entry, plan.env);
    slot.child!.once('exit', (code, signal) => {
      if (slot.stopping) return;
      crashes.push(`${at()} ${slot.name} (pid ${inc.pid}) exited on its own (${signal ?? code})`);
      say(`${at()} ${slot.name} exited on its own (${signal ?? code}); starting it again`);
      void sleep(2000).then(() => launch(slot).catch((err: Error) => crashes.push(`${slot.name} did not start again: ${err.message}`)));
    });
    return inc;
  };
  const sim = await add(
    'simulator',
    'simulator',
    'provider-sim/main.ts',
    { PROVIDER_SIM_HOST: '127.0.0.1', PROVIDER_SIM_CALLBACK_URL: `${callbacks.url}/provider-webhooks/sumsub` },
    simPort,
  );
  const api1 = await add('api-1', 'api', 'api/server.ts', { HOST: '127.0.0.1' });
  const api2 = await add('api-2', 'api', 'api/server.ts', { HOST: '127.0.0.1' });
  const worker = (roles: string) => ({ WORKER_ROLES: roles, WORKER_METRICS_HOST: '127.0.0.1' });
  const workers = [await add('worker-general', 'worker', 'worker.ts', worker('general,sync'))];
  for (let i = 1; i <= num('provider-workers'); i++) workers.push(await add(`worker-provider-${i}`, 'worker', 'worker.ts', worker('provider')));
  workers.push(await add('worker-webhooks', 'worker', 'worker.ts', worker('webhooks')));
  cleanups.push(async () => {
    for (const s of [...slots].reverse()) await stopSlot(s, 'SIGTERM', 20_000);
  });
  await launch(sim); // makes the development accounts in DATA_DIR that the others read
  await launch(api1); // makes the sandbox's key rings, once
  await Promise.all([launch(api2), ...workers.map(launch)]);
  say(`${at()} up: ${slots.map((s) => `${s.name} (pid ${s.incarnations.at(-1)!.pid})`).join(', ')}`);

  // ---- the clients ----
  const db: Db = connectDb(database.url, 3);
  cleanups.push(() => db.close());
  const client = createClient(apis);
  const businesses: Business[] = [];
  const businessOfPath = new Map<string, string>();
  const receivers = await startReceivers((p) => businessOfPath.get(p));
  cleanups.push(() => receivers.close());
  for (let i = 0; i < BUSINESSES; i++) {
    const b = await setUpBusiness(db, client, i, receivers.url);
    for (const s of b.subscriptions) businessOfPath.set(s.path, b.id);
    businesses.push(b);
  }
  const donor = await createDonor(simUrl, 'vouch');
  const tableRows = async () =>
    Object.fromEntries(
      await Promise.all(
        (await db.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'")).map(
          async ({ t }) => [t, Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM "${t}"`))[0]!.n)] as const,
        ),
      ),
    );
  const rowsAtStart = await tableRows();
  say(`${at()} ${BUSINESSES} businesses with 10 subscriptions each; traffic begins`);

  // ---- sampling: resident memory per process, the database's size ----
  const rssSeries: RssSeries = {};
  const dbSize: { t: number; bytes: number }[] = [];
  const sample = async () => {
    const t = Date.now();
    const note = (name: string, pid: number | undefined, heapMb: number | null = null) => {
      const m = pid === undefined ? null : rssMb(pid);
      if (m !== null && pid !== undefined) (rssSeries[name] ??= []).push({ t, pid, mb: m, heapMb, cpu: cpuSeconds(pid) });
    };
    const live = slots.filter((s) => s.child && s.child.exitCode === null && s.child.signalCode === null);
    // the V8 heap in use (every isolate: the main thread's and the workflow threads'), from each API's and
    // worker's /metrics: what a leak would grow, apart from what V8 and the allocator keep for reuse
    const heaps = await Promise.all(live.map((s) => (s.kind === 'simulator' ? null : heapUsedMb(s.healthUrl.replace(/\/health$/, '/metrics')))));
    live.forEach((s, i) => note(s.name, s.child!.pid, heaps[i]));
    note('temporal', temporal.process.pid);
    note('provider door', door.pid);
    note('soak (this process)', process.pid);
    try {
      const [row] = await db.query<{ n: string }>('SELECT pg_database_size(current_database()) AS n');
      dbSize.push({ t, bytes: Number(row!.n) });
    } catch {
      // PostgreSQL restarting: no sample
    }
  };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      await sample();
      await sleep(num('sample-seconds') * 1000);
    }
  })();

  // ---- traffic and faults ----
  const trafficStart = Date.now();
  const trafficEnd = trafficStart + MINUTES * 60_000;
  const drainMs = num('drain-minutes') * 60_000;
  const traffic = createTraffic({
    client,
    donor,
    businesses,
    trafficStart,
    trafficEnd,
    waitUntil: () => trafficEnd + drainMs,
    rates: {
      syncRate: num('sync-rate'),
      syncHot: num('sync-hot'),
      syncBackground: num('sync-background'),
      batchEvery: num('batch-every'),
      batchRows: num('batch-rows'),
      sdkEvery: num('sdk-every'),
      ukycEvery: num('ukyc-every'),
      kybEvery: num('kyb-every'),
      downloadEvery: num('download-every'),
      readEvery: num('read-every'),
    },
  });
  const faults: Report['faults'] = [];
  const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const restart = async (slot: Slot, signal: NodeJS.Signals, downMs = 0) => {
    const stopped = await stopSlot(slot, signal, 40_000);
    await sleep(downMs);
    const t0 = Date.now();
    await launch(slot);
    const forced = stopped.forced ? ' (SIGKILL after the grace)' : '';
    return `${slot.name}: ${signal} → exit ${stopped.exit}${forced} in ${secs(stopped.ms)}, ready again ${secs(Date.now() - t0)} after its start`;
  };
  const healthyAgain = async (slot: Slot, since: number) => {
    for (;;) {
      try {
        const res = await fetch(slot.healthUrl, { signal: AbortSignal.timeout(2000) });
        await res.arrayBuffer();
        if (res.status === 200) return `${slot.name} healthy ${secs(Date.now() - since)} after`;
      } catch {
        // still down
      }
      if (Date.now() - since > 180_000) return `${slot.name} NOT healthy 3 min after`;
      await sleep(500);
    }
  };
  const pgVersion = readdirSync('/etc/postgresql')[0] ?? '15';
  const plan: { at: number; name: string; run: () => Promise<string[]> }[] = [
    {
      at: 0.2,
      name: 'rolling restart of every worker',
      run: async () => {
        const out: string[] = [];
        for (const w of workers) out.push(await restart(w, 'SIGTERM'));
        return out;
      },
    },
    {
      at: 0.4,
      name: `SIGKILL ${v['kill-worker']}`,
      run: async () => [await restart(slots.find((s) => s.name === v['kill-worker']) ?? workers[0]!, 'SIGKILL')],
    },
    { at: 0.6, name: 'SIGKILL api-1', run: async () => [await restart(api1, 'SIGKILL', num('api-down-seconds') * 1000)] },
    {
      at: 0.8,
      name: 'PostgreSQL restart',
      run: async () => {
        if (v['no-pg-restart']) return ['skipped (--no-pg-restart)'];
        const t0 = Date.now();
        await promisify(execFile)('pg_ctlcluster', ['--skip-systemctl-redirect', pgVersion, 'main', 'restart']);
        const out = [`pg_ctlcluster ${pgVersion} main restart took ${secs(Date.now() - t0)}`];
        out.push(...(await Promise.all(slots.filter((s) => s.kind !== 'simulator').map((s) => healthyAgain(s, t0)))));
        return out;
      },
    },
  ];
  const faultRun = (async () => {
    for (const f of plan) {
      await sleep(trafficStart + f.at * (trafficEnd - trafficStart) - Date.now());
      const record: Report['faults'][number] = { name: f.name, plannedAt: `${Math.round(f.at * 100)} %`, startedAt: Date.now(), endedAt: null, details: [] };
      faults.push(record);
      say(`${at()} fault: ${f.name}`);
      try {
        record.details = await f.run();
      } catch (err) {
        record.details = [`failed: ${(err as Error).message.slice(0, 300)}`];
      }
      record.endedAt = Date.now();
      say(`${at()}   ${record.details.join('; ')}`);
    }
  })();
  const progress = setInterval(() => {
    const s = traffic.stats;
    say(
      `${at()} sync ${s.sync.done}/${s.sync.started}, batches ${s.batch.done}/${s.batch.started}, ` +
        `sdk ${s.sdk.done}/${s.sdk.started}, ukyc ${s.ukyc.done}/${s.ukyc.started}, ` +
        `kyb ${s.kyb.done}/${s.kyb.started}, downloads ${s.download.done}; provider calls ${door.count()}; webhooks received ${receivers.stats.requests}`,
    );
  }, 60_000);
  await traffic.run();
  await faultRun;
  clearInterval(progress);
  say(`${at()} traffic over; draining (at most ${v['drain-minutes']} min)`);
  await callbacks.idle();
  const drained = await drain(db, receivers, traffic.expectations, trafficEnd + drainMs, say);
  say(`${at()} drain: ${secs(drained.ms)}; left: ${JSON.stringify(drained.left)}`);
  sampling = false;
  await sampler;
  await sample();
  const runEnd = Date.now();

  // ---- the verdict and the figures ----
  const doorRecords = await door.records();
  const verdict = await runChecks({ db, receivers, door: doorRecords, donor, businesses, expectations: traffic.expectations, cap: CAP, left: drained.left });
  for (const c of crashes) verdict.checks.push({ name: 'a process exited on its own', ok: false, detail: c });
  const windows = windowsOf(trafficStart, trafficEnd, num('window-minutes') * 60_000, runEnd);
  const created = new Map((await db.query<{ id: string; at: Date }>('SELECT id, created_at AS at FROM events')).map((e) => [String(e.id), e.at.getTime()]));
  const e2e: { label: string; at: number; ms: number; failed: boolean }[] = [];
  for (const seen of receivers.byPath.values())
    for (const [eventId, r] of seen) {
      const c = created.get(eventId);
      if (c !== undefined) e2e.push({ label: 'webhook: event committed → received', at: c, ms: r.first - c, failed: false });
    }
  const labels: Record<string, string> = {
    sync: 'sync: answer → decision webhook',
    sdk: 'hosted SDK: sandbox review answered → decision webhook',
    ukyc: 'universal KYC: document answered → decision webhook',
    'kyb-owner': 'KYB owner: document answered → decision webhook',
    kyb: "KYB: last owner's document answered → kyb_status_change",
  };
  for (const e of traffic.expectations) {
    const got = receivers.decisions.get(`${e.entityId} ${e.eventType}`);
    if (e.answeredAt !== undefined && e.expect === 1 && labels[e.kind])
      e2e.push({ label: labels[e.kind]!, at: e.answeredAt, ms: got === undefined ? 0 : got - e.answeredAt, failed: got === undefined });
  }
  // a batch's run, as PostgreSQL recorded it (the client polls only every 5 s)
  for (const b of await db.query<{ created: Date; completed: Date | null }>('SELECT created_at AS created, completed_at AS completed FROM import_batches'))
    e2e.push({
      label: 'batch: upload → completed',
      at: b.created.getTime(),
      ms: b.completed ? b.completed.getTime() - b.created.getTime() : 0,
      failed: !b.completed,
    });
  const sizes = await db.query<{ t: string; bytes: string }>(
    "SELECT relname AS t, pg_total_relation_size(relid) AS bytes FROM pg_stat_user_tables WHERE schemaname = 'public' ORDER BY 2 DESC LIMIT 12",
  );
  const tables = await Promise.all(
    sizes.map(async (s) => ({
      table: s.t,
      bytes: Number(s.bytes),
      rowsStart: rowsAtStart[s.t] ?? null,
      rowsEnd: Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM "${s.t}"`))[0]!.n),
    })),
  );
  const report: Report = {
    title:
      `Soak: ${BUSINESSES} businesses × 10 subscriptions, ${MINUTES} min of traffic, ` +
      `${slots.length} processes + Temporal (${new Date(runStart).toISOString()})`,
    settings: { ...v, pgRestart: !v['no-pg-restart'], runDir },
    checks: verdict.checks,
    faults,
    windows,
    paths: byWindow(samplePoints(client.samples), windows),
    endToEnd: byWindow(e2e, windows),
    flows: { ...traffic.stats },
    provider: {
      ...verdict.provider,
      cap: CAP,
      byWindow: providerByWindow(
        doorRecords.calls.map((c) => c.at),
        windows,
      ),
    },
    decisions: Number(
      (await db.query<{ n: string }>("SELECT count(*) AS n FROM events WHERE event_type IN ('account_status_change', 'kyb_status_change')"))[0]!.n,
    ),
    rss: rssSummary(rssSeries),
    memory: memoryByWindow(rssSeries, windows),
    rssSeries,
    dbSize,
    tables,
    callbacks: callbacks.stats,
    receivers: { ...receivers.stats, ...traffic.downloads, sync429: traffic.sync429.count },
    problems: Object.fromEntries(slots.map((s) => [s.name, logProblems(s)])),
    runStart,
  };
  say('');
  say(markdown(report));
  writeFileSync(v.out, JSON.stringify({ ...report, drain: drained }, null, 1));
  failed = verdict.checks.some((c) => !c.ok && !c.warning);
  say(`\n${failed ? 'FAILED' : 'passed'}: JSON in ${v.out}; logs in ${logDir}${failed || v.keep ? ' (kept)' : ' (removed at the end; --keep keeps them)'}`);
  keepRun ||= failed;
} catch (err) {
  say(`soak: ${(err as Error).stack ?? err}`);
  keepRun = true;
} finally {
  for (const c of cleanups.reverse()) await c().catch((err: Error) => say(`clean-up: ${err.message}`));
  if (!keepRun && runDir) await rm(runDir, { recursive: true, force: true });
  else if (runDir) say(`run directory kept: ${runDir}`);
}
process.exit(failed ? 1 : 0);
