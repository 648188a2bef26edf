// GET /metrics as Prometheus scrapes it: HTTP requests by route pattern and status with latency,
// shared records by outcome and category, provider calls by operation and outcome with latency,
// webhook attempts and delivery lag, Node's process metrics and the Temporal SDK core's own; open in
// the sandbox, and outside it only for the bearer token.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { bulkEntities, bulkTokens } from '../helpers/bulk.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { stagingEnv, startStack, type Stack } from '../helpers/stack.ts';

const value = (text: string, line: RegExp) => {
  const found = text.split('\n').find((l) => line.test(l));
  return found ? Number(found.split(' ').at(-1)) : undefined;
};

describe('metrics', () => {
  let stack: Stack;
  let receiver: Receiver;
  before(async () => {
    stack = await startStack({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true' } });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await stack.close();
  });

  it('counts requests, records, provider calls and webhook attempts, with the Temporal SDK core metrics beside them', async () => {
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'Metrics' });
    await stack.request('POST', '/notification', {
      key,
      json: { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: receiver.url },
    });
    assert.equal((await stack.request('GET', '/entity/00000000-0000-4000-8000-000000000000', { key })).status, 404);
    await bulkEntities(stack.db, businessId, ['m-1', 'm-2']);
    const [ok] = bulkTokens(stack.sim!, 'metrics-donor', stack.recipient!.clientId, ['complete']);
    assert.equal((await stack.request('POST', '/entity/kyc/import/sync', { key, json: { externalId: 'm-1', shareToken: ok } })).status, 200);
    assert.equal((await stack.request('POST', '/entity/kyc/import/sync', { key, json: { externalId: 'm-2', shareToken: 'no-such-token' } })).status, 400);
    await receiver.waitFor(1);

    const res = await fetch(`${stack.url}/metrics`); // no API key: Prometheus scrapes it
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    assert.ok(
      (value(text, /^vouch_http_requests_total\{route="\/entity\/:entityId",method="GET",status="404"\}/) ?? 0) >= 1,
      'HTTP requests by route pattern and status',
    );
    assert.match(text, /^vouch_http_request_duration_seconds_bucket\{le="0\.05",route="\/entity\/kyc\/import\/sync",method="POST",status="200"\}/m);
    assert.equal(value(text, /^vouch_records_total\{kind="sync",outcome="succeeded",category=""\}/), 1);
    assert.equal(value(text, /^vouch_records_total\{kind="sync",outcome="failed",category="TOKEN_EXPIRED_OR_INVALID"\}/), 1);
    assert.ok(
      (value(text, /^vouch_provider_calls_total\{operation="POST \/resources\/api\/reusableIdentity\/reuse",outcome="ok"\}/) ?? 0) >= 1,
      'provider calls by operation and outcome',
    );
    assert.ok((value(text, /^vouch_provider_calls_total\{operation="POST \/resources\/api\/reusableIdentity\/reuse",outcome="token_invalid"\}/) ?? 0) >= 1);
    assert.match(text, /^vouch_provider_call_duration_seconds_count\{operation="POST \/resources\/api\/reusableIdentity\/reuse",outcome="ok"\} \d+/m);
    assert.ok((value(text, /^vouch_webhook_attempts_total\{outcome="delivered"\}/) ?? 0) >= 1, 'webhook attempts by outcome');
    assert.ok((value(text, /^vouch_webhook_delivery_lag_seconds_count /) ?? 0) >= 1, 'delivery lag');
    assert.match(text, /^vouch_process_cpu_user_seconds_total /m);
    assert.ok((value(text, /^vouch_workflow_threads /) ?? 0) >= 1, 'the workflow threads of the workers in this process');
    assert.ok((value(text, /^vouch_workflow_threads_heap_used_bytes /) ?? 0) > 1024 * 1024, "the workflow threads' heap in use");
    assert.match(text, /^temporal_[a-z_]+/m, "the Temporal SDK core's own metrics");
    assert.doesNotMatch(text, /route="\/entity\/00000000/, 'routes are patterns, never raw paths with ids');

    // the Grafana dashboard in the repository queries only metrics this serves
    const dashboard = JSON.parse(readFileSync(new URL('../../grafana/vouch-dashboard.json', import.meta.url), 'utf8')) as {
      panels: { targets?: { expr: string }[] }[];
    };
    const queried = new Set(dashboard.panels.flatMap((p) => p.targets ?? []).flatMap((t) => t.expr.match(/\b(vouch|temporal)_[a-z_]+/g) ?? []));
    assert.ok(queried.size >= 10, `metrics the dashboard queries: ${[...queried].join(', ')}`);
    for (const name of queried) assert.match(text, new RegExp(`^${name}[{ ]`, 'm'), `the dashboard queries ${name}, which /metrics does not serve`);
  });

  it('counts a record whose provider calls failed until the retries ran out, once', async () => {
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'Metrics outage' });
    await bulkEntities(stack.db, businessId, ['m-out']);
    const [token] = bulkTokens(stack.sim!, 'metrics-outage-donor', stack.recipient!.clientId, ['complete']);
    const counted = async () => {
      const text = await (await fetch(`${stack.url}/metrics`)).text();
      return value(text, /^vouch_records_total\{kind="sync",outcome="failed",category="PROVIDER_UNAVAILABLE"\}/) ?? 0;
    };
    const before = await counted();
    stack.sim!.state.faults = { ...stack.sim!.state.faults, errorRate: 1, pathPattern: 'reusableIdentity' };
    try {
      const res = await stack.request('POST', '/entity/kyc/import/sync', { key, json: { externalId: 'm-out', shareToken: token } });
      assert.deepEqual([res.status, res.body.code], [503, '0704000600'], res.text);
    } finally {
      stack.sim!.state.faults = { ...stack.sim!.state.faults, errorRate: 0, pathPattern: '' };
    }
    assert.equal(await counted(), before + 1);
  });

  it('outside the sandbox answers only the holder of METRICS_TOKEN', async () => {
    const token = randomBytes(24).toString('hex');
    const staging = await startStack({ env: stagingEnv({ METRICS_TOKEN: token }) });
    try {
      const none = await staging.request('GET', '/metrics');
      assert.deepEqual([none.status, none.body.code], [401, '0710000300']);
      assert.equal((await staging.request('GET', '/metrics', { headers: { Authorization: 'Bearer nope' } })).status, 401);
      const right = await fetch(`${staging.url}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
      assert.equal(right.status, 200);
      assert.match(await right.text(), /vouch_http_requests_total/);
    } finally {
      await staging.close();
    }
  });
});
