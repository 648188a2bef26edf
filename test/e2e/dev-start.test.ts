// `npm start` as a newcomer runs it: Temporal dev server with its Web UI, embedded PGlite, worker and
// API in one process, a sandbox business on first start, state kept across restarts, Ctrl-C clean.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { lstat, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { freePort } from '../helpers/ports.ts';
import { createVouchClient } from '../../client/index.ts';
import { run, start, type Running } from '../helpers/processes.ts';

describe('npm start (all-in-one development mode)', () => {
  let dataDir: string;
  let env: Record<string, string | undefined>;
  let dev: Running | undefined;
  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'vouch-dev-'));
    env = {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      TEMPORAL_DEV_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      PGLITE_PORT: String(await freePort()),
      TEMPORAL_ADDRESS: undefined,
      VOUCH_ENVIRONMENT: undefined, // npm start alone runs without it: the sandbox (every other process must name one)
      DATABASE_URL: undefined,
      TASK_QUEUE: undefined,
      PROVIDER_TASK_QUEUE: undefined,
      SYNC_TASK_QUEUE: undefined,
      PROVIDER_SIM_PORT: String(await freePort()),
      WORKFLOW_BUNDLE_PATH: path.join(dataDir, 'no-bundle.js'),
      LOG_LEVEL: 'warn',
      // what is checked is a clean stop (exit 0, every clean-up run), not its speed: once, beside the
      // other test files, it ended with 1 (the 10 s default grace passed, or a fatal error; the
      // assertion now prints the output, slow clean-up steps included)
      SHUTDOWN_GRACE_MS: '60000',
    };
  });
  afterEach(async () => {
    // a test that failed midway leaves its process: it goes, with its children (the Temporal dev
    // server has a group of its own), before the next test starts another on the same ports
    if (!dev) return;
    spawnSync('pkill', ['-KILL', '-P', String(dev.child.pid)]);
    await dev.stop('SIGKILL');
    dev = undefined;
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  const api = () => `http://127.0.0.1:${env.PORT}`;

  it('starts everything, prints the URLs and a working sandbox API key, and stops on Ctrl-C', async () => {
    dev = start('dev/start.ts', [], env, { group: true }); // from a terminal: Ctrl-C reaches its whole process group
    const [, key] = await dev.waitFor(/API key\s+(vk_sandbox_[\w-]+)/, 120_000);
    assert.match(dev.output(), new RegExp(`Temporal UI\\s+http://127.0.0.1:${env.TEMPORAL_UI_PORT}`));
    assert.match(dev.output(), /\(created now\)/);

    const health = await createVouchClient({ baseUrl: api() }).GET('/health');
    assert.equal(health.data?.status, 'ok');
    const ui = await fetch(`http://127.0.0.1:${env.TEMPORAL_UI_PORT}/`);
    assert.equal(ui.status, 200, 'the Temporal Web UI answers');
    const created = await createVouchClient({ baseUrl: api(), apiKey: key! }).POST('/entity', { body: { externalId: 'dev-1', type: 'INDIVIDUAL' } });
    assert.equal(created.response.status, 201);
    assert.match(created.data!.id, /^[0-9a-f-]{36}$/);

    // The admin CLI reaches the database that npm start is serving (naming the sandbox, as docs/operations.md says).
    const cli = await run('cli/vouch.ts', ['business', 'create', '--name', 'Beside dev'], { ...env, VOUCH_ENVIRONMENT: 'sandbox' });
    assert.equal(cli.code, 0, cli.stderr);

    // Ctrl-C goes to the terminal's whole foreground group: the Temporal dev server is not in ours, so
    // it is stopped by us, last, after the workers have drained (before: it got the signal too and
    // went away under workers still completing activities)
    const children = execFileSync('ps', ['-o', 'pgid=,args=', '--ppid', String(dev.child.pid)], { encoding: 'utf8' });
    const server = children.split('\n').find((l) => /server start-dev/.test(l));
    assert.ok(server, children);
    assert.notEqual(Number(server.trim().split(/\s+/)[0]), dev.child.pid, `the dev server shares the terminal's process group: ${server}`);
    const code = await dev.stop('SIGINT');
    assert.equal(code, 0, `exit ${code} on Ctrl-C; the end of its output:\n${dev.output().slice(-4000)}`);
    assert.doesNotMatch(dev.output(), /error while stopping|Temporal dev server exited/, dev.output().slice(-4000));
    dev = undefined;
    const saved = JSON.parse(await readFile(path.join(dataDir, 'sandbox.json'), 'utf8'));
    assert.equal(saved.apiKey, key);
    // the data directory is the service's own (700): nothing in it is reachable by another user,
    // whatever modes the files inside are given (PGlite writes its own 666); secrets are 600 too
    assert.equal((await lstat(dataDir)).mode & 0o777, 0o700);
    const open: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const e of await readdir(dir, { withFileTypes: true })) {
        if (!e.isDirectory()) continue;
        const p = path.join(dir, e.name);
        if (((await lstat(p)).mode & 0o077) !== 0) open.push(`${path.relative(dataDir, p)} ${((await lstat(p)).mode & 0o777).toString(8)}`);
        await walk(p);
      }
    };
    await walk(dataDir);
    assert.deepEqual(open, [], 'directories open to other users');
    for (const secret of [
      'sandbox.json',
      'payload-codec-keys.json',
      'webhook-signing-keys.json',
      'standard-webhook-keys.json',
      'signed-payload-keys.json',
      'file-link-secret',
    ]) {
      assert.equal((await lstat(path.join(dataDir, secret))).mode & 0o777, 0o600, secret);
    }
  });

  it('keeps the sandbox business and its data across a restart', async () => {
    dev = start('dev/start.ts', [], env);
    const [, key] = await dev.waitFor(/API key\s+(vk_sandbox_[\w-]+)/, 120_000);
    assert.doesNotMatch(dev.output(), /\(created now\)/);
    const list = await createVouchClient({ baseUrl: api(), apiKey: key! }).GET('/entity', { params: { header: { 'Accept-Version': 'v1.0' } } });
    assert.deepEqual(
      list.data!.items.map((e) => e.externalId),
      ['dev-1'],
    );
    const code = await dev.stop('SIGINT');
    assert.equal(code, 0, `exit ${code} on Ctrl-C; the end of its output:\n${dev.output().slice(-4000)}`);
    dev = undefined;
  });
});
