import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../runtime/config.ts';

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
    const c = loadConfig({ PORT: '8080', PROVIDER_RATE_LIMIT_PER_SECOND: '50', TEMPORAL_ADDRESS: 'temporal:7233', TEMPORAL_TLS: 'true', DATABASE_URL: 'postgres://u@db:5432/vouch' });
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
      assert.throws(() => loadConfig({ [name!]: value }), (err: Error) => err instanceof ConfigError && err.message.includes(name!));
    });
  }
});
