// The production entry points as separate processes, and the admin CLI, against the run's
// PostgreSQL and Temporal.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { findTemporalCli } from '../../dev/temporal-cli.ts';
import { loadConfig } from '../../runtime/config.ts';
import { codecKeysFile } from '../../runtime/codec-keys.ts';
import { API_SECRETS, TEMPORAL_SETUP_SECRETS, WORKER_ROLE_SECRETS, workerSecrets, type SecretNeeds } from '../../runtime/secrets-by-role.ts';
import { WORKER_ROLE_NAMES, type WorkerRole } from '../../runtime/worker-roles.ts';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common';
import { startProviderSim, type ProviderSim } from '../../provider-sim/server.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { freePort } from '../helpers/ports.ts';
import { root, run, start, type Running } from '../helpers/processes.ts';
import { isolatedDatabaseUrl, testEnv, testSealingRing } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

const databaseUrl = await isolatedDatabaseUrl();
const env = () => ({
  DATABASE_URL: databaseUrl,
  TEMPORAL_ADDRESS: testEnv('TEMPORAL_ADDRESS'),
  TASK_QUEUE: `e2e-${process.pid}`,
  PROVIDER_TASK_QUEUE: `e2e-provider-${process.pid}`,
  SYNC_TASK_QUEUE: `e2e-sync-${process.pid}`,
  WEBHOOK_TASK_QUEUE: `e2e-webhooks-${process.pid}`,
  LOG_LEVEL: 'info',
});

