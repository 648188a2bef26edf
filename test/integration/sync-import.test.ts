// POST /entity/kyc/import/sync against real workers and the simulator.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { createEntities, csvOf, donorAt, upload, type Donor } from '../helpers/imports.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { PROVIDER_PRIORITY_KEY } from '../../contract/provider-queue.ts';

describe('POST /entity/kyc/import/sync', () => {
  let stack: Stack;
  let key: string;
  let businessId: string;
  let donor: Donor;
  let n = 0;
  const ext = (label: string) => `${label}-${n++}`;
  const sync = (json: unknown, k = key) => stack.request('POST', '/entity/kyc/import/sync', { key: k, json });
  const syncCount = async () =>
    Number((await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM sync_imports WHERE business_id = $1', [businessId]))[0]!.n);
  const faults = (f: object) => fetch(`${stack.sim!.url}/_sim/faults`, { method: 'PUT', body: JSON.stringify(f) });
  /** Sync requests are limited to 3 per second per business: keep the tests below it. */
  const breathe = () => new Promise((r) => setTimeout(r, 400));

  before(async () => {
    stack = await startStack({ workers: true, env: { PROVIDER_RATE_LIMIT_PER_SECOND: '5' } });
    ({ apiKey: key, businessId } = await stack.newBusiness());
    donor = donorAt(stack);
  });
  after(() => stack.close());
  afterEach(async () => {
    await faults({});
    await breathe();
  });

  it('onboards one applicant and answers 200 with externalId, status, requestId and entityId', async () => {
    const externalId = ext('sync');
    const [entityId] = await createEntities(stack, key, [externalId]);
    const res = await sync({ externalId, shareToken: await donor.token(), cardProcessorPublicToken: '555666777' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['entityId', 'externalId', 'requestId', 'status']);
    assert.equal(res.body.status, 'completed');
    assert.equal(res.body.externalId, externalId);
    assert.equal(res.body.entityId, entityId);
    assert.ok(!('decision' in res.body), 'the decision travels only by webhook');
    const [event] = await stack.db.query<{ payload: any }>('SELECT payload FROM events WHERE entity_id = $1', [entityId]);
    assert.equal(event!.payload.data.status, 'APPROVED');
    const entity = (await stack.request('GET', `/entity/${entityId}`, { key })).body;
    assert.deepEqual(
      entity.enabledFeatures.map((f: any) => f.slug),
      ['card-issuance-api-access'],
    );
  });

  it('shares again on renewal: same externalId, new token, new card processor token', async () => {
    const externalId = ext('renewal');
    const [entityId] = await createEntities(stack, key, [externalId]);
    assert.equal((await sync({ externalId, shareToken: await donor.token(), cardProcessorPublicToken: '100000001' })).status, 200);
    await breathe();
    assert.equal((await sync({ externalId, shareToken: await donor.token(), cardProcessorPublicToken: '100000002' })).status, 200);
    const accounts = await stack.db.query('SELECT 1 FROM kyc_accounts WHERE entity_id = $1', [entityId]);
    assert.equal(accounts.length, 2);
    assert.equal((await stack.db.query('SELECT card_processor_public_token AS t FROM entities WHERE id = $1', [entityId]))[0]!.t, '100000002');
  });

  for (const [what, body, parameter] of [
    ['a missing shareToken', { externalId: 'x' }, 'shareToken'],
    ['an unknown field', { externalId: 'x', shareToken: 't', level: 'basic' }, 'level'],
    [
      'a 16-digit card number as cardProcessorPublicToken',
      { externalId: 'x', shareToken: 't', cardProcessorPublicToken: '4111111111111111' },
      'cardProcessorPublicToken',
    ],
    ['a numeric externalId', { externalId: 12, shareToken: 't' }, 'externalId'],
  ] as const) {
    it(`answers 400 to ${what} and stores nothing`, async () => {
      const before = await syncCount();
      const res = await sync(body);
      assert.equal(res.status, 400, res.text);
      assert.deepEqual([res.body.code, res.body.parameter], ['0000000300', parameter]);
      assert.equal(await syncCount(), before);
    });
  }

  it("answers 404 for an unknown entity or another business's entity", async () => {
    const unknown = await sync({ externalId: 'nobody-here', shareToken: await donor.token() });
    assert.equal(unknown.status, 404);
    assert.deepEqual([unknown.body.code, unknown.body.parameter], ['0702000100', 'externalId']);
    const { apiKey: otherKey } = await stack.newBusiness({ name: 'Other' });
    const theirs = ext('theirs');
    await createEntities(stack, otherKey, [theirs]);
    await breathe();
    assert.equal((await sync({ externalId: theirs, shareToken: await donor.token() })).status, 404);
  });

  it('answers each failure with its own code: used, expired, refused, card processor token taken', async () => {
    const ids = [ext('used'), ext('expired'), ext('refused'), ext('cpt'), ext('holder')];
    const [, , , , holder] = await createEntities(stack, key, ids);
    await stack.db.query("UPDATE entities SET card_processor_public_token = '999888777' WHERE id = $1", [holder]);
    const used = await donor.token();
    stack.sim!.state.shareTokens.get(used)!.usedAt = Date.now();
    const expired = await donor.token('complete', 1);
    await new Promise((r) => setTimeout(r, 1100));
    const cases: [unknown, number, string, string][] = [
      [{ externalId: ids[0], shareToken: used }, 409, '0704000200', 'shareToken'],
      [{ externalId: ids[1], shareToken: expired }, 400, '0704000100', 'shareToken'],
      [{ externalId: ids[2], shareToken: await donor.token('donor-rejected') }, 422, '0704000300', ''],
      [{ externalId: ids[3], shareToken: await donor.token(), cardProcessorPublicToken: '999888777' }, 409, '0704000400', 'cardProcessorPublicToken'],
    ];
    for (const [body, status, code, parameter] of cases) {
      const res = await sync(body);
      assert.equal(res.status, status, res.text);
      assert.deepEqual([res.body.code, res.body.parameter], [code, parameter]);
      assert.match(res.body.requestId, /^[0-9a-f-]{36}$/);
      await breathe();
    }
  });

  it('answers 503 when the provider does not answer, after a few quick retries', async () => {
    const externalId = ext('down');
    await createEntities(stack, key, [externalId]);
    await faults({ errorRate: 1, pathPattern: 'reusableIdentity' });
    const res = await sync({ externalId, shareToken: await donor.token() });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.body.code, '0704000600');
  });

  it('answers 502 when the provider refuses our credentials', async () => {
    const externalId = ext('creds');
    await createEntities(stack, key, [externalId]);
    const us = stack.recipient!;
    const secret = us.secretKey;
    us.secretKey = 'rotated-at-the-provider';
    try {
      const res = await sync({ externalId, shareToken: await donor.token() });
      assert.equal(res.status, 502, res.text);
      assert.equal(res.body.code, '0704000500');
    } finally {
      us.secretKey = secret;
    }
  });

  describe('Idempotency-Key', () => {
    const keyed = (json: unknown, idempotencyKey: string) =>
      stack.request('POST', '/entity/kyc/import/sync', { key, json, headers: { 'Idempotency-Key': idempotencyKey } });

    it('answers the same request with the same key the same, with one provider call', async () => {
      const externalId = ext('idem');
      await createEntities(stack, key, [externalId]);
      const shareToken = await donor.token();
      const first = await keyed({ externalId, shareToken }, `k-${externalId}`);
      assert.equal(first.status, 200, first.text);
      await breathe();
      const again = await keyed({ externalId, shareToken }, `k-${externalId}`);
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.body, first.body, 'the same answer, the same requestId');
      assert.equal(stack.sim!.state.stats.imports[shareToken]!.attempts, 1, 'the token was shared once');
      const rows = await stack.db.query('SELECT 1 FROM sync_imports WHERE idempotency_key = $1', [`k-${externalId}`]);
      assert.equal(rows.length, 1);
    });

    it('joins a request with the same key that is still running', async () => {
      const externalId = ext('idem-race');
      await createEntities(stack, key, [externalId]);
      const shareToken = await donor.token();
      await faults({ latencyMs: 800, pathPattern: 'reusableIdentity' });
      await new Promise((r) => setTimeout(r, 1100)); // a fresh rate-limit window for the two at once
      const [a, b] = await Promise.all([keyed({ externalId, shareToken }, `k-${externalId}`), keyed({ externalId, shareToken }, `k-${externalId}`)]);
      assert.deepEqual([a.status, b.status], [200, 200], a.text + b.text);
      assert.equal(a.body.requestId, b.body.requestId);
      assert.equal(stack.sim!.state.stats.imports[shareToken]!.attempts, 1);
    });

    it('gives a failed request its same error again, without a second provider call', async () => {
      const externalId = ext('idem-fail');
      await createEntities(stack, key, [externalId]);
      const shareToken = await donor.token('donor-rejected');
      const first = await keyed({ externalId, shareToken }, `k-${externalId}`);
      assert.equal(first.status, 422, first.text);
      await breathe();
      const again = await keyed({ externalId, shareToken }, `k-${externalId}`);
      assert.deepEqual([again.status, again.body], [first.status, first.body]);
      assert.equal(stack.sim!.state.stats.imports[shareToken]!.attempts, 1);
    });

    it('refuses the same key with another body (422, parameter Idempotency-Key) and changes nothing', async () => {
      const externalId = ext('idem-other');
      await createEntities(stack, key, [externalId]);
      const first = await keyed({ externalId, shareToken: await donor.token() }, `k-${externalId}`);
      assert.equal(first.status, 200, first.text);
      await breathe();
      const before = await syncCount();
      const otherToken = await donor.token();
      const res = await keyed({ externalId, shareToken: otherToken }, `k-${externalId}`);
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.code, '0704000700');
      assert.equal(res.body.parameter, 'Idempotency-Key');
      assert.equal(res.body.requestId, first.body.requestId, 'names the request the key belongs to');
      assert.equal(await syncCount(), before);
      assert.equal(stack.sim!.state.stats.imports[otherToken], undefined);
    });

    it('refuses an over-long key with 400 (an empty one is no key)', async () => {
      const res = await keyed({ externalId: 'x', shareToken: 't' }, 'k'.repeat(256));
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.parameter, 'Idempotency-Key');
    });
  });

  it("calls the provider on the rate-limited provider queue shared with batches, in its business's sync lane", async () => {
    const externalId = ext('queue');
    await createEntities(stack, key, [externalId]);
    const res = await sync({ externalId, shareToken: await donor.token() });
    assert.equal(res.status, 200, res.text);
    const { events } = await stack.temporal.workflow.getHandle(`sync-import-${res.body.requestId}`).fetchHistory();
    const scheduled = events!.map((e) => e.activityTaskScheduledEventAttributes).filter((a) => a?.activityType?.name === 'processShare');
    assert.equal(scheduled.length, 1);
    assert.equal(scheduled[0]!.taskQueue!.name, stack.config.temporal.providerTaskQueue);
    assert.equal(scheduled[0]!.priority?.priorityKey, PROVIDER_PRIORITY_KEY);
    assert.match(scheduled[0]!.priority?.fairnessKey ?? '', /^sync:[0-9a-f-]{36}$/, "the business's sync lane");
  });

  it('requires cardProcessorPublicToken for a BIN-sponsored program', async () => {
    const { apiKey: binKey } = await stack.newBusiness({ name: 'BIN', binSponsored: true });
    const externalId = ext('bin');
    await createEntities(stack, binKey, [externalId]);
    const missing = await sync({ externalId, shareToken: await donor.token() }, binKey);
    assert.deepEqual([missing.status, missing.body.code, missing.body.parameter], [400, '0000000300', 'cardProcessorPublicToken']);
    // empty or null is absent (as an empty cell of a batch file): still required here
    for (const cardProcessorPublicToken of ['', null]) {
      const empty = await sync({ externalId, shareToken: await donor.token(), cardProcessorPublicToken }, binKey);
      assert.deepEqual(
        [empty.status, empty.body.code, empty.body.parameter],
        [400, '0000000300', 'cardProcessorPublicToken'],
        JSON.stringify(cardProcessorPublicToken),
      );
    }
    await new Promise((r) => setTimeout(r, 1100)); // 3 requests a second per business, refused ones too
    assert.equal((await sync({ externalId, shareToken: await donor.token(), cardProcessorPublicToken: '123454321' }, binKey)).status, 200);
  });

  it('takes cardProcessorPublicToken "" or null from a program that is not BIN-sponsored as absent', async () => {
    const { apiKey: own } = await stack.newBusiness({ name: 'Empty card token' }); // its own 3 requests a second
    for (const cardProcessorPublicToken of ['', null]) {
      const externalId = ext('empty-cpt');
      await createEntities(stack, own, [externalId]);
      const res = await sync({ externalId, shareToken: await donor.token(), cardProcessorPublicToken }, own);
      assert.equal(res.status, 200, `${JSON.stringify(cardProcessorPublicToken)}: ${res.text}`);
      const [row] = await stack.db.query<{ card_processor_public_token: string | null }>(
        'SELECT card_processor_public_token FROM sync_imports WHERE request_id = $1',
        [res.body.requestId],
      );
      assert.equal(row?.card_processor_public_token ?? null, null, 'nothing stored for it');
    }
    const bad = await sync({ externalId: ext('bad-cpt'), shareToken: 'x', cardProcessorPublicToken: 'not a token!' }, own);
    assert.deepEqual([bad.status, bad.body.parameter], [400, 'cardProcessorPublicToken'], 'a value that is not a token is still refused');
    await new Promise((r) => setTimeout(r, 1100)); // 3 requests a second per business, refused ones too
    const pan = await sync({ externalId: ext('pan-cpt'), shareToken: 'x', cardProcessorPublicToken: '4111111111111111' }, own);
    assert.equal(pan.status, 400);
    assert.ok(!pan.text.includes('4111111111111111'), 'a card number sent by mistake is not echoed');
  });

  it('limits a business to 3 requests per second (429 with Retry-After), counted apart from other businesses', async () => {
    const ids = Array.from({ length: 8 }, () => ext('burst'));
    await createEntities(stack, key, ids);
    const tokens = await donor.tokens(8);
    await new Promise((r) => setTimeout(r, 1000));
    const replies = await Promise.all(ids.map((externalId, i) => sync({ externalId, shareToken: tokens[i] })));
    const limited = replies.filter((r) => r.status === 429);
    assert.ok(limited.length >= 1, replies.map((r) => r.status).join(','));
    assert.equal(limited[0]!.body.code, '0000000900');
    assert.match(limited[0]!.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.ok(replies.filter((r) => r.status === 200).length >= 3);
    const { apiKey: otherKey } = await stack.newBusiness({ name: 'Calm' });
    const calm = ext('calm');
    await createEntities(stack, otherKey, [calm]);
    assert.equal((await sync({ externalId: calm, shareToken: await donor.token() }, otherKey)).status, 200);
  });

  it('is not starved by a large batch running at the same time', async () => {
    const rows = Array.from({ length: 60 }, () => ext('bulk'));
    await createEntities(stack, key, rows);
    const tokens = await donor.tokens(60);
    // 60 provider calls at 5 per second: the batch runs for about 12 seconds
    const batch = await upload(
      stack,
      key,
      csvOf(
        'externalId,shareToken',
        rows.map((e, i) => [e, tokens[i]!]),
      ),
    );
    assert.equal(batch.status, 201);
    await new Promise((r) => setTimeout(r, 1500));
    const externalId = ext('urgent');
    await createEntities(stack, key, [externalId]);
    const res = await sync({ externalId, shareToken: await donor.token() });
    assert.equal(res.status, 200, res.text);
    const status = (await stack.request('GET', `/entity/kyc/import/batch/${batch.body.batchId}`, { key })).body;
    assert.equal(status.status, 'in_progress', 'the sync import finished while the batch was still running');
    assert.ok(status.processedRecords < 60);
  });
});
