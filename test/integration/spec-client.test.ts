// A client written from the interface document alone (test/spec-client/: only fetch, node:crypto,
// node:http and the spec's names and codes) goes through token sharing (sync and batch), webhooks
// with every event type, and the error cases of section 7 — with no special case for Vouch beyond
// the word the spec's neutral `svc` stands for ('vouch', docs/decisions/001-header-names.md) and the
// X-Provider value (the spec's `<provider_a>` placeholder: 'sumsub').
//
// The project's test harness is used only to boot the service and to play the parts that are not
// Vouch's API: the business and its API key (in real life: the dashboard), the donor's share tokens
// and the donor's identity provider (the simulator), and the webhook public keys (in real life: from
// the account manager).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { publicKeyOf, signingKeyAt } from '../../domain/webhook-signature.ts';
import { features } from '../../domain/feature-catalog.ts';
import { applyKybDecision } from '../../onboarding/decisions.ts';
import { announceNewFeatures, remindWaitingSubmissions } from '../../onboarding/scheduled-events.ts';
import { donorAt, type Donor } from '../helpers/imports.ts';
import { startStack, testKeyRing, type Stack } from '../helpers/stack.ts';
import {
  BATCH_STATUS,
  batchCsv,
  CATEGORIES,
  CODES,
  DECISION_EVENT,
  EVENT_TYPES,
  eventProblems,
  FEATURE_REQUIREMENT,
  pause,
  isErrorBody,
  isIsoTimestamp,
  listItems,
  sameStatus,
  SpecClient,
  STRING_CODES,
  stringCodeOf,
  UUID,
  type Reply,
  type WebhookEvent,
} from '../spec-client/client.ts';
import { startSpecReceiver, type Accepted, type SpecReceiver } from '../spec-client/receiver.ts';

const SVC = 'vouch';
const PROVIDER = 'sumsub';
const is2xx = (r: Reply) => r.status >= 200 && r.status < 300;
const show = (r: Reply) => `${r.status} ${r.text.slice(0, 500)}`;

/** Section 7: an error answer with this status, the spec's code, and `{ code, message, parameter }`. */
function assertSpecError(r: Reply, status: number, code: string, stringCode?: string) {
  assert.equal(r.status, status, show(r));
  assert.ok(isErrorBody(r.body), `error body shaped { code, message, parameter }: ${r.text.slice(0, 300)}`);
  assert.equal(r.body.code, code, show(r));
  // the string code is published by the spec but its field is not named: checked only when present
  const s = stringCodeOf(r.body);
  if (stringCode && s !== undefined) assert.equal(s, stringCode, show(r));
}