describe('admin CLI', () => {
  let db: Db;
  before(() => {
    db = connectDb(databaseUrl, 1);
  });
  after(() => db.close());

  it('creates a BIN-sponsored business and prints its id and a key that is stored only as a hash', async () => {
    const res = await run('cli/vouch.ts', ['business', 'create', '--name', 'Acme Cards', '--bin-sponsored'], env());
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout);
    assert.match(out.businessId, /^[0-9a-f-]{36}$/);
    assert.match(out.apiKey, /^vk_sandbox_[\w-]{43}$/);
    const [business] = await db.query('SELECT name, bin_sponsored FROM businesses WHERE id = $1', [out.businessId]);
    assert.deepEqual(business, { name: 'Acme Cards', bin_sponsored: true });
    const keys = await db.query('SELECT key_hash FROM api_keys WHERE business_id = $1', [out.businessId]);
    assert.equal(keys.length, 1);
    assert.notEqual(keys[0]!.key_hash, out.apiKey);
  });

  it('registers the search attributes in a namespace that lacks them (temporal-setup), and only once', async () => {
    const namespace = `setup-${process.pid}-${Date.now()}`;
    const connection = await Connection.connect({ address: testEnv('TEMPORAL_ADDRESS') });
    try {
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    } finally {
      await connection.close();
    }
    // a new namespace takes a moment to be served
    let first = { code: null as number | null, stdout: '', stderr: '' };
    await eventually(
      'temporal-setup succeeding on the new namespace',
      async () => {
        first = await run('cli/vouch.ts', ['temporal-setup'], { ...env(), TEMPORAL_NAMESPACE: namespace });
        return first.code === 0;
      },
      { everyMs: 300, state: () => first.stderr },
    );
    assert.deepEqual(JSON.parse(first.stdout), { namespace, added: ['BusinessId', 'BatchId', 'EntityId', 'VouchStatus'], present: [] });
    const again = await run('cli/vouch.ts', ['temporal-setup'], { ...env(), TEMPORAL_NAMESPACE: namespace });
    assert.deepEqual(JSON.parse(again.stdout), { namespace, added: [], present: ['BusinessId', 'BatchId', 'EntityId', 'VouchStatus'] });
  });

  it("compose's temporal-namespace job (docker/temporal-namespace.sh): makes a missing namespace and its search attributes, then finds them", async () => {
    const namespace = `compose-${process.pid}-${Date.now()}`;
    const cli = findTemporalCli();
    assert.ok(cli, 'the Temporal CLI is installed (npm install)');
    const job = () =>
      promisify(execFile)('sh', [path.join(root, 'docker', 'temporal-namespace.sh')], {
        env: { PATH: `${path.dirname(cli)}:${process.env.PATH}`, TEMPORAL_ADDRESS: testEnv('TEMPORAL_ADDRESS'), TEMPORAL_NAMESPACE: namespace },
      });
    const first = await job();
    assert.match(first.stdout, new RegExp(`Namespace ${namespace} successfully registered`));
    const again = await job();
    for (const name of ['BusinessId', 'BatchId', 'EntityId', 'VouchStatus']) assert.match(again.stdout, new RegExp(`search attribute ${name}: present`));
    const res = await run('cli/vouch.ts', ['temporal-setup'], { ...env(), TEMPORAL_NAMESPACE: namespace });
    assert.deepEqual(JSON.parse(res.stdout).added, [], 'the job registered what `vouch temporal-setup` would');
  });

  it('makes the payload key ring once and rotates it: a new key first, the old ones kept', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'vouch-payload-keys-'));
    try {
      const at = { ...env(), DATA_DIR: dir, VOUCH_ENVIRONMENT: 'production' };
      const made = JSON.parse((await run('cli/vouch.ts', ['payload-keys', 'generate'], at)).stdout);
      assert.equal(made.keyIds.length, 1);
      assert.match(made.keyIds[0], /^production-\d{4}-\d{2}-\d{2}-[0-9a-f]{6}$/);
      assert.deepEqual(JSON.parse((await run('cli/vouch.ts', ['payload-keys', 'generate'], at)).stdout).keyIds, made.keyIds, 'an existing ring is kept');
      const rotated = JSON.parse((await run('cli/vouch.ts', ['payload-keys', 'rotate'], at)).stdout);
      assert.equal(rotated.keyIds.length, 2);
      assert.notEqual(rotated.keyIds[0], made.keyIds[0]);
      assert.equal(rotated.keyIds[1], made.keyIds[0]);
      assert.equal(((await stat(rotated.file)).mode & 0o777).toString(8), '600');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('adds a second key to a business, and revokes one', async () => {
    const created = JSON.parse((await run('cli/vouch.ts', ['business', 'create', '--name', 'Two Keys'], env())).stdout);
    const res = await run('cli/vouch.ts', ['key', 'create', '--business', created.businessId], env());
    assert.equal(res.code, 0, res.stderr);
    const added = JSON.parse(res.stdout);
    assert.notEqual(added.apiKey, created.apiKey);
    assert.equal((await db.query('SELECT 1 FROM api_keys WHERE business_id = $1', [created.businessId])).length, 2);
    const revoked = await run('cli/vouch.ts', ['key', 'revoke', '--business', created.businessId, '--key', added.keyId], env());
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal((await db.query('SELECT 1 FROM api_keys WHERE business_id = $1 AND revoked_at IS NULL', [created.businessId])).length, 1);
  });

  it('makes the webhook key ring once, and prints only its public keys', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'vouch-keys-'));
    try {
      const keyEnv = { ...env(), VOUCH_ENVIRONMENT: 'production', WEBHOOK_SIGNING_KEYS_FILE: path.join(dir, 'ring.json') };
      const first = await run('cli/vouch.ts', ['webhook-keys', 'generate'], keyEnv);
      assert.equal(first.code, 0, first.stderr);
      assert.doesNotMatch(first.stdout, /PRIVATE KEY/);
      const again = await run('cli/vouch.ts', ['webhook-keys', 'generate'], keyEnv);
      const ids = (out: string) => JSON.parse(out).keys.map((k: { keyId: string }) => k.keyId);
      assert.deepEqual(ids(again.stdout), ids(first.stdout), 'an existing ring is kept');
      assert.equal(ids(first.stdout).length, 4);
      assert.equal((await stat(path.join(dir, 'ring.json'))).mode & 0o777, 0o600);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  for (const [args, message] of [
    [['business', 'create'], '--name is required'],
    [['business', 'create', '--name', '   '], '--name is required'],
    [['key', 'create', '--business', 'not-a-uuid'], '--business must be a business id'],
    [['key', 'create', '--business', '7b0b7d8e-35f5-4f4f-9f57-2f1f1c1c1c1c'], 'no business'],
    [['frobnicate'], 'unknown command'],
    [[], 'usage:'],
  ] as const) {
    it(`exits 2 with a message for: vouch ${args.join(' ') || '(nothing)'}`, async () => {
      const blankNames = () => db.query("SELECT count(*) AS n FROM businesses WHERE trim(name) = ''");
      const before = await blankNames();
      const res = await run('cli/vouch.ts', [...args], env());
      assert.equal(res.code, 2);
      assert.ok(res.stderr.includes(message), res.stderr);
      assert.equal(res.stdout, '');
      assert.deepEqual(await blankNames(), before, 'no business made');
    });
  }
});

