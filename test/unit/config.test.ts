import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, SETTING_NAMES } from '../../runtime/config.ts';
import { configTableMarkdown, configTableRows, secretsTableMarkdown } from '../../scripts/print-config-table.ts';
import { markedTable } from '../helpers/docs.ts';

describe('configuration', () => {
  it('has embedded defaults', () => {
    const c = loadConfig({});
    assert.equal(c.http.port, 3000);
    assert.equal(c.database.url, undefined);
    assert.equal(c.temporal.address, '127.0.0.1:7233');
    assert.equal(c.temporal.addressGiven, false);
    assert.equal(c.temporal.uiPort, 8233);
    assert.equal(c.temporal.providerRateLimitPerSecond, 10);
    assert.equal(c.temporal.taskQueue, 'vouch');
    assert.equal(c.temporal.providerTaskQueue, 'vouch-provider');
    assert.equal(c.environment, 'sandbox');
  });

  it('reads overrides from the environment', () => {
    const c = loadConfig({
      PORT: '8080',
      PROVIDER_RATE_LIMIT_PER_SECOND: '50',
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_TLS: 'true',
      DATABASE_URL: 'postgres://u@db:5432/vouch',
    });
    assert.equal(c.http.port, 8080);
    assert.equal(c.temporal.providerRateLimitPerSecond, 50);
    assert.equal(c.temporal.addressGiven, true);
    assert.equal(c.temporal.tls, true);
    assert.equal(c.database.url, 'postgres://u@db:5432/vouch');
  });

  for (const [name, value] of [
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['PROVIDER_RATE_LIMIT_PER_SECOND', '0'],
    ['TEMPORAL_TLS', 'maybe'],
    ['DATABASE_URL', 'not a url'],
    ['VOUCH_ENVIRONMENT', 'prod'],
  ]) {
    it(`refuses ${name}=${value} and names it`, () => {
      assert.throws(
        () => loadConfig({ [name!]: value }),
        (err: Error) => err instanceof ConfigError && err.message.includes(name!),
      );
    });
  }
});

describe('the configuration table', () => {
  it("keeps the operations guide's configuration table equal to the settings", () => {
    const table = markedTable('docs/operations.md', 'config-table');
    assert.equal(table, configTableMarkdown(), 'run npm run docs:config and paste its output into docs/operations.md');
  });

  it("keeps the operations guide's table of each process's secrets equal to runtime/secrets-by-role.ts", () => {
    const table = markedTable('docs/operations.md', 'secrets-table');
    assert.equal(table, secretsTableMarkdown(), 'run npm run docs:config -- secrets and paste its output into docs/operations.md');
  });

  it('documents every variable the schema parses, in a row with a meaning and a default', () => {
    const rows = configTableRows();
    assert.deepEqual(
      rows.flatMap((r) => r.names),
      SETTING_NAMES,
    );
    for (const r of rows) {
      assert.ok(r.meaning.trim(), `say what ${r.names.join(', ')} means`);
      assert.ok(
        r.defaults.every((d) => d.trim()),
        `say the default of ${r.names.join(', ')}`,
      );
    }
  });

  // loadConfig reads the variables through the schema (one per setting, so documented above); this catches a direct read
  // of the environment (like TEMPORAL_ADDRESS for addressGiven) of a variable that is not a setting.
  for (const given of [{}, { TEMPORAL_ADDRESS: 'temporal:7233', FILE_STORE: 's3', S3_BUCKET: 'vouch-files', S3_ENDPOINT: 'http://s3:9000' }]) {
    it(`reads no undocumented variable from the environment (${Object.keys(given).join(', ') || 'none set'})`, () => {
      const read = new Set<string>();
      const env = new Proxy({ ...given } as NodeJS.ProcessEnv, {
        get: (target, key) => {
          if (typeof key === 'string') read.add(key);
          return Reflect.get(target, key);
        },
      });
      loadConfig(env);
      const documented = new Set(configTableRows().flatMap((r) => r.names));
      assert.deepEqual(
        [...read].filter((name) => !documented.has(name)),
        [],
      );
      assert.ok(read.size > 0 || Object.keys(given).length === 0, 'the proxy saw the reads');
    });
  }
});
