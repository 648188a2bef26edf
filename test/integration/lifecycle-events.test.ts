// The subscribable types beside the decision (interface 6.1, issue 19): verification_status_change
// as a verification moves, feature_access_change when an entity's features change, reminder before
// a deadline, new_feature when the catalog grows — each delivered signed, once, only to businesses
// that subscribed to its type, and none of them carrying the decision or satisfying the webhook
// prerequisite. Real workers, the simulator over HTTP, a real receiver.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DOCUMENTED_EVENT_TYPES, eventBodySchema } from '../../api/webhook-events.ts';
import { EVENT_TYPES } from '../../domain/events.ts';
import { features } from '../../domain/feature-catalog.ts';
import { publicKeyOf } from '../../domain/webhook-signature.ts';
import { verifyWebhook } from '../../receiver/verify-webhook.ts';
import { announceNewFeatures, remindWaitingSubmissions } from '../../onboarding/scheduled-events.ts';
import { createEntities, donorAt, type Donor } from '../helpers/imports.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, testKeyRing, type Stack } from '../helpers/stack.ts';
import { canonicalPayload, FILES, filesForm } from '../helpers/ukyc.ts';
import { approveDirectly } from '../helpers/decisions.ts';
import { eventually } from '../helpers/eventually.ts';
import * as world from '../helpers/world.ts';

const LIFECYCLE = ['verification_status_change', 'feature_access_change', 'reminder', 'new_feature'];
const ALL = ['account_status_change', 'kyb_status_change', ...LIFECYCLE];
const DEADLINE_SECONDS = 3600;

type Got = { eventName: string; eventType: string; businessId: string; data: any; raw: Buffer; headers: Record<string, unknown> };

