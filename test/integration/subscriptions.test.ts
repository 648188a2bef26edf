// Webhook subscriptions: CRUD, validation, the limit of 10, refused URL forms, cross-business 404s.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startStack, type Stack } from '../helpers/stack.ts';

const V = { 'Accept-Version': 'v1.0' };
const PUBLIC = 'https://93.184.216.34/hooks/vouch';
const body = (webhookUrl = PUBLIC, notificationTypes = ['account_status_change']) => ({ notificationChannel: 'WEBHOOK', notificationTypes, webhookUrl });

describe('webhook subscriptions', () => {
  let stack: Stack;
  let key: string;
  let businessId: string;
  const count = async (id = businessId) =>
    Number((await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM notification_subscriptions WHERE business_id = $1', [id]))[0]!.n);

  before(async () => {
    stack = await startStack(); // WEBHOOK_ALLOW_INSECURE_URLS is off: production rules
    ({ apiKey: key, businessId } = await stack.newBusiness());
  });
  after(() => stack.close());

  it('registers (201, the shape of 2.6), reads, lists, replaces and deletes', async () => {
    const created = await stack.request('POST', '/notification', { key, json: body(PUBLIC, ['account_status_change', 'kyb_status_change']) });
    assert.equal(created.status, 201, created.text);
    // 2.6's fields, our health, and (in this answer alone) the subscription's secret
    assert.deepEqual(Object.keys(created.body).sort(), ['channel', 'config', 'createdAt', 'health', 'id', 'secret', 'types', 'updatedAt']);
    assert.deepEqual(created.body.health, { state: 'healthy', failingSince: null, disabledAt: null });
    assert.equal(created.body.channel, 'WEBHOOK');
    assert.deepEqual(created.body.types, ['account_status_change', 'kyb_status_change']);
    assert.deepEqual(created.body.config, { webhook: { url: PUBLIC } });
    const id = created.body.id;
    const { secret, ...view } = created.body;
    assert.match(secret, /^whsec_/);
    assert.deepEqual((await stack.request('GET', `/notification/${id}`, { key })).body, view);
    const list = await stack.request('GET', '/notification?limit=5', { key, headers: V });
    assert.equal(list.status, 200);
    assert.ok(list.body.items.some((s: any) => s.id === id));
    assert.equal(list.body.meta.limit, 5);
    const replaced = await stack.request('PUT', `/notification/${id}`, { key, json: body('https://93.184.216.35/new', ['reminder']) });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual([replaced.body.types, replaced.body.config.webhook.url], [['reminder'], 'https://93.184.216.35/new']);
    assert.equal((await stack.request('DELETE', `/notification/${id}`, { key })).status, 204);
    assert.equal((await stack.request('GET', `/notification/${id}`, { key })).status, 404);
    assert.equal((await stack.request('DELETE', `/notification/${id}`, { key })).status, 404);
  });

  it('accepts a global unicast IPv6 address, and an IPv4-mapped public one', async () => {
    for (const url of ['https://[2606:4700:4700::1111]/hook', 'https://[::ffff:93.184.216.34]/hook']) {
      const res = await stack.request('POST', '/notification', { key, json: body(url) });
      assert.equal(res.status, 201, `${url}: ${res.text}`);
      assert.equal((await stack.request('DELETE', `/notification/${res.body.id}`, { key })).status, 204);
    }
  });

  it('requires Accept-Version on the list', async () => {
    assert.equal((await stack.request('GET', '/notification', { key })).body.code, '0000000400');
  });

  it('allows 10 subscriptions per business and refuses the 11th until one is deleted', async () => {
    const { apiKey } = await stack.newBusiness({ name: 'Ten' });
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await stack.request('POST', '/notification', { key: apiKey, json: body(`https://93.184.216.34/h/${i}`) });
      assert.equal(r.status, 201, r.text);
      ids.push(r.body.id);
    }
    const eleventh = await stack.request('POST', '/notification', { key: apiKey, json: body('https://93.184.216.34/h/11') });
    assert.equal(eleventh.status, 409);
    assert.equal(eleventh.body.code, '0705000300');
    const concurrent = await Promise.all([1, 2, 3].map(() => stack.request('POST', '/notification', { key: apiKey, json: body() })));
    assert.deepEqual(
      concurrent.map((r) => r.status),
      [409, 409, 409],
    );
    assert.equal((await stack.request('DELETE', `/notification/${ids[0]}`, { key: apiKey })).status, 204);
    assert.equal((await stack.request('POST', '/notification', { key: apiKey, json: body('https://93.184.216.34/h/11') })).status, 201);
  });

  for (const [what, json, parameter] of [
    ['another channel', { ...body(), notificationChannel: 'EMAIL' }, 'notificationChannel'],
    ['an unknown event type', body(PUBLIC, ['card_lost']), 'notificationTypes[0]'],
    ['no event type', body(PUBLIC, []), 'notificationTypes'],
    ['a type listed twice', body(PUBLIC, ['reminder', 'reminder']), 'notificationTypes'],
    ['an unknown field', { ...body(), secret: 'x' }, 'secret'],
    ['a missing URL', { notificationChannel: 'WEBHOOK', notificationTypes: ['reminder'] }, 'webhookUrl'],
  ] as const) {
    it(`refuses ${what} with 400 and stores nothing`, async () => {
      const before = await count();
      const res = await stack.request('POST', '/notification', { key, json });
      assert.equal(res.status, 400, res.text);
      assert.deepEqual([res.body.code, res.body.parameter], ['0000000300', parameter]);
      assert.equal(await count(), before);
    });
  }

  for (const url of [
    'http://93.184.216.34/hook',
    'https://127.0.0.1/hook',
    'https://localhost/hook',
    'https://api.internal/hook',
    'https://10.1.2.3/hook',
    'https://172.16.0.1/hook',
    'https://192.168.1.10/hook',
    'https://100.64.0.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://0.0.0.0/hook',
    'https://2130706433/hook',
    'https://0x7f.0.0.1/hook',
    'https://127.1/hook',
    'https://[::1]/hook',
    'https://[::]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:7f00:1]/hook',
    'https://[::ffff:169.254.169.254]/hook',
    'https://[fe80::1]/hook',
    'https://[fc00::1]/hook',
    'https://[fd12:3456::1]/hook',
    'https://[::7f00:1]/hook', // IPv4-compatible (::/96)
    'https://[64:ff9b:1::a00:1]/hook', // local-use NAT64 (RFC 8215)
    'https://[64:ff9b::a9fe:a9fe]/hook', // well-known NAT64 of 169.254.169.254
    'https://[2001::a00:1]/hook', // Teredo
    'https://[2002:a00:1::]/hook', // 6to4 of 10.0.0.1
    'https://[100::1]/hook', // discard-only
    'https://[3fff::1]/hook', // documentation (RFC 9637)
    'https://user:secret@93.184.216.34/hook',
    'not a url',
    'ftp://93.184.216.34/hook',
    'https://exämple.com/hook', // an IRI: the host must be written in punycode
    'https://93.184.216.34/a hook',
  ]) {
    it(`refuses the webhook URL ${url}`, async () => {
      const before = await count();
      const res = await stack.request('POST', '/notification', { key, json: body(url) });
      assert.equal(res.status, 400, res.text);
      assert.deepEqual([res.body.code, res.body.parameter], ['0705000200', 'webhookUrl']);
      assert.equal(await count(), before);
    });
  }

  it('refuses a refused URL on replace too, and keeps the old one', async () => {
    const created = await stack.request('POST', '/notification', { key, json: body() });
    const res = await stack.request('PUT', `/notification/${created.body.id}`, { key, json: body('https://[::1]/x') });
    assert.equal(res.status, 400);
    assert.equal((await stack.request('GET', `/notification/${created.body.id}`, { key })).body.config.webhook.url, PUBLIC);
    await stack.request('DELETE', `/notification/${created.body.id}`, { key });
  });

  it("answers 404 for another business's subscription on every call, and leaves it alone", async () => {
    const { apiKey: otherKey } = await stack.newBusiness({ name: 'Other' });
    const theirs = await stack.request('POST', '/notification', { key: otherKey, json: body() });
    for (const [method, path, json] of [
      ['GET', `/notification/${theirs.body.id}`, undefined],
      ['PUT', `/notification/${theirs.body.id}`, body()],
      ['DELETE', `/notification/${theirs.body.id}`, undefined],
      ['GET', `/notification/${theirs.body.id}/deliveries`, undefined],
      ['POST', `/notification/${theirs.body.id}/redeliver`, { since: '2026-01-01T00:00:00Z' }],
    ] as const) {
      const res = await stack.request(method, path, { key, json });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.body.code, '0705000100');
    }
    assert.equal((await stack.request('GET', `/notification/${theirs.body.id}`, { key: otherKey })).status, 200);
    const mine = await stack.request('GET', '/notification', { key, headers: V });
    assert.ok(!mine.body.items.some((s: any) => s.id === theirs.body.id));
  });

  it('publishes the public keys with their validity windows', async () => {
    const res = await stack.request('GET', '/webhook-keys', { key });
    assert.equal(res.status, 200);
    assert.equal(res.body.keys.length, 4);
    for (const k of res.body.keys) {
      assert.match(k.publicKeyPem, /^-----BEGIN PUBLIC KEY-----/);
      assert.ok(!JSON.stringify(k).includes('PRIVATE'));
    }
    assert.deepEqual(
      res.body.keys.map((k: any) => k.validUntil.slice(0, 10)),
      ['2026-10-01', '2026-10-01', '2027-10-01', '2027-10-01'],
    );
  });
});