describe('a process that does not name its environment', () => {
  // only `npm start` may run without VOUCH_ENVIRONMENT (it is the sandbox: dev-start.test.ts);
  // anything else refuses, naming the setting, before it opens a port, a database or a key ring
  const unnamed = () => ({ ...env(), VOUCH_ENVIRONMENT: undefined });
  const refused = (res: { code: number | null; stdout: string; stderr: string }) => {
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /VOUCH_ENVIRONMENT: required — name this process's environment: sandbox, staging or production/);
  };

  it('the API refuses to start: it would be a sandbox, /codec and /metrics open and /sandbox/* there', async () => {
    const port = await freePort();
    const res = await run('api/server.ts', [], { ...unnamed(), PORT: String(port) });
    refused(res);
    assert.equal(res.code, 2);
    await assert.rejects(fetch(`http://127.0.0.1:${port}/health`), 'nothing listens');
  });

  it('a worker refuses to start', async () => refused(await run('worker.ts', [], unnamed())));

  it('the admin CLI refuses a command (its keys carry the environment), makes nothing, and still prints its usage', async () => {
    const db = connectDb(databaseUrl, 1);
    try {
      const named = () => db.query("SELECT 1 FROM businesses WHERE name = 'Unnamed environment'");
      refused(await run('cli/vouch.ts', ['business', 'create', '--name', 'Unnamed environment'], unnamed()));
      assert.equal((await named()).length, 0, 'no business made');
      const help = await run('cli/vouch.ts', ['--help'], unnamed());
      assert.equal(help.code, 2);
      assert.match(help.stderr, /usage:/);
      const made = await run('cli/vouch.ts', ['business', 'create', '--name', 'Unnamed environment'], { ...unnamed(), VOUCH_ENVIRONMENT: 'staging' });
      assert.equal(made.code, 0, made.stderr);
      assert.match(JSON.parse(made.stdout).apiKey, /^vk_staging_/, 'named, it runs, and the key carries the environment');
    } finally {
      await db.close();
    }
  });

  it('the replay CLI refuses to start', async () => refused(await run('cli/replay.ts', ['--workflow-id', 'any'], unnamed())));
});

