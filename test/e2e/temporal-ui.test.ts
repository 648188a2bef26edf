// The operator's view: the Temporal Web UI (the dev server's, wired to our codec endpoint as
// `npm start` wires it), opened in headless Chromium, lists a batch found by its BatchId search
// attribute and shows the run's input decoded (the history holds it encrypted). A screenshot is kept
// as a test artifact (test-artifacts/temporal-ui-batch.png).
import assert from 'node:assert/strict';
import { access, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import pino from 'pino';
import { listen } from '../../api/server.ts';
import { batchWorkflowId } from '../../contract/batch-import.ts';
import { startTemporalDevServer, type TemporalDevServer } from '../../dev/temporal-dev-server.ts';
import { bulkEntities, bulkTokens } from '../helpers/bulk.ts';
import { csvOf, upload, waitForBatch } from '../helpers/imports.ts';
import { freePort } from '../helpers/ports.ts';
import { root } from '../helpers/processes.ts';
import { startStack, testKeyRings, type Stack } from '../helpers/stack.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.join(root, 'test-artifacts');

describe('the Temporal UI, as an operator uses it', () => {
  let temporal: TemporalDevServer;
  let stack: Stack;
  let codecApi: { close(): Promise<void> };
  let browser: Browser;
  before(async () => {
    await access(CHROMIUM).catch(() => {
      throw new Error(`This test drives Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH.`);
    });
    const [port, uiPort, codecPort] = [await freePort(), await freePort(), await freePort()];
    temporal = await startTemporalDevServer({ port, uiPort, uiCodecEndpoint: `http://127.0.0.1:${codecPort}/codec` });
    stack = await startStack({
      workers: true,
      env: { TEMPORAL_ADDRESS: temporal.address, CODEC_CORS_ORIGINS: `http://127.0.0.1:${uiPort},http://localhost:${uiPort}` },
    });
    // the same API on the port the UI was told about (its codec endpoint)
    codecApi = await listen({ config: stack.config, db: stack.db, temporal: stack.temporal, log: pino({ level: 'silent' }), keys: testKeyRings() }, codecPort);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await codecApi?.close();
    await stack?.close();
    await temporal?.stop();
  });

  it('finds a batch by its BatchId and shows its input decoded', async () => {
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'UI' });
    await bulkEntities(stack.db, businessId, ['ui-1']);
    const [token] = bulkTokens(stack.sim!, 'ui-donor', stack.recipient!.clientId, ['complete']);
    const res = await upload(stack, key, csvOf('externalId,shareToken', [['ui-1', token!]]));
    assert.equal(res.status, 201, res.text);
    const batchId = res.body.batchId as string;
    await waitForBatch(stack, key, batchId);

    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const codecCalls: number[] = [];
    page.on('response', (r) => {
      if (r.url().includes('/codec/decode')) codecCalls.push(r.status());
    });
    await mkdir(ARTIFACTS, { recursive: true });
    try {
      const query = encodeURIComponent(`BatchId="${batchId}"`);
      await page.goto(`${temporal.uiUrl}/namespaces/default/workflows?query=${query}`);
      const link = page.getByText(batchWorkflowId(batchId), { exact: true }).first();
      await link.waitFor({ timeout: 60_000 });
      await link.click();
      // the first run's input: { batchId, providerTaskQueue, … } — readable only once decoded
      await page.getByText(stack.config.temporal.providerTaskQueue).first().waitFor({ timeout: 60_000 });
      const text = await page.locator('body').innerText();
      assert.match(text, new RegExp(batchId));
      assert.doesNotMatch(text, /binary\/encrypted/, 'no payload is shown encrypted');
      assert.ok(codecCalls.length > 0 && codecCalls.every((s) => s === 200), `the UI decoded through our codec endpoint: ${codecCalls.join(', ')}`);
    } finally {
      await page.screenshot({ path: path.join(ARTIFACTS, 'temporal-ui-batch.png'), fullPage: true });
      await page.close();
    }
  });
});