describe('lifecycle events', () => {
  let stack: Stack;
  let receiver: Receiver;
  let key: string;
  let businessId: string;
  let quietKey: string;
  let quietBusinessId: string;
  let donor: Donor;
  let n = 0;

  const subscribe = async (k: string, types: string[]) => {
    const res = await stack.request('POST', '/notification', {
      key: k,
      json: { notificationChannel: 'WEBHOOK', notificationTypes: types, webhookUrl: receiver.url },
    });
    assert.equal(res.status, 201, res.text);
  };

  before(async () => {
    stack = await startStack({
      workers: true,
      providerCallbacks: true,
      env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', UKYC_SUBMISSION_DEADLINE_SECONDS: String(DEADLINE_SECONDS) },
    });
    receiver = await startReceiver();
    ({ apiKey: key, businessId } = await stack.newBusiness({ name: 'Listens to everything' }));
    // a business that takes only decisions: none of the new types reach it (nor are recorded for it)
    ({ apiKey: quietKey, businessId: quietBusinessId } = await stack.newBusiness({ name: 'Decisions only' }));
    await subscribe(key, ALL);
    await subscribe(quietKey, ['account_status_change']);
    donor = donorAt(stack);
  });
  after(async () => {
    await receiver.close();
    await stack.close();
  });

  const all = (): Got[] =>
    receiver.received.map((r) => {
      const body = JSON.parse(r.body.toString());
      return { ...body, raw: r.body, headers: r.headers };
    });
  const until = async (what: string, pick: (events: Got[]) => boolean, timeoutMs = 30_000): Promise<Got[]> => {
    return eventually(
      `${what}: received`,
      () => {
        const events = all();
        return pick(events) && events;
      },
      { timeoutMs, state: () => all().map((e) => [e.eventType, e.data.verificationStatus ?? e.data.access ?? '', e.data.entityId]) },
    );
  };
  const stagesOf = (events: Got[], entityId: string) =>
    events.filter((e) => e.eventType === 'verification_status_change' && e.data.entityId === entityId).map((e) => e.data.verificationStatus);
  const recordedStages = async (entityId: string) =>
    (
      await stack.db.query<{ stage: string }>(
        "SELECT payload->'data'->>'verificationStatus' AS stage FROM events WHERE entity_id = $1 " +
          "AND event_type = 'verification_status_change' ORDER BY created_at, id",
        [entityId],
      )
    ).map((r) => r.stage);
  const person = (k = key) => world.entity(stack, k, `life-${n++}`);
  const submit = (entityId: string, payload: unknown, k = key) =>
    stack.request('POST', `/entity/${entityId}/requirement`, { key: k, json: { requirementSlug: 'ukyc-canonical-kyc-data', value: JSON.stringify(payload) } });
  const uploadPassport = (entityId: string, k = key) =>
    stack.request('POST', `/entity/${entityId}/requirement-slug/ukyc-id-document/upload`, {
      key: k,
      form: filesForm([{ bytes: FILES.pdf, name: 'passport.pdf' }]),
    });

  it('universal KYC: WAITING_FOR_DOCUMENTS, IN_REVIEW, DECIDED, and the feature enabled — each signed, shaped like 2.10, without the outcome', async () => {
    const entityId = await person();
    const submitted = await submit(entityId, canonicalPayload());
    assert.equal(submitted.status, 201, submitted.text);
    await until('waiting for documents', (e) => stagesOf(e, entityId).includes('WAITING_FOR_DOCUMENTS'));
    assert.equal((await uploadPassport(entityId)).status, 201);
    const events = await until(
      'decided and feature',
      (e) => stagesOf(e, entityId).includes('DECIDED') && e.some((x) => x.eventType === 'feature_access_change' && x.data.entityId === entityId),
    );
    // delivery order is not guaranteed (6.3): the set, and the order in which they were recorded
    assert.deepEqual(stagesOf(events, entityId).sort(), ['DECIDED', 'IN_REVIEW', 'WAITING_FOR_DOCUMENTS']);
    assert.deepEqual(await recordedStages(entityId), ['WAITING_FOR_DOCUMENTS', 'IN_REVIEW', 'DECIDED']);
    const keys = testKeyRing().map(publicKeyOf);
    for (const e of events.filter((x) => x.data.entityId === entityId)) {
      assert.equal(verifyWebhook(e.raw, e.headers['vouch-signature'] as string, keys), true, `${e.eventType} is signed`);
      assert.equal(e.businessId, businessId);
      assert.match(e.data.eventId, /^[0-9a-f-]{36}$/);
      assert.ok(!Number.isNaN(Date.parse(e.data.timestamp)));
      assert.equal(typeof e.data.message, 'string');
      if (e.eventType !== 'account_status_change') assert.ok(!('status' in e.data), `${e.eventType} carries no decision`);
    }
    const stage = events.find((e) => e.data.entityId === entityId && e.data.verificationStatus === 'IN_REVIEW')!;
    assert.deepEqual(
      [stage.eventName, stage.data.verificationPath, stage.data.verificationId],
      ['verification_status_updated', 'universal-kyc', submitted.body.submissionId],
    );
    const feature = events.find((e) => e.eventType === 'feature_access_change' && e.data.entityId === entityId)!;
    assert.deepEqual([feature.eventName, feature.data.access, feature.data.feature.slug], ['feature_access_updated', 'ENABLED', 'card-issuance-api-access']);

    // a REJECTED decision takes the feature away: REMOVED; the decision itself stays in account_status_change
    assert.equal(
      (
        await submit(
          entityId,
          canonicalPayload((p) => (p.provider.status = 'REJECTED')),
        )
      ).status,
      201,
    );
    assert.equal((await uploadPassport(entityId)).status, 201);
    await until('feature removed', (e) =>
      e.some((x) => x.eventType === 'feature_access_change' && x.data.entityId === entityId && x.data.access === 'REMOVED'),
    );
    const decisions = all()
      .filter((e) => e.eventType === 'account_status_change' && e.data.entityId === entityId)
      .map((e) => e.data.status);
    assert.deepEqual(decisions.sort(), ['APPROVED', 'REJECTED']);
  });

  it('token sharing (sync): STARTED then DECIDED naming the request, and no feature event when the features did not change', async () => {
    const [entityId] = await createEntities(stack, key, [`life-sync-${n++}`]);
    const externalId = (await stack.request('GET', `/entity/${entityId}`, { key })).body.externalId;
    const first = await stack.request('POST', '/entity/kyc/import/sync', { key, json: { externalId, shareToken: await donor.token() } });
    assert.equal(first.status, 200, first.text);
    let events = await until(
      'sync decided',
      (e) => stagesOf(e, entityId!).includes('DECIDED') && e.some((x) => x.eventType === 'feature_access_change' && x.data.entityId === entityId),
    );
    assert.deepEqual(stagesOf(events, entityId!).sort(), ['DECIDED', 'STARTED']);
    assert.deepEqual(await recordedStages(entityId!), ['STARTED', 'DECIDED']);
    const started = events.find((e) => e.data.entityId === entityId && e.data.verificationStatus === 'STARTED')!;
    assert.deepEqual([started.data.verificationPath, started.data.verificationId], ['token-sharing', first.body.requestId]);
    // a renewal shares again: a new verification, approved again — the feature stays, so no feature event
    await new Promise((r) => setTimeout(r, 400)); // the sync limit is 3 a second
    const renewal = await stack.request('POST', '/entity/kyc/import/sync', { key, json: { externalId, shareToken: await donor.token() } });
    assert.equal(renewal.status, 200, renewal.text);
    events = await until(
      'renewal decided',
      (e) => stagesOf(e, entityId!).length === 4 && e.filter((x) => x.eventType === 'account_status_change' && x.data.entityId === entityId).length === 2,
    );
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(all().filter((x) => x.eventType === 'feature_access_change' && x.data.entityId === entityId).length, 1);
  });

  it('token sharing (sync) that fails after it started: STARTED then FAILED, and no decision', async () => {
    const [entityId] = await createEntities(stack, key, [`life-failed-${n++}`]);
    const externalId = (await stack.request('GET', `/entity/${entityId}`, { key })).body.externalId;
    const token = await donor.token();
    stack.sim!.state.shareTokens.get(token)!.usedAt = Date.now(); // spent elsewhere before our turn
    await new Promise((r) => setTimeout(r, 400)); // the sync limit is 3 a second
    const res = await stack.request('POST', '/entity/kyc/import/sync', { key, json: { externalId, shareToken: token } });
    assert.equal(res.status, 409, res.text);
    const events = await until('failed', (e) => stagesOf(e, entityId!).includes('FAILED'));
    assert.deepEqual(stagesOf(events, entityId!).sort(), ['FAILED', 'STARTED']);
    assert.deepEqual(await recordedStages(entityId!), ['STARTED', 'FAILED']);
    assert.ok(!events.some((e) => e.eventType === 'account_status_change' && e.data.entityId === entityId));
  });

  it('hosted SDK: WAITING_FOR_PERSON once per round, however many SDK tokens are asked for', async () => {
    const entityId = await person();
    for (let i = 0; i < 2; i++) assert.equal((await stack.request('POST', `/entity/${entityId}/kyc`, { key })).status, 200);
    await until('waiting for the person', (e) => stagesOf(e, entityId).includes('WAITING_FOR_PERSON'));
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(stagesOf(all(), entityId), ['WAITING_FOR_PERSON']);
    const [row] = await stack.db.query<{ n: string }>("SELECT count(*) AS n FROM events WHERE entity_id = $1 AND event_type = 'verification_status_change'", [
      entityId,
    ]);
    assert.equal(Number(row!.n), 1);
  });

  it(
    'reminds a universal KYC submission still without its document once, near its deadline ' + '(fixed clock); not before, not twice, not a complete one',
    async () => {
      const waiting = await person();
      const complete = await person();
      const s = await submit(waiting, canonicalPayload());
      assert.equal(s.status, 201, s.text);
      const deadline = Date.parse(s.body.deadlineAt);
      // the wait is an hour: half of it is the lead
      assert.equal(await remindWaitingSubmissions(stack.db, new Date(deadline - 31 * 60_000)), 0, 'not due yet');
      const c = await submit(complete, canonicalPayload());
      await uploadPassport(complete);
      await until('complete one decided', (e) => stagesOf(e, complete).includes('DECIDED'));
      const near = new Date(deadline - 29 * 60_000);
      assert.ok(c.status === 201);
      const sent = await remindWaitingSubmissions(stack.db, near);
      assert.ok(sent >= 1);
      assert.equal(await remindWaitingSubmissions(stack.db, near), 0, 'once');
      const events = await until('reminder', (e) => e.some((x) => x.eventType === 'reminder' && x.data.entityId === waiting));
      const reminder = events.find((x) => x.eventType === 'reminder' && x.data.entityId === waiting)!;
      assert.equal(reminder.eventName, 'action_required_reminder');
      assert.deepEqual(
        [reminder.data.reminderFor, reminder.data.submissionId, reminder.data.deadlineAt, reminder.data.waitingFor],
        ['universal-kyc-document', s.body.submissionId, s.body.deadlineAt, ['ukyc-id-document']],
      );
      assert.match(reminder.data.message, /upload/);
      assert.ok(!events.some((x) => x.eventType === 'reminder' && x.data.entityId === complete));
      assert.equal(await remindWaitingSubmissions(stack.db, new Date(deadline + 1000)), 0, 'past the deadline: too late to remind');
    },
  );

  it('reminds a KYB submission whose declared owners are not all verified, naming the undecided ones (fixed clock)', async () => {
    const company = await world.entity(stack, key, `life-kyb-${n++}`, 'BUSINESS');
    const [decided, undecided] = [await person(), await person()];
    // a submission as POST /ukyb/submit opens it (the KYB flow itself is tested in kyb.test.ts); one owner decided
    const submissionId = randomUUID();
    const created = new Date(Date.now() - 29 * 86_400_000);
    const deadline = new Date(created.getTime() + 30 * 86_400_000);
    await stack.db.query(
      "INSERT INTO kyb_submissions (id, business_id, entity_id, owners, status, deadline_at, created_at) VALUES ($1, $2, $3, $4, 'waiting', $5, $6)",
      [submissionId, businessId, company, [decided, undecided], deadline, created],
    );
    await approveDirectly(stack.db, decided, `app-${n++}`);
    assert.equal(await remindWaitingSubmissions(stack.db, new Date(deadline.getTime() - 25 * 3600_000)), 0, 'more than a day left');
    const near = new Date(deadline.getTime() - 23 * 3600_000);
    assert.ok((await remindWaitingSubmissions(stack.db, near)) >= 1);
    const events = await until('kyb reminder', (e) => e.some((x) => x.eventType === 'reminder' && x.data.entityId === company));
    const reminder = events.find((x) => x.eventType === 'reminder' && x.data.entityId === company)!;
    assert.deepEqual([reminder.data.reminderFor, reminder.data.submissionId, reminder.data.waitingFor], ['kyb-owners', submissionId, [undecided]]);
    assert.equal(await remindWaitingSubmissions(stack.db, near), 0, 'once');
  });

  it('announces a feature new to the catalog to each subscribed business once, and the features it already had to nobody', async () => {
    const extra = {
      ...features[0]!,
      id: '9d6c1c1e-7a0b-4a43-9b56-2f1d3c4e5a60',
      slug: 'virtual-cards',
      name: 'Virtual cards',
      description: 'Cards without plastic.',
      requirements: [],
    };
    // the catalog as migrated (013) is not new; a feature added since is, once (business-cardholder, 1.1.0) — unless housekeeping told it already
    assert.ok((await announceNewFeatures(stack.db, features, new Date())) <= features.length - 2);
    assert.equal(await announceNewFeatures(stack.db, features, new Date()), 0, 'the catalog as it is now is not new');
    assert.equal(await announceNewFeatures(stack.db, [...features, extra], new Date()), 1);
    assert.equal(await announceNewFeatures(stack.db, [...features, extra], new Date()), 0, 'once');
    const events = await until('new feature', (e) => e.some((x) => x.eventType === 'new_feature' && x.data.feature.slug === 'virtual-cards'));
    const mine = events.filter((x) => x.eventType === 'new_feature' && x.data.feature.slug === 'virtual-cards');
    assert.equal(mine.length, 1);
    assert.deepEqual(
      [mine[0]!.eventName, mine[0]!.businessId, mine[0]!.data.feature.slug, 'entityId' in mine[0]!.data],
      ['feature_catalog_updated', businessId, 'virtual-cards', false],
    );
    const quiet = await stack.db.query('SELECT 1 FROM events WHERE business_id = $1 AND event_type = $2', [quietBusinessId, 'new_feature']);
    assert.equal(quiet.length, 0);
  });

  it('every event delivered in this file is exactly as the API description documents it, and every subscribable type is documented', () => {
    assert.deepEqual([...DOCUMENTED_EVENT_TYPES].sort(), [...EVENT_TYPES].sort());
    const seen = new Set<string>();
    for (const e of all()) {
      const body = JSON.parse(e.raw.toString());
      const schema = eventBodySchema(e.eventType);
      assert.ok(schema, e.eventType);
      // parsing drops what the schema does not name: equal means nothing undocumented was sent
      assert.deepEqual(schema.parse(body), body, `${e.eventType} as documented`);
      seen.add(e.eventType);
    }
    assert.deepEqual([...seen].sort(), ['account_status_change', 'feature_access_change', 'new_feature', 'reminder', 'verification_status_change']);
  });

  it('nothing of the new types is recorded for a business that took only decisions', async () => {
    const entityId = await person(quietKey);
    assert.equal((await submit(entityId, canonicalPayload(), quietKey)).status, 201);
    assert.equal((await uploadPassport(entityId, quietKey)).status, 201);
    await until('quiet decision', (e) => e.some((x) => x.eventType === 'account_status_change' && x.data.entityId === entityId));
    const rows = await stack.db.query<{ event_type: string }>('SELECT event_type FROM events WHERE business_id = $1', [quietBusinessId]);
    assert.deepEqual([...new Set(rows.map((r) => r.event_type))], ['account_status_change']);
  });

  it('the new types do not satisfy the webhook prerequisite: only account_status_change (a person) and kyb_status_change (a business) do', async () => {
    const { apiKey } = await stack.newBusiness({ name: 'Lifecycle only' });
    await subscribe(apiKey, LIFECYCLE);
    const entityId = await person(apiKey);
    const refused = await submit(entityId, canonicalPayload(), apiKey);
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.code, '0707000100');
    const sdk = await stack.request('POST', `/entity/${entityId}/kyc`, { key: apiKey });
    assert.equal(sdk.status, 409, sdk.text);
    await subscribe(apiKey, ['account_status_change']);
    assert.equal((await submit(entityId, canonicalPayload(), apiKey)).status, 201);
  });
});
