// Rules of the interface that had no test of their own (issue 19, point 9): the provider rate of
// 10 requests a second counted at the provider, re-sharing by batch on renewal, the decision told
// by no endpoint but the webhook, TLS certificates checked on delivery, 401 on every batch endpoint,
// and an unknown Accept-Version on /features and /notification. Real workers, the simulator over HTTP.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createWebhookSender } from '../../activities/webhook-send.ts';
import { createEntities, csvOf, donorAt, upload, waitForBatch, type Donor } from '../helpers/imports.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { startStack, testWebhookKeys, type Stack } from '../helpers/stack.ts';

const RATE = 10;

describe('interface rules', () => {
  let stack: Stack;
  let key: string;
  let binKey: string;
  let binBusinessId: string;
  let donor: Donor;
  let n = 0;
  const ext = (label: string) => `${label}-${n++}`;

  before(async () => {
    // nothing but the provider limit holds the rows back: many at once, in one page
    stack = await startStack({ workers: true, env: { PROVIDER_RATE_LIMIT_PER_SECOND: String(RATE), BATCH_CONCURRENCY: '50', BATCH_PAGE_SIZE: '100' } });
    ({ apiKey: key } = await stack.newBusiness());
    ({ apiKey: binKey, businessId: binBusinessId } = await stack.newBusiness({ name: 'BIN', binSponsored: true }));
    donor = donorAt(stack);
  });
  after(() => stack.close());

  it('calls the provider at most 10 times in any second of a batch (counted where the calls arrive)', async () => {
    const ids = Array.from({ length: 45 }, () => ext('rate'));
    await createEntities(stack, key, ids);
    const rows = [];
    for (const id of ids) rows.push([id, await donor.token()]);
    const from = stack.sim!.state.now();
    const res = await upload(stack, key, csvOf('externalId,shareToken', rows));
    assert.equal(res.status, 201, res.text);
    const done = await waitForBatch(stack, key, res.body.batchId, 120_000);
    assert.deepEqual([done.status, done.failedRecords], ['completed', 0]);
    const times = stack.sim!.state.stats.importTimes.filter((t) => t >= from).sort((a, b) => a - b);
    assert.equal(times.length, ids.length, 'one import request per row');
    let most = 0;
    let at = 0;
    for (let i = 0, j = 0; i < times.length; i++) {
      while (times[i]! - times[j]! >= 1000) j++;
      if (i - j + 1 > most) [most, at] = [i - j + 1, j];
    }
    const gaps = times.slice(at, at + most).map((t, k, all) => (k === 0 ? 0 : t - all[k - 1]!));
    assert.ok(most <= RATE, `${most} import requests within one second; gaps (ms) ${gaps.join(' ')}`);
  });

  it('shares again by batch on renewal: the same externalId, a new share token and a new card processor token, decided again', async () => {
    const externalId = ext('renewal');
    const [entityId] = await createEntities(stack, binKey, [externalId]);
    for (const [i, cpt] of ['100000001', '100000002'].entries()) {
      const res = await upload(
        stack,
        binKey,
        csvOf('externalId,shareToken,applicantLevel,cardProcessorPublicToken', [[externalId, await donor.token(), '', cpt]]),
      );
      assert.equal(res.status, 201, res.text);
      const done = await waitForBatch(stack, binKey, res.body.batchId);
      assert.deepEqual([done.status, done.summary.successfulRecords], ['completed', 1], `share ${i + 1}`);
    }
    const accounts = await stack.db.query('SELECT 1 FROM kyc_accounts WHERE entity_id = $1', [entityId]);
    assert.equal(accounts.length, 2, 'two verifications, one per share');
    const [entity] = await stack.db.query<{ t: string }>('SELECT card_processor_public_token AS t FROM entities WHERE id = $1', [entityId]);
    assert.equal(entity!.t, '100000002', 'the new card processor token');
    const decisions = await stack.db.query("SELECT 1 FROM events WHERE business_id = $1 AND entity_id = $2 AND event_type = 'account_status_change'", [
      binBusinessId,
      entityId,
    ]);
    assert.equal(decisions.length, 2, 'each share decided, each by its own webhook event');
  });

  it('tells the decision by no endpoint but the webhook (1.4): no read carries APPROVED or REJECTED beyond the requirement statuses of 2.1', async () => {
    const [approved, rejected] = [ext('told-approved'), ext('told-rejected')];
    const [approvedId, rejectedId] = await createEntities(stack, key, [approved, rejected]);
    const sync1 = await stack.request('POST', '/entity/kyc/import/sync', { key, json: { externalId: approved, shareToken: await donor.token() } });
    await new Promise((r) => setTimeout(r, 400)); // the sync limit is 3 a second
    const sync2 = await stack.request('POST', '/entity/kyc/import/sync', {
      key,
      json: { externalId: rejected, shareToken: await donor.token('missing-address') },
    });
    assert.deepEqual([sync1.status, sync2.status], [200, 200], sync2.text);
    const events = await stack.db.query<{ s: string }>(
      "SELECT payload->'data'->>'status' AS s FROM events WHERE entity_id = ANY ($1) AND event_type = 'account_status_change' ORDER BY created_at",
      [[approvedId, rejectedId]],
    );
    assert.deepEqual(events.map((e) => e.s).sort(), ['APPROVED', 'REJECTED'], 'both were decided (and told by their events)');
    const batch = await upload(stack, key, csvOf('externalId,shareToken', [[rejected, await donor.token('missing-address')]]));
    const status = await waitForBatch(stack, key, batch.body.batchId);
    const reads = [
      sync1.body,
      sync2.body,
      status,
      (await stack.request('GET', `/entity/${approvedId}`, { key })).body,
      (await stack.request('GET', `/entity/${rejectedId}`, { key })).body,
      (await stack.request('GET', '/entity?limit=100', { key, headers: { 'Accept-Version': 'v1.0' } })).body,
      (await stack.request('GET', `/entity/${rejectedId}/signed-payload`, { key })).body,
    ];
    for (const body of reads) {
      const text = JSON.stringify(body, (k, v) => (k === 'submittedRequirements' ? (v as { status: string }[]).map(({ status: _s, ...r }) => r) : v));
      assert.doesNotMatch(text, /APPROVED|REJECTED|"decision"/, text.slice(0, 400));
    }
  });

  it(
    'checks the TLS certificate of every delivery: a self-signed receiver is refused (no ' +
      'request reaches it); outside development a loopback one is not even dialled',
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'vouch-tls-'));
      try {
        execFileSync(
          'openssl',
          [
            'req',
            '-x509',
            '-newkey',
            'rsa:2048',
            '-nodes',
            '-keyout',
            'key.pem',
            '-out',
            'cert.pem',
            '-days',
            '1',
            '-subj',
            '/CN=127.0.0.1',
            '-addext',
            'subjectAltName=IP:127.0.0.1',
          ],
          { cwd: dir, stdio: 'pipe' },
        );
        let requests = 0;
        const server = createServer({ key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) }, (_req, res) => {
          requests++;
          res.end('ok');
        });
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
        const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
        const target = { eventId: randomUUID(), body: '{"eventType":"account_status_change"}', url };
        try {
          // development allows loopback and plain HTTP, never an unchecked certificate
          const development = await createWebhookSender({ keys: testWebhookKeys(), allowInsecureUrls: true })(target);
          assert.deepEqual([development.httpStatus, development.error], [null, 'the TLS certificate is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT)']);
          const production = await createWebhookSender({ keys: testWebhookKeys(), allowInsecureUrls: false })(target);
          assert.equal(production.httpStatus, null);
          assert.match(production.error!, /public/);
          assert.equal(requests, 0, 'no request was made to the receiver');
          // the passing case: a receiver the sender can trust answers (plain HTTP, allowed in development only)
          const plain = await startReceiver();
          try {
            const ok = await createWebhookSender({ keys: testWebhookKeys(), allowInsecureUrls: true })({ ...target, url: plain.url });
            assert.deepEqual([ok.httpStatus, ok.error], [200, null]);
          } finally {
            await plain.close();
          }
        } finally {
          server.closeAllConnections();
          server.close();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('answers 401 on every batch endpoint: 0000000100 without a key, 0000000200 with an invalid one', async () => {
    const id = randomUUID();
    const calls: [string, string][] = [
      ['POST', '/entity/kyc/import/batch'],
      ['GET', `/entity/kyc/import/batch/${id}`],
      ['POST', `/entity/kyc/import/batch/${id}/cancel`],
      ['POST', `/entity/kyc/import/batch/${id}/retry`],
      ['GET', `/entity/kyc/import/batch/${id}/failed-rows`],
      ['POST', '/entity/kyc/import/sync'],
    ];
    for (const [method, url] of calls) {
      for (const [apiKey, code] of [
        [undefined, '0000000100'],
        ['vouch_sandbox_not-a-key', '0000000200'],
      ] as const) {
        const res = await fetch(`${stack.url}${url}`, { method, headers: apiKey ? { 'x-vouch-api-key': apiKey } : {} });
        const body = (await res.json()) as { code: string; parameter: string };
        assert.deepEqual([res.status, body.code, body.parameter], [401, code, 'x-vouch-api-key'], `${method} ${url}`);
      }
    }
  });

  it('refuses an unknown Accept-Version on /features and /notification (and a missing one), and takes every release the spec names', async () => {
    for (const url of ['/features', '/notification', '/entity']) {
      const missing = await stack.request('GET', url, { key });
      assert.deepEqual([missing.status, missing.body.code, missing.body.parameter], [400, '0000000400', 'Accept-Version'], url);
      for (const version of ['v2.0', 'v1.2', 'v1.0.3', '1.0', 'latest']) {
        const unknown = await stack.request('GET', url, { key, headers: { 'Accept-Version': version } });
        assert.deepEqual([unknown.status, unknown.body.code, unknown.body.parameter], [400, '0000000410', 'Accept-Version'], `${url} ${version}`);
        assert.match(unknown.body.message, /v1\.0/);
      }
      // 9.1 names v1.0; 9.2 the releases v1.0.1, v1.0.2 and v1.1.0, all served by this one representation
      for (const version of ['v1.0', 'v1.0.1', 'v1.0.2', 'v1.1', 'v1.1.0']) {
        const ok = await stack.request('GET', url, { key, headers: { 'Accept-Version': version } });
        assert.equal(ok.status, 200, `${url} ${version}`);
        assert.equal(ok.headers.get('content-version'), version);
      }
    }
  });
});
