// Cross-cutting behaviour: authentication, the error catalogue, unknown routes, rate limits,
// request ids in logs, internal errors that leak nothing, and the feature catalog.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { buildApp } from '../../api/app.ts';
import { errorCatalogue } from '../../domain/errors.ts';
import { features } from '../../domain/feature-catalog.ts';
import { createLogger } from '../../runtime/logger.ts';
import { revokeApiKey } from '../../store/businesses.ts';
import type { Db } from '../../store/db.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

const V = { 'Accept-Version': 'v1.0' };

describe('authentication', () => {
  let stack: Stack;
  let key: string;
  before(async () => {
    stack = await startStack();
    ({ apiKey: key } = await stack.newBusiness());
  });
  after(() => stack.close());

  const protectedCalls: [string, string][] = [
    ['POST', '/entity'],
    ['GET', '/entity'],
    ['GET', '/entity/7b0b7d8e-35f5-4f4f-9f57-2f1f1c1c1c1c'],
    ['DELETE', '/entity/7b0b7d8e-35f5-4f4f-9f57-2f1f1c1c1c1c'],
    ['GET', '/features'],
    ['GET', `/feature/${features[0]!.id}/requirement`],
  ];
  for (const [method, path] of protectedCalls) {
    it(`${method} ${path}: 401 0000000100 without a key, 0000000200 with a wrong one`, async () => {
      const missing = await stack.request(method, path, { headers: V });
      assert.equal(missing.status, 401);
      assert.deepEqual(missing.body, {
        code: '0000000100',
        message: 'The x-vouch-api-key header is missing; send your API key in it.',
        parameter: 'x-vouch-api-key',
      });
      const wrong = await stack.request(method, path, { key: 'vk_sandbox_not-a-real-key', headers: V });
      assert.equal(wrong.status, 401);
      assert.deepEqual(wrong.body, {
        code: '0000000200',
        message: 'The API key in x-vouch-api-key is unknown or revoked; check it, or use a current key.',
        parameter: 'x-vouch-api-key',
      });
    });
  }

  it('checks the key before validating the body, so an anonymous caller learns nothing', async () => {
    const res = await stack.request('POST', '/entity', { json: { nonsense: true } });
    assert.equal(res.status, 401);
  });

  it('refuses a revoked key and keeps the others of the business working', async () => {
    const { businessId, apiKey } = await stack.newBusiness({ name: 'Revoker' });
    const [row] = await stack.db.query<{ id: string }>('SELECT id FROM api_keys WHERE business_id = $1', [businessId]);
    assert.equal((await stack.request('GET', '/features', { key: apiKey, headers: V })).status, 200);
    assert.equal(await revokeApiKey(stack.db, businessId, row!.id), true);
    const res = await stack.request('GET', '/features', { key: apiKey, headers: V });
    assert.equal(res.body.code, '0000000200');
  });

  it('stores API keys only as hashes', async () => {
    const { apiKey, businessId } = await stack.newBusiness({ name: 'Hashed' });
    const rows = await stack.db.query<Record<string, string>>('SELECT * FROM api_keys WHERE business_id = $1', [businessId]);
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(apiKey));
    assert.match(rows[0]!.key_hash!, /^[0-9a-f]{64}$/);
  });

  it('leaves /health, /openapi.json and /docs open', async () => {
    for (const path of ['/health', '/openapi.json', '/docs']) assert.equal((await stack.request('GET', path)).status, 200, path);
  });
});

