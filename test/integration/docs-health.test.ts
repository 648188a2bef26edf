// The OpenAPI document and docs page are built from the routes that validate requests; /health
// reports the database and Temporal.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { listen } from '../../api/server.ts';
import { createLogger } from '../../runtime/logger.ts';
import type { Db } from '../../store/db.ts';
import { HEALTH_MAX_AGE_MS } from '../../usecases/health.ts';
import { startStack, testKeyRings, type Stack } from '../helpers/stack.ts';

describe('GET /openapi.json and /docs', () => {
  let stack: Stack;
  let doc: any;
  before(async () => {
    stack = await startStack();
    doc = (await stack.request('GET', '/openapi.json')).body;
  });
  after(() => stack.close());

  it('is an OpenAPI 3.1 document with every endpoint and the API key scheme', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(doc.components.securitySchemes.apiKey, { type: 'apiKey', in: 'header', name: 'x-vouch-api-key' });
    const ops = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods as object).map((m) => `${m.toUpperCase()} ${path}`));
    for (const op of [
      'POST /entity',
      'GET /entity',
      'GET /entity/{entityId}',
      'DELETE /entity/{entityId}',
      'GET /features',
      'GET /feature/{featureId}/requirement',
      'GET /health',
    ]) {
      assert.ok(ops.includes(op), `${op} documented`);
    }
  });

  it('documents the same rules the API enforces', () => {
    const create = doc.paths['/entity'].post;
    const body = create.requestBody.content['application/json'].schema;
    assert.deepEqual(body.required.sort(), ['externalId', 'type']);
    assert.equal(body.additionalProperties, false);
    assert.equal(body.properties.externalId.maxLength, 255);
    assert.deepEqual(body.properties.type.enum, ['INDIVIDUAL', 'BUSINESS']);
    assert.match(create.responses['409'].description, /0702000200/);
    assert.match(create.responses['401'].description, /0000000100/);
    const list = doc.paths['/entity'].get;
    const names = list.parameters.map((p: any) => `${p.in}:${p.name}:${p.required}`);
    assert.deepEqual(names.sort(), ['header:Accept-Version:true', 'query:limit:false', 'query:page:false']);
    const path = doc.paths['/entity/{entityId}'].get.parameters[0];
    assert.deepEqual([path.in, path.name, path.required, path.schema.format], ['path', 'entityId', true, 'uuid']);
    assert.deepEqual(doc.paths['/health'].get.security, []);
  });

  it('documents the bounds and forms the API enforces (found missing by Schemathesis)', () => {
    for (const [path, method] of [
      ['/entity', 'get'],
      ['/features', 'get'],
      ['/notification', 'get'],
      ['/notification/{notificationId}/deliveries', 'get'],
      ['/events/{eventId}/deliveries', 'get'],
    ] as const) {
      const params = Object.fromEntries(doc.paths[path][method].parameters.map((p: any) => [p.name, p.schema]));
      assert.deepEqual([params.page.type, params.page.minimum], ['integer', 1], `${path} page`);
      assert.deepEqual([params.limit.type, params.limit.minimum, params.limit.maximum], ['integer', 1, 100], `${path} limit`);
    }
    // every operation with a JSON body says it answers 415 (another Content-Type) and 413
    for (const [path, methods] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        if (!op.requestBody?.content?.['application/json']) continue;
        assert.ok(op.responses['415'] && op.responses['413'], `${method.toUpperCase()} ${path} documents 415 and 413`);
      }
    }
    const subscription = doc.paths['/notification'].post.requestBody.content['application/json'].schema;
    assert.equal(subscription.properties.notificationTypes.uniqueItems, true);
    assert.equal(subscription.properties.webhookUrl.format, 'uri');
    const upload = Object.fromEntries(doc.paths['/entity/kyc/import/batch'].post.parameters.map((p: any) => [p.name, p.schema]));
    assert.ok(
      new RegExp(upload['X-Provider'].pattern).test('SumSub') && !new RegExp(upload['X-Provider'].pattern).test(''),
      'X-Provider: a supported provider, any case',
    );
    assert.deepEqual([upload['Idempotency-Key'].minLength, upload['Idempotency-Key'].maxLength], [1, 255]);
  });

  it('serves the reference page, which loads only our own scripts, under a policy that allows nothing else', async () => {
    const res = await stack.request('GET', '/docs');
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    const scripts = [...res.text.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!);
    assert.deepEqual(
      scripts.map((a) => a.match(/src="([^"?]+)/)?.[1]),
      ['/docs/scalar.js', '/docs/init.js'],
      'no inline script, nothing from another origin',
    );
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /connect-src 'self'/);
  });

  it("serves Scalar's own browser bundle, byte for byte, and a start script that reads /openapi.json", async () => {
    const bundle = await fetch(`${stack.url}/docs/scalar.js`);
    assert.match(bundle.headers.get('content-type') ?? '', /javascript/);
    const served = Buffer.from(await bundle.arrayBuffer());
    const shipped = await readFile(new URL('../../node_modules/@scalar/api-reference/dist/browser/standalone.js', import.meta.url));
    assert.ok(served.equals(shipped), 'the file of the installed @scalar/api-reference');
    const init = await (await fetch(`${stack.url}/docs/init.js`)).text();
    assert.match(init, /Scalar\.createApiReference\('#app', \{"url":"\/openapi\.json","withDefaultFonts":false,"telemetry":false/);
  });

  it('carries the interface release as its version (spec 9.2) and a webhooks section with every subscribable type, and the test event', () => {
    assert.equal(doc.info.version, '1.1.0');
    assert.deepEqual(Object.keys(doc.webhooks).sort(), [
      'account_status_change',
      'feature_access_change',
      'kyb_status_change',
      'new_feature',
      'reminder',
      'test',
      'verification_status_change',
    ]);
  });

  it('puts the error table in the document, where the reference shows it', () => {
    assert.match(doc.info.description, /\| `0702000200` \| 409 \|/);
    assert.match(doc.info.description, /\| `0000000999` \| 500 \|/);
  });
});

