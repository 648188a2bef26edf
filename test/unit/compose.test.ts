// docker-compose.yml is safe by default (issue 18): nothing here runs Docker, so its rules are read
// from the file itself — staging semantics unless told otherwise, the secrets a staging deployment
// must supply required, nothing unauthenticated published beyond loopback, every key ring made by
// the setup service, every variable one this service reads; and the sandbox override keeps the
// sandbox on this host.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { SETTING_NAMES } from '../../runtime/config.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
type Service = { environment?: Record<string, string>; ports?: string[]; command?: string[]; expose?: string[] };
const load = (file: string) =>
  parse(readFileSync(path.join(root, file), 'utf8'), { merge: true, customTags: [{ tag: '!override', collection: 'seq', resolve: (v: unknown) => v }] }) as {
    services: Record<string, Service>;
  };
const compose = load('docker-compose.yml');
const env = compose.services.api!.environment!;
/** What `${NAME:-default}` / `${NAME:?message}` gives when NAME is unset: the default, or an error. */
const whenUnset = (value: string) => {
  const m = value.match(/^\$\{(\w+)(:-|:\?)(.*)\}$/);
  if (!m) return { value };
  return m[2] === ':-' ? { value: m[3]! } : { required: m[3]! };
};

describe('docker-compose.yml', () => {
  it('runs with staging semantics unless .env says otherwise', () => {
    for (const name of ['setup', 'worker', 'api']) assert.equal(whenUnset(compose.services[name]!.environment!.VOUCH_ENVIRONMENT!).value, 'staging', name);
  });

  it("requires the secrets a staging deployment must supply: the codec's and /metrics's tokens and the download links' secret", () => {
    for (const name of ['CODEC_ACCESS_TOKEN', 'METRICS_TOKEN', 'FILE_LINK_SECRET', 'PROVIDER_BASE_URL', 'PROVIDER_APP_TOKEN', 'PROVIDER_SECRET_KEY']) {
      assert.ok(whenUnset(env[name]!).required, `${name} must be set (\${${name}:?…}), not default to empty`);
    }
  });

  it('publishes nothing unauthenticated beyond loopback: Temporal and its UI on 127.0.0.1, PostgreSQL not at all', () => {
    for (const name of ['temporal', 'temporal-ui']) {
      const ports = compose.services[name]!.ports ?? [];
      assert.ok(ports.length > 0 && ports.every((p) => p.startsWith('127.0.0.1:')), `${name}: ${ports.join(', ')}`);
    }
    assert.equal(compose.services.postgres!.ports, undefined);
    assert.equal(compose.services.worker!.ports, undefined, 'worker metrics are on the internal network only (expose)');
    for (const [name, s] of Object.entries(compose.services)) {
      for (const p of s.ports ?? []) if (!p.startsWith('127.0.0.1:')) assert.equal(name, 'api', `only the API is published on the network (${name}: ${p})`);
    }
  });

  it('makes every key ring the processes read in the setup service, once', () => {
    const setup = compose.services.setup!.command!.join(' ');
    for (const [variable, command] of [
      ['WEBHOOK_SIGNING_KEYS_FILE', 'webhook-keys generate'],
      ['STANDARD_WEBHOOK_KEYS_FILE', 'standard-webhook-keys generate'],
      ['SIGNED_PAYLOAD_KEYS_FILE', 'signed-payload-keys generate'],
      ['PAYLOAD_CODEC_KEYS_FILE', 'payload-keys generate'],
    ] as const) {
      assert.ok(env[variable], `${variable} is set`);
      assert.ok(setup.includes(command), `setup runs "vouch ${command}"`);
    }
  });

  it('sets only variables this service reads (or the AWS SDK does)', () => {
    for (const name of Object.keys(env)) assert.ok(SETTING_NAMES.includes(name) || name.startsWith('AWS_'), `${name} is not a setting of runtime/config.ts`);
  });

  it('docker-compose.sandbox.yml: a sandbox whose API is published on this host only', () => {
    const sandbox = load('docker-compose.sandbox.yml');
    for (const name of ['setup', 'worker', 'api']) assert.equal(sandbox.services[name]!.environment!.VOUCH_ENVIRONMENT, 'sandbox');
    assert.deepEqual(sandbox.services.api!.ports, ['127.0.0.1:3000:3000']);
    assert.match(
      readFileSync(path.join(root, 'docker-compose.sandbox.yml'), 'utf8'),
      /ports: !override/,
      "replaces the base file's ports rather than adding to them",
    );
  });
});