describe('errors and routing', () => {
  let stack: Stack;
  let key: string;
  before(async () => {
    stack = await startStack();
    ({ apiKey: key } = await stack.newBusiness());
  });
  after(() => stack.close());

  it('answers an unknown path with 404 0000000500 in the error shape', async () => {
    const res = await stack.request('GET', '/no/such/thing', { key });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, {
      code: '0000000500',
      message: 'No endpoint GET /no/such/thing; check the path against the API reference (/docs).',
      parameter: '',
    });
  });

  it('answers a known path with the wrong method with 405 0000000510 and Allow', async () => {
    const res = await stack.request('PATCH', '/entity', { key });
    assert.equal(res.status, 405);
    assert.equal(res.body.code, '0000000510');
    assert.match(res.headers.get('allow') ?? '', /GET/);
  });

  it('gives every error code of the catalogue 10 digits and a distinct value', () => {
    const codes = Object.values(errorCatalogue).map((e) => e.code);
    for (const code of codes) assert.match(code, /^\d{10}$/);
    assert.equal(new Set(codes).size, codes.length);
  });

  it('turns an unexpected failure into a 500 with no stack, SQL or message from inside', async () => {
    const failing: Db = {
      query: async () => {
        throw new Error('relation "secret_table" does not exist: SELECT * FROM secret_table');
      },
      tx: async () => {
        throw new Error('boom');
      },
      ping: async () => 0,
      close: async () => {},
    };
    const lines: string[] = [];
    const log = createLogger('error', 'x', new Writable({ write: (c, _e, done) => (lines.push(c.toString()), done()) }));
    const server = buildApp({
      config: stack.config,
      db: failing,
      temporal: stack.temporal,
      log,
      keys: { webhooks: [], standardWebhooks: [], signedPayloads: [], auditCheckpoints: [], sealing: [] },
    }).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/entity`, { headers: { 'x-vouch-api-key': 'whatever', ...V } });
    const body = (await res.json()) as Record<string, string>;
    server.close();
    assert.equal(res.status, 500);
    assert.equal(body.code, '0000000999');
    assert.equal(body.parameter, '');
    assert.equal(body.requestId, res.headers.get('x-request-id'));
    assert.ok(!/secret_table|SELECT|at |\.ts/.test(JSON.stringify(body)), JSON.stringify(body));
    // the detail is in the log, with the request id
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'unhandled error');
    assert.equal(logged.requestId, body.requestId);
    assert.match(logged.err.message, /secret_table/);
  });
});

describe('request ids and logs', () => {
  let stack: Stack;
  let key: string;
  before(async () => {
    stack = await startStack();
    ({ apiKey: key } = await stack.newBusiness());
  });
  after(() => stack.close());

  it('gives every request an id of its own, logs a sane X-Request-Id beside it on every line of the request', async () => {
    const res = await stack.request('GET', '/entity', { key, headers: { ...V, 'X-Request-Id': 'trace-abc.123' } });
    const requestId = res.headers.get('x-request-id') ?? '';
    assert.match(requestId, /^[0-9a-f-]{36}$/, "our id, not the caller's: the audit log records it, and holds no text a caller chose");
    const lines = stack.logs.filter((l) => l.clientRequestId === 'trace-abc.123');
    assert.ok(lines.length >= 1);
    assert.ok(lines.every((l) => l.requestId === requestId));
    const line = lines.find((l) => l.msg === 'request')!;
    assert.equal(line.status, 200);
    assert.equal(line.path, '/entity');
    assert.ok(line.businessId, 'the business is on the line once authenticated');
    assert.ok(typeof line.time === 'string' && typeof line.level === 'number');
  });

  it('logs no unsafe X-Request-Id', async () => {
    const res = await stack.request('GET', '/features', { key, headers: { ...V, 'X-Request-Id': 'bad id with spaces' } });
    assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.ok(!JSON.stringify(stack.logs).includes('bad id with spaces'));
  });

  it('never logs the API key', async () => {
    await stack.request('GET', '/entity', { key, headers: V });
    assert.ok(!JSON.stringify(stack.logs).includes(key));
  });
});

describe('rate limit', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ env: { API_RATE_LIMIT_PER_SECOND: '3' } });
  });
  after(() => stack.close());

  it('answers 429 0000000900 with Retry-After beyond the per-business limit, and counts businesses apart', async () => {
    const { apiKey } = await stack.newBusiness();
    const { apiKey: other } = await stack.newBusiness({ name: 'Other' });
    const replies = await Promise.all(Array.from({ length: 12 }, () => stack.request('GET', '/features', { key: apiKey, headers: V })));
    const limited = replies.filter((r) => r.status === 429);
    const ok = replies.filter((r) => r.status === 200);
    // 12 requests at once cannot all fit in the one-second windows they land in
    assert.ok(ok.length >= 3 && limited.length >= 1, `${ok.length} passed`);
    assert.equal(ok.length + limited.length, 12);
    assert.equal(limited[0]!.body.code, '0000000900');
    assert.match(limited[0]!.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.equal((await stack.request('GET', '/features', { key: other, headers: V })).status, 200);
  });
});

describe('features', () => {
  let stack: Stack;
  let key: string;
  before(async () => {
    stack = await startStack();
    ({ apiKey: key } = await stack.newBusiness());
  });
  after(() => stack.close());

  it('lists the catalog, paginated and versioned', async () => {
    const res = await stack.request('GET', '/features?limit=1', { key, headers: V });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.meta, { page: 1, limit: 1, totalItems: features.length, totalPages: features.length });
    assert.deepEqual(Object.keys(res.body.items[0]).sort(), ['description', 'id', 'name', 'slug']);
    assert.equal((await stack.request('GET', '/features', { key })).body.code, '0000000400');
    assert.equal((await stack.request('GET', '/features?limit=101', { key, headers: V })).body.parameter, 'limit');
  });

  it("lists a feature's requirements in the interface's shape", async () => {
    const feature = features.find((f) => f.slug === 'card-issuance-api-access')!;
    const res = await stack.request('GET', `/feature/${feature.id}/requirement`, { key });
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(res.body), 'a JSON array (4.6: "list of feature requirements")');
    const canonical = res.body.find((r: any) => r.requirementSlug === 'ukyc-canonical-kyc-data');
    assert.deepEqual(Object.keys(canonical).sort(), ['associatedEntity', 'requirementId', 'requirementLevel', 'requirementSlug', 'valueType']);
    assert.deepEqual([canonical.requirementLevel, canonical.associatedEntity, canonical.valueType], ['REQUIRED', 'INDIVIDUAL', 'JSON']);
    assert.equal(res.body.length, feature.requirements.length);
  });

  it('answers 404 0703000100 for an unknown feature and 400 for a malformed id', async () => {
    const res = await stack.request('GET', '/feature/7b0b7d8e-35f5-4f4f-9f57-2f1f1c1c1c1c/requirement', { key });
    assert.equal(res.status, 404);
    assert.deepEqual([res.body.code, res.body.parameter], ['0703000100', 'featureId']);
    assert.equal((await stack.request('GET', '/feature/abc/requirement', { key })).status, 400);
  });
});
