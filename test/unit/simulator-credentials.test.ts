// The compose sandbox's provider credentials: read from the simulator's file on the shared volume,
// in the sandbox only, and never over credentials that were given.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../runtime/config.ts';
import { SIMULATOR_CREDENTIALS_FILE, withSimulatorCredentials } from '../../runtime/simulator-credentials.ts';

describe('withSimulatorCredentials', () => {
  let dir: string;
  const recipient = { clientId: 'vouch', appToken: 'sbx:app', secretKey: 'sim-secret', webhookSecret: 'sim-hook' };
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'vouch-simcreds-'));
    await writeFile(path.join(dir, SIMULATOR_CREDENTIALS_FILE), JSON.stringify({ recipient, donor: { ...recipient, clientId: 'donor' } }));
  });
  after(() => rm(dir, { recursive: true, force: true }));
  const configWith = (env: Record<string, string>) => loadConfig({ DATA_DIR: dir, PROVIDER_BASE_URL: 'http://provider-sim:8090', ...env });

  it("fills in our account in a sandbox on the simulator: the app token, its secret and the callbacks' secret", () => {
    const config = configWith({ VOUCH_ENVIRONMENT: 'sandbox' });
    withSimulatorCredentials(config);
    assert.equal(config.provider.appToken, 'sbx:app');
    assert.equal(config.provider.secretKey, 'sim-secret');
    assert.equal(config.provider.webhookSecret, 'sim-hook');
  });

  for (const [why, env] of [
    ['outside the sandbox', { VOUCH_ENVIRONMENT: 'staging' }],
    ['over an app token that was given', { VOUCH_ENVIRONMENT: 'sandbox', PROVIDER_APP_TOKEN: 'given', PROVIDER_SECRET_KEY: 'given' }],
    ['for another client id', { VOUCH_ENVIRONMENT: 'sandbox', PROVIDER_CLIENT_ID: 'someone-else' }],
    ['without a provider address', { VOUCH_ENVIRONMENT: 'sandbox', PROVIDER_BASE_URL: '' }],
    ['without the file', { VOUCH_ENVIRONMENT: 'sandbox', DATA_DIR: os.tmpdir() }],
  ] as const) {
    it(`changes nothing ${why}`, () => {
      const config = configWith(env);
      const before = structuredClone(config.provider);
      withSimulatorCredentials(config);
      assert.deepEqual(config.provider, before);
    });
  }
});