describe('a client written from the interface document alone', () => {
  let stack: Stack;
  let receiver: SpecReceiver;
  let donor: Donor;
  let n = 0;
  const ext = (label: string) => `spec-${label}-${n++}-${randomUUID().slice(0, 8)}`;

  /** A business of its own (the dashboard's part) and a client holding only its key. */
  const newClient = async (name: string) => {
    const { apiKey } = await stack.newBusiness({ name });
    return new SpecClient({ baseUrl: stack.url, apiKey, svc: SVC, provider: PROVIDER });
  };
  const entity = async (client: SpecClient, externalId: string) => {
    const r = await client.createEntity(externalId, 'INDIVIDUAL');
    assert.ok(is2xx(r), show(r));
    assert.match(r.entityId ?? '', UUID, `POST /entity returns the new entity's UUID: ${r.text}`);
    return r.entityId!;
  };
  const decisionsFor = (events: Accepted[], path: string, entityId: string) =>
    events.filter((a) => a.path === path && a.event.eventType === DECISION_EVENT.eventType && a.event.data.entityId === entityId).map((a) => a.event);
  const assertSubscription = (r: Reply, url: string, types: readonly string[]) => {
    assert.ok(is2xx(r), show(r));
    assert.equal(typeof r.body.id, 'string', r.text);
    assert.equal(r.body.channel, 'WEBHOOK');
    assert.deepEqual([...r.body.types].sort(), [...types].sort());
    assert.equal(r.body.config?.webhook?.url, url);
    assert.ok(isIsoTimestamp(r.body.createdAt), r.text);
  };

  before(async () => {
    // The one concession: the spec requires a public HTTPS webhook URL (4.2, 6.3); the client's
    // receiver here is plain HTTP on 127.0.0.1, which Vouch allows only with this setting.
    stack = await startStack({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true' } });
    // the public keys the client would get from its account manager (5.5)
    receiver = await startSpecReceiver({ svc: SVC, publicKeysPem: testKeyRing().map((k) => publicKeyOf(k).publicKeyPem) });
    donor = donorAt(stack);
  });
  after(async () => {
    await receiver?.close();
    await stack?.close();
  });

  it(
    'token sharing, sync: register a webhook, create the entity, share, get completed, then the' + ' signed decision (2.5, 2.10); renewal decides again',
    async () => {
      const client = await newClient('Spec client: sync');
      const hook = `${receiver.url}/sync`;
      assertSubscription(await client.registerWebhook(hook, ['account_status_change']), hook, ['account_status_change']);

      const externalId = ext('sync');
      const entityId = await entity(client, externalId);
      const first = await client.importSync({ externalId, shareToken: await donor.token() });
      assert.ok(is2xx(first), show(first));
      assert.equal(first.body.externalId, externalId);
      assert.ok(sameStatus(first.body.status, 'completed'), show(first));
      assert.match(first.body.requestId, UUID);
      assert.equal(first.body.entityId, entityId);

      const events = await receiver.until('the decision', (all) => decisionsFor(all, '/sync', entityId).length >= 1);
      const [decision] = decisionsFor(events, '/sync', entityId);
      assert.deepEqual(eventProblems(decision!), []);
      assert.equal(decision!.eventName, DECISION_EVENT.eventName);
      assert.equal(decision!.eventType, DECISION_EVENT.eventType);
      assert.equal(decision!.data.status, 'APPROVED');
      assert.equal(decision!.data.entityId, entityId);
      assert.equal(typeof decision!.data.message, 'string');
      // the entity read (2.1): enabledFeatures present once approved
      const read = await client.request('GET', `/entity/${entityId}`);
      assert.equal(read.status, 200, show(read));
      assert.deepEqual([read.body.id, read.body.externalId, read.body.type], [entityId, externalId, 'INDIVIDUAL']);
      assert.equal(typeof read.body.businessId, 'string');
      assert.ok('verifiedBy' in read.body, 'verifiedBy present in the single-entity read');
      assert.ok(Array.isArray(read.body.enabledFeatures) && read.body.enabledFeatures.length > 0, show(read));

      // renewal (1, concepts 6): a new share token, the same externalId → a second decision
      const renewal = await client.importSync({ externalId, shareToken: await donor.token() });
      assert.ok(is2xx(renewal), show(renewal));
      assert.ok(sameStatus(renewal.body.status, 'completed'), show(renewal));
      assert.equal(renewal.body.entityId, entityId);
      assert.notEqual(renewal.body.requestId, first.body.requestId);
      const again = decisionsFor(await receiver.until('the renewal decision', (all) => decisionsFor(all, '/sync', entityId).length >= 2), '/sync', entityId);
      assert.equal(new Set(again.map((e) => e.data.eventId)).size, again.length, 'distinct events');
      assert.deepEqual(
        again.map((e) => e.data.status),
        ['APPROVED', 'APPROVED'],
      );

      // a shared applicant whose data cannot support a card: REJECTED with its extra fields (2.10, 6.2)
      const poorId = ext('sync-poor');
      const poorEntity = await entity(client, poorId);
      const poor = await client.importSync({ externalId: poorId, shareToken: await donor.token('missing-address') });
      assert.ok(is2xx(poor), show(poor));
      const [rejected] = decisionsFor(await receiver.until('the rejection', (all) => decisionsFor(all, '/sync', poorEntity).length >= 1), '/sync', poorEntity);
      assert.equal(rejected!.data.status, 'REJECTED');
      assert.deepEqual(eventProblems(rejected!), [], 'moderationComment, rejectLabels, reviewRejectType present');

      assert.deepEqual(
        receiver.refused.filter((r) => r.path === '/sync'),
        [],
        'every delivery verified',
      );
      assert.deepEqual(
        receiver.malformed.filter((r) => r.path === '/sync'),
        [],
      );
    },
  );

  it('token sharing, batch: upload (2.3), same key again is no duplicate, poll to completed, a used token fails alone as TOKEN_ALREADY_USED', async () => {
    const client = await newClient('Spec client: batch');
    const hook = `${receiver.url}/batch`;
    assert.ok(is2xx(await client.registerWebhook(hook, ['account_status_change'])));
    const ids = [ext('b1'), ext('b2'), ext('b3'), ext('b4')];
    const entityIds: string[] = [];
    for (const id of ids) entityIds.push(await entity(client, id));
    // a token already used: shared once by sync for the fourth entity
    const used = await donor.token();
    const spent = await client.importSync({ externalId: ids[3]!, shareToken: used });
    assert.ok(is2xx(spent), show(spent));
    const [t1, t2] = await donor.tokens(2);
    const file = batchCsv([
      { externalId: ids[0]!, shareToken: t1! },
      { externalId: ids[1]!, shareToken: t2! },
      { externalId: ids[2]!, shareToken: used },
    ]);
    const idempotencyKey = randomUUID();

    const up = await client.uploadBatch(file, { idempotencyKey });
    assert.equal(up.status, 201, show(up));
    assert.match(up.body.batchId, UUID);
    assert.match(up.body.businessUuid, UUID);
    assert.ok(sameStatus(up.body.status, BATCH_STATUS.pending), show(up));
    assert.equal(up.body.totalRecords, 3);
    assert.equal(typeof up.body.message, 'string');
    assert.ok(isIsoTimestamp(up.body.createdAt), show(up));

    // 2.3: completedAt is present only once the batch is completed; every status is one of 3.1's
    const early = await client.batchStatus(up.body.batchId);
    assert.equal(early.status, 200, show(early));
    assert.ok(
      Object.values(BATCH_STATUS).some((v) => sameStatus(early.body.status, v)),
      show(early),
    );
    if (!sameStatus(early.body.status, BATCH_STATUS.completed)) assert.ok(!('completedAt' in early.body), `completedAt before completion: ${show(early)}`);

    // a retried upload with the same key (4.1) never makes a second batch: the same batch while it
    // runs, or — had it already finished — the already-processed key (7, 0701010300)
    const retried = await client.uploadBatch(file, { idempotencyKey });
    if (retried.status === 201) assert.equal(retried.body.batchId, up.body.batchId, 'the same batch');
    else assertSpecError(retried, 400, CODES.alreadyProcessed, STRING_CODES.duplicate);

    const done = await client.waitForBatch(up.body.batchId, { timeoutMs: 120_000, intervalMs: 200 });
    assert.equal(done.status, 200, show(done));
    const s = done.body;
    assert.equal(s.batchId, up.body.batchId);
    assert.ok(sameStatus(s.status, BATCH_STATUS.completed), show(done));
    assert.deepEqual([s.totalRecords, s.processedRecords, s.failedRecords, s.summary?.successfulRecords], [3, 3, 1, 2], show(done));
    for (const f of ['createdAt', 'updatedAt', 'startedAt', 'completedAt']) assert.ok(isIsoTimestamp(s[f]), `${f}: ${show(done)}`);
    assert.equal(s.summary.errors.length, 1, show(done));
    const [failure] = s.summary.errors;
    assert.equal(typeof failure.rowNumber, 'number');
    assert.equal(typeof failure.error, 'string');
    assert.equal(failure.errorDetail?.category, CATEGORIES.tokenAlreadyUsed, show(done));
    if ('retryable' in failure.errorDetail) assert.equal(typeof failure.errorDetail.retryable, 'boolean');
    if (failure.entityData?.externalId !== undefined) assert.deepEqual([failure.entityData.externalId, failure.entityData.shareToken], [ids[2], used]);

    // the records that succeeded are decided by webhook (1.4)
    const events = await receiver.until(
      'both batch decisions',
      (all) => decisionsFor(all, '/batch', entityIds[0]!).length >= 1 && decisionsFor(all, '/batch', entityIds[1]!).length >= 1,
    );
    for (const id of entityIds.slice(0, 2)) {
      const [d] = decisionsFor(events, '/batch', id);
      assert.deepEqual([d!.eventName, d!.data.status, eventProblems(d!)], [DECISION_EVENT.eventName, 'APPROVED', []]);
    }

    // the same file and key once the batch is processed: the key is already processed (7)
    assertSpecError(await client.uploadBatch(file, { idempotencyKey }), 400, CODES.alreadyProcessed, STRING_CODES.duplicate);
    assert.deepEqual(
      receiver.refused.filter((r) => r.path === '/batch'),
      [],
    );
  });

  it(
    'webhooks with every event type: register each of 6.1, list, get, replace, delete (204), 10' +
      ' per business; a sync share delivers signed events of three types',
    async () => {
      const client = await newClient('Spec client: webhooks');
      const allUrl = `${receiver.url}/all`;
      const all = await client.registerWebhook(allUrl, EVENT_TYPES);
      assertSubscription(all, allUrl, EVENT_TYPES);
      const single = new Map<string, string>(); // type → notificationId
      for (const type of EVENT_TYPES) {
        const url = `${receiver.url}/t/${type}`;
        const r = await client.registerWebhook(url, [type]);
        assertSubscription(r, url, [type]);
        single.set(type, r.body.id);
      }

      // list (9.1: Accept-Version), then one
      const list = await client.listWebhooks();
      assert.equal(list.status, 200, show(list));
      const items = listItems(list.body, (x) => x && typeof x.id === 'string' && x.channel === 'WEBHOOK');
      assert.ok(items, `an array of subscriptions in ${list.text.slice(0, 200)}`);
      assert.deepEqual(items.map((x) => x.id).sort(), [all.body.id, ...single.values()].sort());
      const one = await client.getWebhook(all.body.id);
      assert.equal(one.status, 200, show(one));
      assertSubscription(one, allUrl, EVENT_TYPES);
      assert.equal(one.body.id, all.body.id);

      // a sync share: the decision, the verification's stages and the feature it turns on (6.1)
      const externalId = ext('hooks');
      const entityId = await entity(client, externalId);
      const shared = await client.importSync({ externalId, shareToken: await donor.token() });
      assert.ok(is2xx(shared), show(shared));
      const expected = ['account_status_change', 'verification_status_change', 'feature_access_change'];
      const ofEntity = (events: Accepted[], path: string) => events.filter((a) => a.path === path && a.event.data?.entityId === entityId).map((a) => a.event);
      const received = await receiver.until('three types at the all-types endpoint, and each at its own endpoint', (events) =>
        expected.every((t) => ofEntity(events, '/all').some((e) => e.eventType === t) && ofEntity(events, `/t/${t}`).some((e) => e.eventType === t)),
      );
      const mine: WebhookEvent[] = ofEntity(received, '/all');
      for (const e of mine) {
        assert.deepEqual(eventProblems(e), [], `${e.eventType} per 2.10`);
        assert.ok(EVENT_TYPES.includes(e.eventType as never), `${e.eventType} is a type of 6.1`);
        assert.equal(e.data.entityId, entityId);
        assert.equal(typeof e.eventName, 'string');
      }
      assert.equal(mine.find((e) => e.eventType === 'account_status_change')!.eventName, DECISION_EVENT.eventName);
      // an endpoint subscribed to one type gets that type only (2.6: types are the subscribed ones)
      for (const type of EVENT_TYPES) for (const e of receiver.events(`/t/${type}`)) assert.equal(e.eventType, type, `/t/${type} got ${e.eventType}`);
      // kyb_status_change, new_feature and reminder need a KYB submission, a catalogue release or a
      // deadline drawing near: the next test has the harness play those parts.
      assert.deepEqual(
        receiver.refused.filter((r) => r.path === '/all' || r.path.startsWith('/t/')),
        [],
        'every delivery verified',
      );

      // the client's receiver refuses what is not signed by the service (5.5)
      const forged = JSON.stringify({ ...mine[0], data: { ...mine[0]!.data, eventId: randomUUID() } });
      const sigHeader = `${SVC}-signature`;
      const bogus = Buffer.from('not a signature').toString('base64');
      assert.equal(
        (await fetch(`${receiver.url}/forged`, { method: 'POST', body: forged, headers: { 'content-type': 'application/json', [sigHeader]: bogus } })).status,
        401,
      );
      assert.equal((await fetch(`${receiver.url}/forged`, { method: 'POST', body: forged, headers: { 'content-type': 'application/json' } })).status, 401);
      const genuine = received.find((a) => a.path === '/all')!;
      const tampered = Buffer.from(genuine.raw.toString('utf8').replace('"eventId"', '"eventId" '));
      assert.equal(
        (
          await fetch(`${receiver.url}/forged`, {
            method: 'POST',
            body: tampered,
            headers: { 'content-type': 'application/json', [sigHeader]: genuine.signature },
          })
        ).status,
        401,
      );
      // a redelivery of a genuine event verifies, is acknowledged, and is handled once (6.3: deduplicate on data.eventId)
      const before = receiver.duplicates.length;
      assert.equal(
        (
          await fetch(`${receiver.url}/all`, {
            method: 'POST',
            body: genuine.raw,
            headers: { 'content-type': 'application/json', [sigHeader]: genuine.signature },
          })
        ).status,
        200,
      );
      assert.equal(receiver.duplicates.length, before + 1);
      assert.equal(receiver.accepted.filter((a) => a.path === '/all' && a.event.data.eventId === genuine.event.data.eventId).length, 1);
      assert.deepEqual(
        receiver.refused.filter((r) => r.path === '/forged').map((r) => r.reason),
        ['invalid signature', 'missing signature', 'invalid signature'],
      );
      assert.deepEqual(receiver.events('/forged'), []);

      // replace (4.2): channel, types and URL
      const replacedUrl = `${receiver.url}/replaced`;
      const replaced = await client.replaceWebhook(single.get('reminder')!, replacedUrl, ['kyb_status_change', 'reminder']);
      assertSubscription(replaced, replacedUrl, ['kyb_status_change', 'reminder']);
      assert.equal(replaced.body.id, single.get('reminder'));
      assertSubscription(await client.getWebhook(single.get('reminder')!), replacedUrl, ['kyb_status_change', 'reminder']);

      // delete: 204 with no body, and it is gone
      const deleted = await client.deleteWebhook(single.get('new_feature')!);
      assert.equal(deleted.status, 204, show(deleted));
      assert.equal(deleted.text, '');
      const gone = await client.getWebhook(single.get('new_feature')!);
      assert.equal(gone.status, 404, show(gone));

      // delivery stops at once after a delete (4.2): a renewal's decision reaches /all but not the
      // deleted account_status_change endpoint
      assert.equal((await client.deleteWebhook(single.get('account_status_change')!)).status, 204);
      const renewal = await client.importSync({ externalId, shareToken: await donor.token() });
      assert.ok(is2xx(renewal), show(renewal));
      await receiver.until('the renewal decision at /all', (events) => decisionsFor(events, '/all', entityId).length >= 2);
      assert.equal(decisionsFor(receiver.accepted, '/t/account_status_change', entityId).length, 1, 'nothing more to the deleted subscription');

      // up to 10 per business (6.3, 8): 5 now, 5 more, then the 11th is rejected until one is deleted
      const extra: string[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await client.registerWebhook(`${receiver.url}/extra/${i}`, ['account_status_change']);
        assert.ok(is2xx(r), show(r));
        extra.push(r.body.id);
      }
      const eleventh = await client.registerWebhook(`${receiver.url}/extra/11`, ['account_status_change']);
      assert.ok(eleventh.status >= 400 && eleventh.status < 500, show(eleventh));
      assert.ok(isErrorBody(eleventh.body), show(eleventh));
      assert.equal((await client.deleteWebhook(extra[0]!)).status, 204);
      assert.ok(is2xx(await client.registerWebhook(`${receiver.url}/extra/11`, ['account_status_change'])), 'room again after a delete');
    },
  );

  it(
    'webhooks of the remaining types: kyb_status_change, reminder and new_feature arrive signed' +
      ' and shaped per 2.10 (the harness plays time, a release and the KYB flow)',
    async () => {
      const { apiKey, businessId } = await stack.newBusiness({ name: 'Spec client: the rest' });
      const client = new SpecClient({ baseUrl: stack.url, apiKey, svc: SVC, provider: PROVIDER });
      const url = `${receiver.url}/rest`;
      assert.ok(is2xx(await client.registerWebhook(url, EVENT_TYPES)));

      // reminder: the client submits canonical KYC data (4.5, 2.7) and never uploads the identity document
      const person = await entity(client, ext('reminded'));
      const today = new Date().toISOString().slice(0, 10);
      const payload = {
        externalUserId: ext('user'),
        provider: { name: 'onfido', status: 'APPROVED', data: [{}] },
        identity: { firstName: 'Ada', lastName: 'Lovelace', fullName: 'Ada Lovelace', dob: '1990-12-10', nationality: 'GBR' },
        document: [{ type: 'PASSPORT', number: 'P1234567', country: 'GBR', issuingDate: today }],
        address: { country: 'GBR', postCode: 'N1 9GU', street: '1 Road' },
        liveness: { result: 'APPROVED', checkedAt: new Date().toISOString() },
      };
      const submitted = await client.request('POST', `/entity/${person}/requirement`, {
        json: { requirementSlug: 'ukyc-canonical-kyc-data', value: JSON.stringify(payload) },
      });
      assert.equal(submitted.status, 201, show(submitted));
      // …and a day before the submission's deadline (7 days by default) the reminder comes
      await remindWaitingSubmissions(stack.db, new Date(Date.now() + 7 * 86_400_000 - 3_600_000));
      // new_feature: a release adds a feature to the catalog
      await announceNewFeatures(
        stack.db,
        [...features, { ...features[0]!, id: randomUUID(), slug: `spec-feature-${n++}`, name: 'Spec feature', description: 'A feature of a later release.' }],
        new Date(),
      );
      // kyb_status_change: the KYB flow, whose shapes the spec leaves out (4.7), decides a business
      const company = (await client.createEntity(ext('company'), 'BUSINESS')).entityId!;
      await stack.db.tx((q) =>
        applyKybDecision(q, { businessId, entityId: company, submissionId: randomUUID(), decision: { status: 'APPROVED', owners: [] }, now: new Date() }),
      );

      const got = await receiver.until('reminder, new_feature and kyb_status_change', (events) =>
        ['reminder', 'new_feature', 'kyb_status_change'].every((t) => events.some((a) => a.path === '/rest' && a.event.eventType === t)),
      );
      for (const a of got.filter((x) => x.path === '/rest')) assert.deepEqual(eventProblems(a.event), [], `${a.event.eventType} per 2.10`);
      const rest = got.filter((x) => x.path === '/rest').map((x) => x.event);
      assert.equal(rest.find((e) => e.eventType === 'reminder')!.data.entityId, person);
      assert.equal(rest.find((e) => e.eventType === 'kyb_status_change')!.data.status, 'APPROVED');
      assert.equal(rest.find((e) => e.eventType === 'kyb_status_change')!.data.entityId, company);
      assert.deepEqual(
        receiver.refused.filter((r) => r.path === '/rest'),
        [],
        'every delivery verified',
      );
    },
  );

  describe('section 7 errors', () => {
    let client: SpecClient;
    before(async () => {
      client = await newClient('Spec client: errors');
    });
    const validCsv = () => batchCsv([{ externalId: ext('row'), shareToken: `tok-${randomUUID()}` }]);

    it('missing API key → 401 0000000100, invalid key → 401 0000000200, on every endpoint tried (batch ones included)', async () => {
      const calls: [string, (apiKey: string | null) => Promise<Reply>][] = [
        ['POST /entity/kyc/import/batch', (apiKey) => client.uploadBatch(validCsv(), { idempotencyKey: randomUUID(), apiKey })],
        ['GET /entity/kyc/import/batch/{batchId}', (apiKey) => client.batchStatus(randomUUID(), { apiKey })],
        ['POST /entity/kyc/import/sync', (apiKey) => client.importSyncOnce({ externalId: 'x', shareToken: 'y' }, { apiKey })],
        ['POST /entity', (apiKey) => client.request('POST', '/entity', { apiKey, json: { externalId: 'x', type: 'INDIVIDUAL' } })],
        ['GET /entity', (apiKey) => client.request('GET', '/entity', { apiKey, headers: { 'Accept-Version': 'v1.0' } })],
        [
          'POST /notification',
          (apiKey) =>
            client.request('POST', '/notification', {
              apiKey,
              json: { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: `${receiver.url}/x` },
            }),
        ],
        ['GET /notification', (apiKey) => client.request('GET', '/notification', { apiKey, headers: { 'Accept-Version': 'v1.0' } })],
      ];
      for (const [what, call] of calls) {
        const missing = await call(null);
        assert.equal(missing.status, 401, `${what} without a key: ${show(missing)}`);
        assertSpecError(missing, 401, CODES.missingApiKey);
        const invalid = await call(`not-a-key-${randomUUID()}`);
        assert.equal(invalid.status, 401, `${what} with an invalid key: ${show(invalid)}`);
        assertSpecError(invalid, 401, CODES.invalidApiKey);
      }
    });

    it('a file over 10 MB → 400 0701010100', async () => {
      const big = Buffer.alloc(10 * 1024 * 1024 + 1, 'a');
      big.write('externalId,shareToken\n');
      assertSpecError(await client.uploadBatch(big, { idempotencyKey: randomUUID() }), 400, CODES.fileTooLarge, STRING_CODES.fileTooLarge);
    });

    it('more than 5,000 rows → 400 0701010100', async () => {
      const rows = Array.from({ length: 5001 }, (_, i) => ({ externalId: `many-${n}-${i}`, shareToken: `tok-many-${n}-${i}` }));
      n++;
      assertSpecError(await client.uploadBatch(batchCsv(rows), { idempotencyKey: randomUUID() }), 400, CODES.fileTooLarge, STRING_CODES.fileTooLarge);
    });

    it('CSV validation: a required field missing, a repeated cardProcessorPublicToken → 400 0701010200', async () => {
      const missing = await client.uploadBatch(
        batchCsv([
          { externalId: ext('ok'), shareToken: `tok-${randomUUID()}` },
          { externalId: ext('no-token'), shareToken: '' },
        ]),
        { idempotencyKey: randomUUID() },
      );
      assertSpecError(missing, 400, CODES.invalidData, STRING_CODES.invalidData);
      assert.match(missing.body.message, /shareToken/, 'the message lists the missing required field');
      assert.match(missing.body.message, /\d/, 'and the row');
      const noColumn = await client.uploadBatch(`externalId\n${ext('only')}\n`, { idempotencyKey: randomUUID() });
      assertSpecError(noColumn, 400, CODES.invalidData, STRING_CODES.invalidData);
      const repeated = await client.uploadBatch(
        batchCsv([
          { externalId: ext('c1'), shareToken: `tok-${randomUUID()}`, cardProcessorPublicToken: '123456789' },
          { externalId: ext('c2'), shareToken: `tok-${randomUUID()}`, cardProcessorPublicToken: '123456789' },
        ]),
        { idempotencyKey: randomUUID() },
      );
      assertSpecError(repeated, 400, CODES.invalidData, STRING_CODES.invalidData);
    });

    it('missing or invalid X-Provider, missing Idempotency-Key, no file → 400 0701010200', async () => {
      assertSpecError(await client.uploadBatch(validCsv(), { idempotencyKey: randomUUID(), provider: null }), 400, CODES.invalidData, STRING_CODES.invalidData);
      assertSpecError(
        await client.uploadBatch(validCsv(), { idempotencyKey: randomUUID(), provider: 'not-a-provider' }),
        400,
        CODES.invalidData,
        STRING_CODES.invalidData,
      );
      assertSpecError(await client.uploadBatch(validCsv(), { idempotencyKey: null }), 400, CODES.invalidData, STRING_CODES.invalidData);
      assertSpecError(await client.uploadBatch(null, { idempotencyKey: randomUUID() }), 400, CODES.invalidData, STRING_CODES.invalidData);
      // a refused upload made nothing: retrying it, fixed, with the same key is a new upload (4.1)
      const idempotencyKey = randomUUID();
      const file = validCsv();
      assertSpecError(await client.uploadBatch(file, { idempotencyKey, provider: null }), 400, CODES.invalidData, STRING_CODES.invalidData);
      const fixed = await client.uploadBatch(file, { idempotencyKey });
      assert.equal(fixed.status, 201, show(fixed));
      assert.ok(sameStatus(fixed.body.status, BATCH_STATUS.pending), show(fixed));
    });

    it('an already-processed Idempotency-Key with other content, and the same content under a new key → 400 0701010300', async () => {
      // rows naming no entity: valid to upload, each fails alone, so the batch finishes quickly
      const file = batchCsv([{ externalId: ext('nobody'), shareToken: `tok-${randomUUID()}` }]);
      const idempotencyKey = randomUUID();
      const up = await client.uploadBatch(file, { idempotencyKey });
      assert.equal(up.status, 201, show(up));
      const done = await client.waitForBatch(up.body.batchId, { timeoutMs: 120_000, intervalMs: 200 });
      assert.ok(sameStatus(done.body.status, BATCH_STATUS.completed), show(done));
      assertSpecError(await client.uploadBatch(validCsv(), { idempotencyKey }), 400, CODES.alreadyProcessed, STRING_CODES.duplicate);
      assertSpecError(await client.uploadBatch(file, { idempotencyKey: randomUUID() }), 400, CODES.alreadyProcessed, STRING_CODES.duplicate);
    });

    it('a batch that does not exist → 404', async () => {
      const r = await client.batchStatus(randomUUID());
      assert.equal(r.status, 404, show(r)); // 7: no code shown for 404
    });

    it('list endpoints without Accept-Version → an error (9.1; the code is not named), with it → 200', async () => {
      for (const [what, list] of [
        ['GET /entity', (v?: null) => client.listEntities('', { acceptVersion: v })],
        ['GET /features', (v?: null) => client.listFeatures('', { acceptVersion: v })],
        ['GET /notification', (v?: null) => client.listWebhooks('', { acceptVersion: v })],
      ] as const) {
        const without = await list(null);
        assert.ok(without.status >= 400 && without.status < 500, `${what} without Accept-Version: ${show(without)}`);
        assert.ok(isErrorBody(without.body), show(without));
        const withIt = await list();
        assert.equal(withIt.status, 200, `${what} with Accept-Version: ${show(withIt)}`);
      }
    });

    it("a feature's requirements are a JSON array of 2.2's fields (4.6: list of feature requirements)", async () => {
      const list = await client.listFeatures();
      assert.equal(list.status, 200, show(list));
      const feature = listItems<{ id?: unknown }>(list.body, (f) => typeof f?.id === 'string')?.[0];
      assert.ok(feature && typeof feature.id === 'string', show(list));
      const r = await client.featureRequirements(feature.id as string);
      assert.equal(r.status, 200, show(r));
      assert.ok(Array.isArray(r.body), `a list, not an object: ${show(r)}`);
      assert.ok(r.body.length > 0, show(r));
      for (const req of r.body as Record<string, unknown>[]) {
        for (const field of ['requirementId', 'requirementLevel', 'requirementSlug', 'associatedEntity', 'valueType'])
          assert.ok(field in req, `${field} in ${JSON.stringify(req)}`);
        assert.ok((FEATURE_REQUIREMENT.requirementLevel as readonly unknown[]).includes(req.requirementLevel), JSON.stringify(req));
        assert.ok((FEATURE_REQUIREMENT.valueType as readonly unknown[]).includes(req.valueType), JSON.stringify(req));
      }
    });

    it('sync import: cardProcessorPublicToken empty ("") or null, from a program that is not BIN-sponsored, is no token (2.5)', async () => {
      const c = await newClient('Spec client: empty card token');
      for (const cardProcessorPublicToken of ['', null]) {
        const externalId = ext('empty-cpt');
        await entity(c, externalId);
        const r = await c.importSyncOnce({ externalId, shareToken: await donor.token(), cardProcessorPublicToken } as never);
        assert.ok(is2xx(r), `${JSON.stringify(cardProcessorPublicToken)}: ${show(r)}`);
        assert.ok(sameStatus(r.body.status, 'completed'), show(r));
        await pause(400); // 3 sync calls per second per business (2.5)
      }
    });

    it('a receiver that installs the one public key of the environment (5.4) verifies every delivery: one key signs at a time', async () => {
      // the key its account manager gives it: the environment's key signing now (one of the current pair, 5.5)
      const one = await startSpecReceiver({ svc: SVC, publicKeysPem: [publicKeyOf(signingKeyAt(testKeyRing(), new Date())).publicKeyPem] });
      try {
        const c = await newClient('Spec client: one key');
        assertSubscription(await c.registerWebhook(`${one.url}/one`, ['account_status_change']), `${one.url}/one`, ['account_status_change']);
        const ids: string[] = [];
        for (let i = 0; i < 6; i++) {
          const externalId = ext('one-key');
          ids.push(await entity(c, externalId));
          const r = await c.importSync({ externalId, shareToken: await donor.token() });
          assert.ok(is2xx(r), show(r));
          await pause(350); // 3 sync calls per second per business (2.5)
        }
        await one.until('every decision', (all) => ids.every((id) => all.some((a) => a.event.data.entityId === id)));
        assert.deepEqual(
          one.refused.map((r) => r.reason),
          [],
          'no delivery signed with a key the receiver does not hold',
        );
      } finally {
        await one.close();
      }
    });

    it('list endpoints take the announced releases too (9.2: v1.0.2, v1.1.0) and refuse one it never named', async () => {
      for (const version of ['v1.0.2', 'v1.1', 'v1.1.0']) {
        const r = await client.request('GET', '/entity', { headers: { 'Accept-Version': version } });
        assert.equal(r.status, 200, `Accept-Version ${version}: ${show(r)}`);
      }
      const unknown = await client.request('GET', '/entity', { headers: { 'Accept-Version': 'v9.0' } });
      assert.ok(unknown.status >= 400 && unknown.status < 500 && isErrorBody(unknown.body), show(unknown));
    });

    it('sync import beyond 3 requests per second per business → 429', async () => {
      const burst = await newClient('Spec client: burst');
      const ids = Array.from({ length: 8 }, () => ext('burst'));
      for (const id of ids) await entity(burst, id);
      const tokens = await donor.tokens(8);
      const replies = await Promise.all(ids.map((externalId, i) => burst.importSyncOnce({ externalId, shareToken: tokens[i]! })));
      const statuses = replies.map((r) => r.status);
      assert.ok(statuses.includes(429), statuses.join(','));
      assert.ok(
        statuses.every((s) => s === 429 || (s >= 200 && s < 300)),
        replies.map(show).join('\n'),
      );
    });

    it('sync import of an expired share token (used more than 1,200 s after generation) → a 4xx error body', async () => {
      const externalId = ext('expired');
      await entity(client, externalId);
      const shareToken = await donor.token();
      // Time passes at the identity provider (the donor's side, not Vouch's): its clock moves past
      // the token's 1,200 s lifetime, instead of the test waiting 20 minutes.
      const clock = (body: object) =>
        fetch(`${stack.sim!.url}/_sim/clock`, { method: 'PUT', body: JSON.stringify(body) }).then((r) => r.json() as Promise<{ offsetMs: number }>);
      const { offsetMs } = await clock({ advanceMs: 1_201_000 });
      try {
        const r = await client.importSync({ externalId, shareToken });
        assert.ok(r.status >= 400 && r.status < 500, show(r));
        assert.ok(isErrorBody(r.body), show(r));
      } finally {
        await clock({ offsetMs: offsetMs - 1_201_000 });
      }
    });
  });
});