describe('API and worker as separate processes', () => {
  let api: Running;
  let worker: Running;
  let port: number;
  let metricsPort: number;
  let sim: ProviderSim;
  before(async () => {
    port = await freePort();
    metricsPort = await freePort();
    sim = await startProviderSim();
    const us = sim.state.addClient({ clientId: 'vouch' });
    worker = start('worker.ts', [], {
      ...env(),
      PROVIDER_BASE_URL: sim.url,
      PROVIDER_APP_TOKEN: us.appToken,
      PROVIDER_SECRET_KEY: us.secretKey,
      WORKER_METRICS_PORT: String(metricsPort),
    });
    api = start('api/server.ts', [], { ...env(), PORT: String(port) });
    await Promise.all([api.waitFor(/"msg":"API listening"/), worker.waitFor(/"msg":"worker polling"/)]);
  });
  after(async () => {
    await api?.stop('SIGKILL');
    await worker?.stop('SIGKILL');
    await sim?.close();
  });

  it("serves the worker's own metrics on its port (split mode): the Temporal SDK core's and the process's", async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /^temporal_worker_task_slots_available\{/m);
    assert.match(text, /^vouch_process_cpu_user_seconds_total /m);
    assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status, 404);
  });

  it("answers probes on the worker's metrics port: GET /health names every queue it polls, 200 while all run", async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/health`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { ok: boolean; workers: { taskQueue: string; state: string }[] };
    assert.equal(body.ok, true);
    const e = env();
    assert.deepEqual(body.workers.map((w) => w.taskQueue).sort(), [e.TASK_QUEUE, e.PROVIDER_TASK_QUEUE, e.SYNC_TASK_QUEUE, e.WEBHOOK_TASK_QUEUE].sort());
    assert.ok(body.workers.every((w) => w.state === 'RUNNING'));
  });

  it('runs only the roles of WORKER_ROLES: a provider worker polls the provider queue alone, without the workflow code', async () => {
    const rolePort = await freePort();
    const us = sim.state.addClient({ clientId: `vouch-role-${process.pid}` });
    const provider = start('worker.ts', [], {
      ...env(),
      WORKER_ROLES: 'provider',
      PROVIDER_BASE_URL: sim.url,
      PROVIDER_APP_TOKEN: us.appToken,
      PROVIDER_SECRET_KEY: us.secretKey,
      WORKER_METRICS_PORT: String(rolePort),
    });
    try {
      await provider.waitFor(/"msg":"worker polling"/);
      const body = (await (await fetch(`http://127.0.0.1:${rolePort}/health`)).json()) as { workers: { taskQueue: string }[] };
      assert.deepEqual(
        body.workers.map((w) => w.taskQueue),
        [env().PROVIDER_TASK_QUEUE],
      );
      assert.match(provider.output(), /"roles":\["provider"\]/);
      assert.equal(await provider.stop('SIGTERM'), 0);
    } finally {
      await provider.stop('SIGKILL').catch(() => {});
    }
  });

  it('refuses WORKER_ROLES it does not know, naming the setting', async () => {
    const res = await run('worker.ts', [], { ...env(), WORKER_ROLES: 'general,billing' });
    assert.notEqual(res.code, 0);
    assert.match(res.stdout + res.stderr, /WORKER_ROLES/);
  });

  it('serves requests with a key made by the CLI', async () => {
    const { apiKey } = JSON.parse((await run('cli/vouch.ts', ['business', 'create', '--name', 'Proc'], env())).stdout);
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    assert.equal(health.status, 200);
    const created = await fetch(`http://127.0.0.1:${port}/entity`, {
      method: 'POST',
      headers: { 'x-vouch-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ externalId: 'proc-1', type: 'INDIVIDUAL' }),
    });
    assert.equal(created.status, 201);
  });

  it('writes one JSON object per log line, request lines carrying a request id', async () => {
    await api.waitFor(/"path":"\/entity","status":201/);
    const lines = api.output().trim().split('\n');
    for (const line of lines) JSON.parse(line);
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    assert.ok(requests.length >= 2);
    for (const r of requests) assert.match(r.requestId, /^[0-9a-f-]{36}$/);
  });

  it('refuses to start a worker without identity-provider settings, naming them', async () => {
    const res = await run('worker.ts', [], env());
    assert.notEqual(res.code, 0);
    assert.match(res.stdout + res.stderr, /PROVIDER_BASE_URL/);
  });

  it('stops cleanly on SIGTERM', async () => {
    assert.equal(await api.stop('SIGTERM'), 0);
    assert.equal(await worker.stop('SIGTERM'), 0);
    assert.match(worker.output(), /"msg":"stopped"/);
  });
});

