// /docs in a real browser (Debian's Chromium, driven by playwright-core): Scalar renders our
// document, operations and the error table are on the page, and no request leaves our origin.
import assert from 'node:assert/strict';
import { access } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { startStack, type Stack } from '../helpers/stack.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('/docs in a browser', () => {
  let stack: Stack;
  let browser: Browser;
  before(async () => {
    await access(CHROMIUM).catch(() => {
      throw new Error(`This test drives Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH.`);
    });
    stack = await startStack({ workers: false });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('renders every operation and the error table from /openapi.json, with nothing fetched from elsewhere', async () => {
    const page = await browser.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    const res = await page.goto(`${stack.url}/docs`);
    assert.equal(res?.status(), 200);
    // the document's own text, rendered by Scalar (it fetched /openapi.json and drew the page)
    await page.getByText('Vouch compliance onboarding API').first().waitFor({ timeout: 30_000 });
    await page.getByText('Upload a CSV of share tokens (batch import)').first().waitFor({ timeout: 30_000 });
    const text = await page.locator('body').innerText();
    for (const expected of [
      'Create an entity',
      'Share and onboard one applicant now',
      'Register a webhook endpoint',
      '0702000200',
      '0705000300',
      'x-vouch-api-key',
    ]) {
      assert.ok(text.includes(expected), `the page shows "${expected}"`);
    }
    // an error code and its status are read whole: each drawn on one line, not broken into a
    // column of digits by a narrow cell
    const linesOf = (text: string) =>
      page
        .getByText(text, { exact: true })
        .first()
        .evaluate((el) => {
          const range = el.ownerDocument.createRange();
          range.selectNodeContents(el);
          return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
        });
    assert.equal(await linesOf('0702000200'), 1, 'the error table draws each code on one line');
    assert.equal(await linesOf('401'), 1, 'and each HTTP status');
    assert.ok(
      requests.some((u) => u.endsWith('/openapi.json')),
      'the renderer read our document',
    );
    const origin = new URL(stack.url).origin;
    const elsewhere = requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:'));
    assert.deepEqual(elsewhere, [], 'no request to another origin (no CDN, fonts, telemetry)');
    assert.deepEqual(problems, [], 'no script error, nothing blocked by the page policy, no missing file');
    await page.close();
  });
});