describe('GET /health', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.close());

  it('is 200 with both dependencies answering', async () => {
    const res = await stack.request('GET', '/health');
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'ok');
    assert.equal(res.body.database.status, 'ok');
    assert.equal(res.body.temporal.status, 'ok');
    assert.equal(res.body.signingKeys.status, 'ok');
    assert.ok(Date.parse(res.body.signingKeys.endsAt) > Date.now() + 30 * 86_400_000);
  });

  it('probes the database and Temporal once per HEALTH_MAX_AGE_MS however many ask: a flood costs them a probe a second, not one a request', async () => {
    let pings = 0;
    const db = Object.assign(Object.create(stack.db) as Db, { ping: () => (pings++, stack.db.ping()) });
    const api = await listen({ config: stack.config, db, temporal: stack.temporal, log: createLogger('silent', 'vouch-test'), keys: testKeyRings() }, 0);
    try {
      const started = Date.now();
      const statuses = await Promise.all(Array.from({ length: 200 }, () => fetch(`${api.url}/health`).then((r) => r.status)));
      const windows = Math.floor((Date.now() - started) / HEALTH_MAX_AGE_MS) + 1;
      assert.deepEqual([...new Set(statuses)], [200]);
      assert.ok(pings >= 1 && pings <= windows, `${pings} probes for 200 requests in ${windows} window(s)`);
      // an answer is at most HEALTH_MAX_AGE_MS old (and the probe's time): the next request after it probes again
      await new Promise((r) => setTimeout(r, HEALTH_MAX_AGE_MS + 50));
      const before = pings;
      assert.equal((await fetch(`${api.url}/health`)).status, 200);
      assert.equal(pings, before + 1, 'a fresh probe once the last answer is older than HEALTH_MAX_AGE_MS');
    } finally {
      await api.close();
    }
  });

  it('is 503 and says Temporal is degraded when it does not answer, without its address or the error; the cause is logged with the request id', async () => {
    const unreachable = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500 }) });
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, next) {
        for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l));
        next();
      },
    });
    const api = await listen(
      { config: stack.config, db: stack.db, temporal: unreachable, log: createLogger('info', 'vouch-test', sink), keys: testKeyRings() },
      0,
    );
    try {
      const res = await fetch(`${api.url}/health`);
      const text = await res.text();
      const body = JSON.parse(text);
      assert.equal(res.status, 503);
      assert.deepEqual(body, {
        status: 'degraded',
        database: { status: 'ok', latencyMs: body.database.latencyMs },
        temporal: { status: 'degraded' },
        signingKeys: { status: 'ok', endsAt: body.signingKeys.endsAt },
      });
      assert.doesNotMatch(text, /127\.0\.0\.1|5432|connect|deadline|error/i, 'no address, no error text');
      const logged = lines.find((l) => l.dependency === 'temporal');
      assert.ok(logged, 'the cause is in the log');
      assert.equal(logged.requestId, res.headers.get('x-request-id'));
      // requests that share one probe's answer (within HEALTH_MAX_AGE_MS) each find the cause by their own id
      const shared = await Promise.all([0, 1].map(() => fetch(`${api.url}/health`)));
      for (const r of shared) {
        assert.equal(r.status, 503);
        await r.arrayBuffer();
        assert.ok(
          lines.some((l) => l.dependency === 'temporal' && l.requestId === r.headers.get('x-request-id')),
          'the cause is logged with this request too',
        );
      }
    } finally {
      await api.close();
    }
  });
});