describe('each process outside the sandbox, with the secrets of its role alone (runtime/secrets-by-role.ts)', () => {
  // the deployment's secrets made as docs/operations.md says, in a directory of their own; each process
  // then gets its table's entries and nothing else: every other secret unset, and a DATA_DIR of its own,
  // empty, so nothing is read from a file either
  const SECRET_NAMES = [
    ...new Set([API_SECRETS, TEMPORAL_SETUP_SECRETS, ...WORKER_ROLE_NAMES.map((r) => workerSecrets([r]))].flatMap((n) => [...n.required, ...n.optional])),
  ];
  const secrets: Record<string, string> = {};
  let dir: string;
  let sim: ProviderSim;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'vouch-role-secrets-'));
    sim = await startProviderSim();
    const us = sim.state.addClient({ clientId: `vouch-roles-${process.pid}` });
    const at = { ...env(), VOUCH_ENVIRONMENT: 'production', DATA_DIR: path.join(dir, 'made') };
    const generate = async (command: string, variable: string) => {
      const file = path.join(dir, `${variable}.json`);
      const res = await run('cli/vouch.ts', [command, 'generate'], { ...at, [`${variable}_FILE`]: file });
      assert.equal(res.code, 0, res.stderr);
      return { ring: await readFile(file, 'utf8'), printed: res.stdout };
    };
    const webhook = await generate('webhook-keys', 'WEBHOOK_SIGNING_KEYS');
    const standard = await generate('standard-webhook-keys', 'STANDARD_WEBHOOK_KEYS');
    const checkpoint = await generate('audit-checkpoint-keys', 'AUDIT_CHECKPOINT_KEYS');
    Object.assign(secrets, {
      DATABASE_URL: databaseUrl,
      // the run's payload codec ring: the schedules every worker checks at start were written with it
      // by the other files' workers (a deployment has one ring; `vouch payload-keys generate` makes it)
      PAYLOAD_CODEC_KEYS: (testSealingRing(), await readFile(codecKeysFile(loadConfig(process.env)), 'utf8')),
      SIGNED_PAYLOAD_KEYS: (await generate('signed-payload-keys', 'SIGNED_PAYLOAD_KEYS')).ring,
      WEBHOOK_SIGNING_KEYS: webhook.ring,
      WEBHOOK_SIGNING_PUBLIC_KEYS: webhook.printed,
      STANDARD_WEBHOOK_KEYS: standard.ring,
      STANDARD_WEBHOOK_PUBLIC_KEYS: standard.printed,
      AUDIT_CHECKPOINT_KEYS: checkpoint.ring,
      AUDIT_CHECKPOINT_PUBLIC_KEYS: checkpoint.printed,
      FILE_LINK_SECRET: randomBytes(32).toString('hex'),
      CODEC_ACCESS_TOKEN: randomBytes(32).toString('hex'),
      METRICS_TOKEN: randomBytes(32).toString('hex'),
      PROVIDER_BASE_URL: sim.url,
      PROVIDER_APP_TOKEN: us.appToken,
      PROVIDER_SECRET_KEY: us.secretKey,
    });
  });
  after(async () => {
    await sim?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The environment of a process that holds these secrets: its table's, every other one unset, a DATA_DIR of its own. */
  const holding = async (needs: SecretNeeds, extra: Record<string, string> = {}, without: string[] = []) => {
    const own = await mkdtemp(path.join(dir, 'data-'));
    const given = [...needs.required, ...needs.optional].filter((n) => secrets[n] !== undefined && !without.includes(n));
    return {
      ...env(),
      ...Object.fromEntries(SECRET_NAMES.map((n) => [n, undefined])),
      ...Object.fromEntries(given.map((n) => [n, secrets[n]])),
      VOUCH_ENVIRONMENT: 'production',
      DATA_DIR: own,
      ...extra,
    };
  };

  for (const roles of [['general', 'sync'], ['provider'], ['webhooks']] as WorkerRole[][]) {
    it(`a worker with WORKER_ROLES=${roles.join(',')} starts with its secrets alone, and not without its own ones`, async () => {
      const needs = workerSecrets(roles);
      const worker = start('worker.ts', [], await holding(needs, { WORKER_ROLES: roles.join(',') }));
      try {
        await worker.waitFor(/"msg":"worker polling"/);
        assert.equal(await worker.stop('SIGTERM'), 0);
      } finally {
        await worker.stop('SIGKILL');
      }
      // the role's own secret is read: without it the worker refuses, naming it
      const own = roles.flatMap((r) => WORKER_ROLE_SECRETS[r].required).at(-1)!;
      const res = await run('worker.ts', [], await holding(needs, { WORKER_ROLES: roles.join(',') }, [own]));
      assert.notEqual(res.code, 0);
      assert.match(res.stdout + res.stderr, new RegExp(own));
    });
  }

  it('the API starts with its secrets alone and publishes the public keys it was given; without them it refuses, naming them', async () => {
    const port = await freePort();
    const apiProcess = start('api/server.ts', [], await holding(API_SECRETS, { PORT: String(port) }));
    try {
      await apiProcess.waitFor(/"msg":"API listening"/);
      const made = await run('cli/vouch.ts', ['business', 'create', '--name', 'Roles'], { ...env(), VOUCH_ENVIRONMENT: 'production' });
      const { apiKey } = JSON.parse(made.stdout);
      const res = await fetch(`http://127.0.0.1:${port}/webhook-keys`, { headers: { 'x-vouch-api-key': apiKey } });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { keys: { keyId: string }[]; standardWebhooks: { keys: { keyId: string }[] } };
      const ids = (printed: string) => (JSON.parse(printed) as { keys: { keyId: string }[] }).keys.map((k) => k.keyId);
      assert.deepEqual(
        body.keys.map((k) => k.keyId),
        ids(secrets.WEBHOOK_SIGNING_PUBLIC_KEYS!),
      );
      assert.deepEqual(
        body.standardWebhooks.keys.map((k) => k.keyId),
        ids(secrets.STANDARD_WEBHOOK_PUBLIC_KEYS!),
      );
      assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
    } finally {
      await apiProcess.stop('SIGKILL');
    }
    const refused = await run('api/server.ts', [], await holding(API_SECRETS, { PORT: String(await freePort()) }, ['WEBHOOK_SIGNING_PUBLIC_KEYS']));
    assert.notEqual(refused.code, 0);
    assert.match(refused.stdout + refused.stderr, /WEBHOOK_SIGNING_PUBLIC_KEYS/);
  });
});

