// GET /entity/{entityId}/history (issue 21): an entity's story for its business, oldest first —
// created, requirements, the verification's stages with their provenance (batch and row), the
// events with each subscription's delivery outcome, the feature change — and never a decision's
// outcome (interface 1.4). Real workers, the simulator over HTTP, real receivers; the stages come
// from the verification's own rows, and from its verification_status_change events where the
// business subscribed to them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { csvOf, donorAt, upload, waitForBatch, type Donor } from '../helpers/imports.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

const V = { 'Accept-Version': 'v1.0' };
const CARD_ISSUANCE = 'card-issuance-api-access';

describe('entity history', () => {
  let stack: Stack;
  let ok: Receiver;
  let down: Receiver;
  let donor: Donor;
  let n = 0;

  before(async () => {
    stack = await startStack({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', PROVIDER_RATE_LIMIT_PER_SECOND: '200' } });
    ok = await startReceiver();
    down = await startReceiver();
    down.answer({ status: 503 });
    donor = donorAt(stack);
  });
  after(async () => {
    await ok.close();
    await down.close();
    await stack.close();
  });

  const subscribe = async (key: string, types: string[], url: string) => {
    const res = await stack.request('POST', '/notification', { key, json: { notificationChannel: 'WEBHOOK', notificationTypes: types, webhookUrl: url } });
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  };
  const history = (key: string, entityId: string, query = '') => stack.request('GET', `/entity/${entityId}/history${query}`, { key, headers: V });

  /** An individual created with a requirement, then token-shared through a one-row batch until the batch completes. */
  const sharedPerson = async (key: string, scenario: 'complete' | 'missing-address') => {
    const externalId = `history-${n++}`;
    const created = await stack.request('POST', '/entity', {
      key,
      json: { externalId, type: 'INDIVIDUAL', requirements: [{ requirementSlug: 'card-processor-public-token', value: String(100_000_000 + n) }] },
    });
    assert.equal(created.status, 201, created.text);
    const res = await upload(stack, key, csvOf('externalId,shareToken', [[externalId, await donor.token(scenario)]]));
    assert.equal(res.status, 201, res.text);
    assert.equal((await waitForBatch(stack, key, res.body.batchId)).status, 'completed');
    return { entityId: created.body.id as string, batchId: res.body.batchId as string };
  };

  /** Reads the whole history until `ready` holds (deliveries happen after the decision). */
  const until = async (key: string, entityId: string, ready: (items: any[]) => boolean) => {
    let last: Awaited<ReturnType<typeof history>> | undefined;
    return eventually(
      'the history ready',
      async () => {
        last = await history(key, entityId, '?limit=100');
        assert.equal(last.status, 200, last.text);
        return ready(last.body.items) && last;
      },
      { everyMs: 100, state: () => last?.text },
    );
  };

  it('tells a token-shared person’s story: created, requirement, stages with batch and row, events and deliveries, the feature — no outcome', async () => {
    const { apiKey: key } = await stack.newBusiness({ name: 'History, subscribed to everything' });
    const okSub = await subscribe(key, ['account_status_change', 'verification_status_change', 'feature_access_change'], ok.url);
    const downSub = await subscribe(key, ['account_status_change'], down.url);
    const { entityId, batchId } = await sharedPerson(key, 'complete');

    const decisionDelivered = (items: any[]) => {
      const decision = items.find((i) => i.kind === 'event' && i.eventType === 'account_status_change');
      const outcomes = Object.fromEntries((decision?.deliveries ?? []).map((d: any) => [d.subscriptionId, d.outcome]));
      return outcomes[okSub] === 'delivered' && outcomes[downSub] === 'failing';
    };
    const res = await until(key, entityId, decisionDelivered);
    const items: any[] = res.body.items;
    assert.deepEqual(res.body.meta, { page: 1, limit: 100, totalItems: items.length, totalPages: 1 });

    // oldest first
    const times = items.map((i) => i.at);
    assert.deepEqual(times, [...times].sort());
    assert.deepEqual(items[0], { at: items[0].at, kind: 'entity.created', entityId, type: 'INDIVIDUAL' });
    const requirement = items.find((i) => i.kind === 'requirement.submitted');
    assert.equal(requirement.requirementSlug, 'card-processor-public-token');
    assert.equal(requirement.at, items[0].at, 'submitted with the entity, in its transaction');

    // the verification: STARTED then DECIDED, from batch row 1, each with the event that announced it
    const stages = items.filter((i) => i.kind === 'verification.stage');
    assert.deepEqual(
      stages.map((s) => [s.stage, s.path, s.provenance]),
      [
        ['STARTED', 'token-sharing', { source: 'batch', batchId, rowNumber: 2 }],
        ['DECIDED', 'token-sharing', { source: 'batch', batchId, rowNumber: 2 }],
      ],
    );
    const stageEvents = items.filter((i) => i.kind === 'event' && i.eventType === 'verification_status_change').map((e) => e.eventId);
    assert.deepEqual(
      stages.map((s) => s.eventId),
      stageEvents,
    );
    const decision = items.find((i) => i.kind === 'event' && i.eventType === 'account_status_change');
    assert.equal(stages[1].decisionEventId, decision.eventId, 'DECIDED names the event that carried the decision');
    assert.equal(stages[0].decisionEventId, null);

    // the decision event's delivery to each subscription: delivered to one, failing at the other (503)
    const bySub = Object.fromEntries(decision.deliveries.map((d: any) => [d.subscriptionId, d]));
    assert.deepEqual(
      { ...bySub[okSub], lastAttemptAt: undefined, deliveredAt: undefined },
      { subscriptionId: okSub, outcome: 'delivered', attempts: 1, lastStatusCode: 200, lastAttemptAt: undefined, deliveredAt: undefined },
    );
    assert.ok(bySub[okSub].deliveredAt && bySub[okSub].lastAttemptAt);
    assert.equal(bySub[downSub].outcome, 'failing');
    assert.equal(bySub[downSub].lastStatusCode, 503);
    assert.equal(bySub[downSub].deliveredAt, null);
    assert.deepEqual(
      (await stack.db.query('SELECT count(*)::int AS n FROM events WHERE entity_id = $1', [entityId]))[0]!.n,
      items.filter((i) => i.kind === 'event').length,
      'every event about the entity is listed',
    );

    // the feature change, with its feature_access_change event, after the decision of the same instant
    const feature = items.find((i) => i.kind === 'feature.enabled');
    const featureEvent = items.find((i) => i.kind === 'event' && i.eventType === 'feature_access_change');
    assert.deepEqual([feature.featureSlug, feature.eventId], [CARD_ISSUANCE, featureEvent.eventId]);
    assert.equal(feature.at, stages[1].at);
    assert.ok(items.indexOf(feature) > items.indexOf(stages[1]));

    // no field anywhere says the outcome
    assert.doesNotMatch(res.text, /APPROVED|REJECTED/);
    assert.doesNotMatch(res.text, /rejectLabels|moderationComment|reviewRejectType/);

    // pages of the same list
    const first = await history(key, entityId, '?page=1&limit=2');
    const second = await history(key, entityId, '?page=2&limit=2');
    assert.deepEqual([first.status, second.status], [200, 200]);
    assert.deepEqual([...first.body.items, ...second.body.items], items.slice(0, 4));
    assert.deepEqual(first.body.meta, { page: 1, limit: 2, totalItems: items.length, totalPages: Math.ceil(items.length / 2) });
  });

  it('tells the stages from the verification’s rows when no stage event was recorded, and a rejection says nothing of itself', async () => {
    // subscribed to decisions only: no verification_status_change or feature_access_change is recorded for this business
    const { apiKey: key } = await stack.newBusiness({ name: 'History, decisions only' });
    await subscribe(key, ['account_status_change'], ok.url);
    const approved = await sharedPerson(key, 'complete');
    const rejected = await sharedPerson(key, 'missing-address');

    for (const { entityId, batchId } of [approved, rejected]) {
      const res = await history(key, entityId);
      assert.equal(res.status, 200, res.text);
      const items: any[] = res.body.items;
      const stages = items.filter((i) => i.kind === 'verification.stage');
      assert.deepEqual(
        stages.map((s) => [s.stage, s.provenance, s.eventId]),
        [
          ['STARTED', { source: 'batch', batchId, rowNumber: 2 }, null],
          ['DECIDED', { source: 'batch', batchId, rowNumber: 2 }, null],
        ],
      );
      const decision = items.find((i) => i.kind === 'event');
      assert.deepEqual([decision.eventType, stages[1].decisionEventId], ['account_status_change', decision.eventId]);
      assert.doesNotMatch(res.text, /APPROVED|REJECTED/);
      assert.doesNotMatch(res.text, /rejectLabels|moderationComment|reviewRejectType|missing/i);
    }
    // the feature, from the entity's features (no event announced it); a rejected person never had it
    const approvedItems = (await history(key, approved.entityId)).body.items as any[];
    const feature = approvedItems.find((i) => i.kind === 'feature.enabled');
    assert.deepEqual([feature.featureSlug, feature.eventId], [CARD_ISSUANCE, null]);
    const rejectedItems = (await history(key, rejected.entityId)).body.items as any[];
    assert.equal(rejectedItems.filter((i) => i.kind.startsWith('feature.')).length, 0);
    // the history is the same length whatever the outcome: it cannot hint at it
    assert.deepEqual(
      approvedItems.filter((i) => !i.kind.startsWith('feature.')).map((i) => i.kind),
      rejectedItems.map((i) => i.kind),
    );
  });

  it("answers 404 for another business's entity, an unknown id and a sealed record; 400 for a bad page or no Accept-Version", async () => {
    const { apiKey: key } = await stack.newBusiness({ name: 'History, owner' });
    const { apiKey: other } = await stack.newBusiness({ name: 'History, someone else' });
    const created = await stack.request('POST', '/entity', { key, json: { externalId: `history-${n++}`, type: 'INDIVIDUAL' } });
    assert.equal(created.status, 201, created.text);
    const entityId: string = created.body.id;
    assert.equal((await history(key, entityId)).status, 200);

    for (const [k, id] of [
      [other, entityId],
      [key, randomUUID()],
    ] as const) {
      const res = await history(k, id);
      assert.equal(res.status, 404, res.text);
      assert.deepEqual(res.body, { code: '0702000100', message: res.body.message, parameter: 'entityId' });
    }
    await stack.db.query('UPDATE entity_records SET sealed_at = now() WHERE id = $1', [entityId]);
    assert.equal((await history(key, entityId)).status, 404, 'a sealed record is gone from the API');

    const live = await stack.request('POST', '/entity', { key, json: { externalId: `history-${n++}`, type: 'INDIVIDUAL' } });
    for (const query of ['?page=0', '?page=x', '?limit=101', '?limit=0', '?sort=asc']) {
      const res = await history(key, live.body.id, query);
      assert.equal(res.status, 400, `${query}: ${res.text}`);
      assert.equal(res.body.code, '0000000300', res.text);
    }
    const bad = await stack.request('GET', '/entity/not-a-uuid/history', { key, headers: V });
    assert.equal(bad.status, 400, bad.text);
    const unversioned = await stack.request('GET', `/entity/${live.body.id}/history`, { key });
    assert.equal(unversioned.status, 400, unversioned.text);
  });
});
