// docker-compose.yml, read as far as a tool can without Docker (issues 18 and 23): valid against the
// compose specification's schema; every image pinned; the deploy profile safe by default (staging
// semantics, nothing unauthenticated published beyond loopback, no secret with a default value) and
// the sandbox profile on this host only; each worker role in one service per profile; every variable
// a Vouch service is given one it reads; the key rings made by the setup service; and the Temporal
// jobs' search attributes the ones the code registers.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { SEARCH_ATTRIBUTE_KEYS } from '../../contract/run-tags.ts';
import { venvBin } from '../../dev/temporal-cli.ts';
import { bearerAllowed } from '../../domain/bearer.ts';
import { ConfigError, loadConfig, SETTING_NAMES } from '../../runtime/config.ts';
import { fileLinkSecret } from '../../runtime/file-store.ts';
import { createProvider } from '../../runtime/provider.ts';
import { WORKER_ROLE_NAMES } from '../../runtime/worker-roles.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
type Service = {
  image?: string;
  profiles?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  command?: string[];
  expose?: string[];
  stop_grace_period?: string;
  healthcheck?: { test: string[] };
};
const text = await readFile(path.join(root, 'docker-compose.yml'), 'utf8');
const readme = await readFile(path.join(root, 'docs', 'operations.md'), 'utf8');
const compose = parse(text, { merge: true }) as { services: Record<string, Service> };
const services = Object.entries(compose.services);
const vouch = services.filter(([, s]) => s.command?.[0] === 'node' || s.command?.join(' ').includes('cli/vouch.ts'));
const inProfile = (profile: string) => vouch.filter(([, s]) => s.profiles?.includes(profile));
/** What `${NAME:-default}` gives when NAME is unset. */
const whenUnset = (value: string) => value.match(/^\$\{(\w+):-(.*)\}$/)?.[2] ?? value;
const validate = promisify(execFile);