describe("compose's sandbox profile, as processes", () => {
  it('runs the simulator as a process of its own: a sandbox worker reads our account from the shared DATA_DIR and starts without credentials', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'vouch-sandbox-'));
    const simPort = await freePort();
    const sim = start('provider-sim/main.ts', [], { ...env(), VOUCH_ENVIRONMENT: 'sandbox', DATA_DIR: dir, PROVIDER_SIM_PORT: String(simPort) });
    let worker: Running | undefined;
    try {
      await sim.waitFor(/Identity-provider simulator/);
      const sandbox = {
        ...env(),
        VOUCH_ENVIRONMENT: 'sandbox',
        DATA_DIR: dir,
        PROVIDER_BASE_URL: `http://127.0.0.1:${simPort}`,
        WORKER_ROLES: 'provider',
        // the ring every process on this namespace shares (compose: the setup service's, on the shared volume)
        PAYLOAD_CODEC_KEYS_FILE: codecKeysFile(loadConfig({ ...process.env, ...env() })),
      };
      worker = start('worker.ts', [], { ...sandbox, WORKER_METRICS_PORT: '0' });
      await worker.waitFor(/"msg":"worker polling"/);
      const staging = await run('worker.ts', [], { ...sandbox, VOUCH_ENVIRONMENT: 'staging' });
      assert.notEqual(staging.code, 0, 'outside the sandbox the file is not read');
      assert.match(staging.stdout + staging.stderr, /PROVIDER_APP_TOKEN/);
    } finally {
      await worker?.stop('SIGKILL');
      await sim.stop('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
