// The Temporal server restarted in the middle of a batch: the status endpoint keeps answering from
// PostgreSQL while it is down, and the batch completes once it is back, every record imported once.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTemporalDevServer, type TemporalDevServer } from '../../dev/temporal-dev-server.ts';
import { bulkEntities, bulkTokens } from '../helpers/bulk.ts';
import { csvOf, upload, waitForBatch } from '../helpers/imports.ts';
import { freePort } from '../helpers/ports.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

describe('a Temporal server restart in the middle of a batch', () => {
  let dir: string;
  let port: number;
  let temporal: TemporalDevServer | undefined;
  let stack: Stack | undefined;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'vouch-temporal-'));
    port = await freePort();
    temporal = await startTemporalDevServer({ port, dataDir: dir, headless: true });
    stack = await startStack({ workers: true, env: { TEMPORAL_ADDRESS: temporal.address, PROVIDER_RATE_LIMIT_PER_SECOND: '20' } });
    stack.sim!.state.updateClient(stack.recipient!.clientId, { limits: { postPer5s: 1e9, getPer5s: 1e9 } });
  });
  after(async () => {
    await stack?.close();
    await temporal?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers status while Temporal is down and completes the batch after it returns', async () => {
    const s = stack!;
    const { apiKey: key, businessId } = await s.newBusiness({ name: 'Restart' });
    const ids = Array.from({ length: 150 }, (_, i) => `restart-${i}`);
    await bulkEntities(s.db, businessId, ids);
    const tokens = bulkTokens(
      s.sim!,
      'restart-donor',
      s.recipient!.clientId,
      ids.map(() => 'complete'),
    );
    const res = await upload(
      s,
      key,
      csvOf(
        'externalId,shareToken',
        ids.map((e, i) => [e, tokens[i]!]),
      ),
    );
    assert.equal(res.status, 201, res.text);
    await eventually(
      '30 records processed',
      async () => (await s.request('GET', `/entity/kyc/import/batch/${res.body.batchId}`, { key })).body.processedRecords >= 30,
      {
        timeoutMs: 120_000,
      },
    );
    await temporal!.stop();
    temporal = undefined;
    const during = await s.request('GET', `/entity/kyc/import/batch/${res.body.batchId}`, { key });
    assert.equal(during.status, 200);
    assert.equal(during.body.status, 'in_progress');
    assert.equal((await s.request('GET', '/health')).status, 503, 'health says Temporal is down');
    await new Promise((r) => setTimeout(r, 2000));
    temporal = await startTemporalDevServer({ port, dataDir: dir, headless: true });
    const done = await waitForBatch(s, key, res.body.batchId, 180_000);
    assert.equal(done.status, 'completed');
    assert.equal(done.summary.successfulRecords, 150, JSON.stringify(done.summary.errors.slice(0, 3)));
    for (const t of tokens) assert.equal(s.sim!.state.stats.imports[t]?.succeeded, 1);
  });
});