describe('docker-compose.yml', () => {
  it("is valid against the compose specification's schema (check-jsonschema's vendored compose-spec), and a broken file is not", async () => {
    const bin = path.join(venvBin, 'check-jsonschema');
    await validate(bin, ['--builtin-schema', 'vendor.compose-spec', path.join(root, 'docker-compose.yml')]);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'vouch-compose-'));
    try {
      const broken = path.join(dir, 'docker-compose.yml');
      await writeFile(broken, text.replace('restart: unless-stopped', 'restart: 3'));
      await assert.rejects(validate(bin, ['--builtin-schema', 'vendor.compose-spec', broken]), (err: { stdout: string }) =>
        /services\.api\.restart: 3 is not of type 'string'/.test(err.stdout),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('pins every image to a version (no latest, no bare name), the Vouch image to this release', async () => {
    const { version } = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { version: string };
    for (const [name, s] of services) {
      assert.ok(s.image, `${name} names its image`);
      assert.match(s.image, /^[\w./-]+:\d+(\.\d+)+$/, `${name}: ${s.image}`);
    }
    for (const [name, s] of vouch) assert.equal(s.image, `vouch:${version}`, name);
    // one build of the tag (setup's), the others use it: parallel builds of one tag collide
    assert.deepEqual(
      services.filter(([, s]) => 'build' in s).map(([n]) => n),
      ['setup'],
    );
    for (const [name, s] of vouch.filter(([n]) => n !== 'setup')) assert.equal((s as { pull_policy?: string }).pull_policy, 'never', name);
    assert.ok(
      services.every(([, s]) => !s.image!.startsWith('temporalio/auto-setup')),
      'temporalio/auto-setup is deprecated: temporalio/server and admin-tools jobs instead',
    );
  });

  it("runs the Temporal server and UI the tests run on (the pinned Temporal CLI's own versions)", async () => {
    const { stdout } = await validate(path.join(venvBin, 'temporal'), ['--version']);
    const [, server, ui] = stdout.match(/\(Server (\d+\.\d+\.\d+), UI (\d+\.\d+\.\d+)\)/) ?? [];
    assert.ok(server && ui, `temporal --version names its server and UI: ${stdout}`);
    const tagOf = (name: string) => compose.services[name]!.image!.split(':')[1];
    for (const name of ['temporal', 'temporal-schema', 'temporal-namespace']) assert.equal(tagOf(name), server, `${name} runs Temporal ${server}`);
    assert.equal(tagOf('temporal-ui'), ui, `the UI is ${ui}`);
    assert.match(readme, new RegExp(`\`temporalio/server\` ${server.replaceAll('.', '\\.')}\\b`), 'docs/operations.md names the version');
  });

  it('sets up Temporal with admin-tools jobs: the schema before the server, the namespace and search attributes after it', async () => {
    const s = compose.services;
    assert.match(s['temporal-schema']!.image!, /^temporalio\/admin-tools:/);
    assert.match(s.temporal!.image!, /^temporalio\/server:/);
    assert.equal(s['temporal-schema']!.image!.split(':')[1], s.temporal!.image!.split(':')[1], 'the schema is migrated to the server’s own version');
    const depends = (name: string) => (s[name] as { depends_on?: Record<string, { condition: string }> }).depends_on ?? {};
    assert.equal(depends('temporal')['temporal-schema']?.condition, 'service_completed_successfully');
    assert.equal(depends('temporal-namespace').temporal?.condition, 'service_healthy');
    for (const [name] of vouch.filter(([n]) => n !== 'setup' && n !== 'provider-sim' && n !== 'migrate')) {
      assert.equal(depends(name)['temporal-namespace']?.condition, 'service_completed_successfully', name);
    }
    const script = await readFile(path.join(root, 'docker', 'temporal-namespace.sh'), 'utf8');
    const listed = script.match(/for name in ([\w ]+); do/)![1]!.split(' ');
    assert.deepEqual(
      listed,
      Object.values(SEARCH_ATTRIBUTE_KEYS).map((k) => k.name),
    );
  });

  it('names the environment of every Vouch process (a process refuses to start without VOUCH_ENVIRONMENT): staging by default in deploy', () => {
    for (const [name, s] of vouch) {
      const value = s.environment?.VOUCH_ENVIRONMENT;
      assert.ok(value, `${name} sets VOUCH_ENVIRONMENT`);
      assert.equal(whenUnset(value), s.profiles?.includes('deploy') ? 'staging' : 'sandbox', name);
    }
  });

  it('runs each worker role in one service of each profile', () => {
    for (const profile of ['deploy', 'sandbox']) {
      const roles = inProfile(profile)
        .filter(([, s]) => s.command?.join(' ') === 'node worker.ts')
        .flatMap(([, s]) => s.environment!.WORKER_ROLES!.split(','));
      assert.deepEqual([...roles].sort(), [...WORKER_ROLE_NAMES].sort(), profile);
      for (const [name, s] of inProfile(profile).filter(([, s]) => s.command?.join(' ') === 'node worker.ts')) {
        assert.match(s.healthcheck!.test.join(' '), /9464\/health/, `${name} is probed on its metrics port`);
      }
    }
  });

  it('deploy profile: staging semantics unless .env says otherwise, and no secret with a value of its own', () => {
    const deploy = inProfile('deploy');
    assert.deepEqual(deploy.map(([n]) => n).sort(), ['api', 'migrate', 'setup', 'worker-general', 'worker-provider', 'worker-webhooks']);
    for (const [name, s] of deploy) assert.equal(whenUnset(s.environment!.VOUCH_ENVIRONMENT!), 'staging', name);
    const env = compose.services.api!.environment!;
    for (const name of ['CODEC_ACCESS_TOKEN', 'METRICS_TOKEN', 'FILE_LINK_SECRET', 'PROVIDER_BASE_URL', 'PROVIDER_APP_TOKEN', 'PROVIDER_SECRET_KEY']) {
      assert.equal(env[name], `\${${name}:-}`, `${name} comes from .env or nowhere`);
    }
    // interpolation covers every service whatever the profile, so a `${X:?}` would stop the sandbox too;
    // what staging needs is checked by the processes instead (next test)
    assert.doesNotMatch(text, /\$\{\w+:\?/);
  });

  it('what a staging process needs and .env left out stops it at start, naming the setting', () => {
    const staging = Object.fromEntries(Object.entries(compose.services.api!.environment!).map(([k, v]) => [k, whenUnset(v)])) as Record<string, string>;
    const config = loadConfig(staging);
    assert.equal(config.environment, 'staging');
    assert.throws(
      () => createProvider(config),
      (err: Error) => err instanceof ConfigError && /PROVIDER_BASE_URL/.test(err.message),
      'a worker refuses',
    );
    assert.throws(
      () => fileLinkSecret(config),
      (err: Error) => err instanceof ConfigError && /FILE_LINK_SECRET/.test(err.message),
      'the API refuses',
    );
    assert.equal(bearerAllowed(config.environment, config.metrics.token, 'Bearer '), false, '/metrics stays closed');
    assert.equal(bearerAllowed(config.environment, config.metrics.token, undefined), false, '/metrics stays closed');
  });

  it('sandbox profile: sandbox semantics on the provider simulator, published on this host only', () => {
    const sandbox = inProfile('sandbox');
    assert.deepEqual(sandbox.map(([n]) => n).sort(), [
      'api-sandbox',
      'migrate',
      'provider-sim',
      'setup',
      'worker-general-sandbox',
      'worker-provider-sandbox',
      'worker-webhooks-sandbox',
    ]);
    for (const [name, s] of sandbox.filter(([n]) => n !== 'setup' && n !== 'migrate')) {
      assert.equal(s.environment!.VOUCH_ENVIRONMENT, 'sandbox', name);
      assert.equal(s.environment!.PROVIDER_BASE_URL, 'http://provider-sim:8090', name);
    }
    assert.deepEqual(compose.services['api-sandbox']!.ports, ['127.0.0.1:3000:3000']);
    // both profiles use the same databases, volumes and queues: docs/operations.md runs the sandbox as a project of its own
    assert.match(readme, /docker compose -p vouch-sandbox --profile sandbox up/);
    assert.doesNotMatch(readme, /docker compose --profile sandbox/);
  });

  it('publishes nothing unauthenticated beyond loopback: Temporal and its UI on 127.0.0.1, PostgreSQL not at all', () => {
    for (const name of ['temporal', 'temporal-ui']) {
      const ports = compose.services[name]!.ports ?? [];
      assert.ok(ports.length > 0 && ports.every((p) => p.startsWith('127.0.0.1:')), `${name}: ${ports.join(', ')}`);
    }
    assert.equal(compose.services.postgres!.ports, undefined);
    for (const [name, s] of services) {
      for (const p of s.ports ?? [])
        if (!p.startsWith('127.0.0.1:')) assert.equal(name, 'api', `only the deployed API is published on the network (${name}: ${p})`);
    }
  });

  it("migrates as the schema's owner in the migrate job alone; every other service runs as the service role, which is no superuser", async () => {
    const user = (url: string) => decodeURIComponent(new URL(url).username);
    const migrate = compose.services.migrate!;
    assert.deepEqual(migrate.command, ['node', 'cli/vouch.ts', 'db', 'migrate']);
    assert.equal(user(migrate.environment!.DATABASE_MIGRATION_URL!), 'vouch_owner');
    const depends = (name: string) => (compose.services[name] as { depends_on?: Record<string, { condition: string }> }).depends_on ?? {};
    for (const [name, s] of vouch.filter(([n]) => n !== 'migrate' && n !== 'setup' && n !== 'provider-sim')) {
      assert.equal(s.environment!.DATABASE_MIGRATION_URL, undefined, `${name} holds no owner's credentials`);
      assert.equal(user(s.environment!.DATABASE_URL!), 'vouch', name);
      assert.equal(depends(name).migrate?.condition, 'service_completed_successfully', `${name} starts on a migrated schema`);
    }
    const init = await readFile(path.join(root, 'docker', 'postgres-init.sql'), 'utf8');
    assert.match(init, /CREATE ROLE vouch_owner WITH LOGIN/);
    assert.match(init, /CREATE ROLE vouch WITH LOGIN/);
    assert.match(init, /CREATE DATABASE vouch OWNER vouch_owner;/);
    assert.doesNotMatch(init, /SUPERUSER|BYPASSRLS/);
    assert.equal(compose.services.postgres!.environment!.POSTGRES_USER, 'postgres', 'the superuser makes the roles at first start, and nothing else');
  });

  it('makes every key ring the processes read in the setup service, once', () => {
    const setup = compose.services.setup!.command!.join(' ');
    const env = compose.services.api!.environment!;
    for (const [variable, command] of [
      ['WEBHOOK_SIGNING_KEYS_FILE', 'webhook-keys generate'],
      ['STANDARD_WEBHOOK_KEYS_FILE', 'standard-webhook-keys generate'],
      ['SIGNED_PAYLOAD_KEYS_FILE', 'signed-payload-keys generate'],
      ['AUDIT_CHECKPOINT_KEYS_FILE', 'audit-checkpoint-keys generate'],
      ['PAYLOAD_CODEC_KEYS_FILE', 'payload-keys generate'],
    ] as const) {
      assert.ok(env[variable], `${variable} is set`);
      assert.ok(setup.includes(command), `setup runs "vouch ${command}"`);
    }
  });

  it('gives the Vouch services only variables they read (or the AWS SDK does), and stops them within their grace', () => {
    for (const [name, s] of vouch) {
      for (const variable of Object.keys(s.environment ?? {})) {
        assert.ok(SETTING_NAMES.includes(variable) || variable.startsWith('AWS_'), `${name}: ${variable} is not a setting of runtime/config.ts`);
      }
      if (name !== 'setup') {
        const grace = Number(s.stop_grace_period!.replace(/s$/, '')) * 1000;
        assert.ok(grace > loadConfig({}).shutdownGraceMs, `${name}: stop_grace_period ${s.stop_grace_period} leaves room for SHUTDOWN_GRACE_MS`);
      }
    }
  });
});
