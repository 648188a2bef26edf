// A test event and the events feed (issue 38, item 6): POST /notification/{id}/test sends a signed
// event of its own type to that subscription alone and decides nothing; GET /events lists a
// business's events oldest first by a per-business `sequence` that every body carries, paged by
// `after`, and an event that commits later never gets a smaller sequence than one already read.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { eventBodySchema } from '../../api/webhook-events.ts';
import { linkNow } from '../../store/audit-chainer.ts';
import { recordEvent, recordEvents } from '../../store/events.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, testSealingRing, type Stack } from '../helpers/stack.ts';
import { createSecretBox } from '../../domain/secret-box.ts';

describe('test events and the events feed', () => {
  let stack: Stack;
  let receiver: Receiver;
  const V = { 'accept-version': 'v1.0' };

  before(async () => {
    // 2 redelivery requests a second per business (a fixed window): 15 at once always meet the limit, however slow the machine
    stack = await startStack({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', WEBHOOK_REDELIVERIES_PER_SECOND: '2' } });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await stack.close();
  });

  const subscribe = async (key: string, types: string[], url = receiver.url) => {
    const res = await stack.request('POST', '/notification', { key, json: { notificationChannel: 'WEBHOOK', notificationTypes: types, webhookUrl: url } });
    assert.equal(res.status, 201, res.text);
    return res.body as { id: string; secret: string };
  };
  const feed = async (key: string, query = '') => {
    const res = await stack.request('GET', `/events${query}`, { key, headers: V });
    assert.equal(res.status, 200, res.text);
    return res.body as {
      items: {
        eventId: string;
        sequence: number;
        entityId: string | null;
        eventType: string;
        eventName: string;
        payload: { sequence: number };
        deliveries: Record<string, number>;
      }[];
      meta: { limit: number; after: number; lastSequence: number; hasMore: boolean };
    };
  };
  /** Records an event for the business as a decision would (one subscription takes its type). */
  const record = (businessId: string, n: string, q: Parameters<typeof recordEvent>[0] = stack.db) =>
    recordEvent(q, {
      businessId,
      entityId: null,
      eventName: 'feature_catalog_updated',
      eventType: 'new_feature',
      payload: (eventId) => ({ eventName: 'feature_catalog_updated', eventType: 'new_feature', data: { eventId, n } }),
      sourceKey: `feed-test:${businessId}:${n}`,
    });

  it('sends a signed test event to that subscription alone, now, and decides nothing', async () => {
    const { apiKey: key, businessId } = await stack.newBusiness();
    const { apiKey: otherKey } = await stack.newBusiness();
    const target = await subscribe(key, ['reminder']);
    const bystander = await startReceiver();
    try {
      await subscribe(
        key,
        ['account_status_change', 'kyb_status_change', 'verification_status_change', 'feature_access_change', 'new_feature', 'reminder'],
        bystander.url,
      );
      const seen = receiver.received.length;
      const res = await stack.request('POST', `/notification/${target.id}/test`, { key });
      assert.equal(res.status, 202, res.text);
      assert.equal(res.body.subscriptionId, target.id);
      const got = (await receiver.waitFor(seen + 1))[seen]!;
      const body = new Webhook(target.secret).verify(got.body.toString(), got.headers as Record<string, string>) as Record<string, unknown>;
      assert.deepEqual(eventBodySchema('test')!.parse(body), body, 'as the API description documents it');
      assert.deepEqual([body.eventName, body.eventType, body.businessId], ['webhook_test', 'test', businessId]);
      assert.deepEqual(body.data, { ...(body.data as object), eventId: res.body.eventId, subscriptionId: target.id });
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(bystander.received.length, 0, "the business's other subscription, though it takes every type, gets nothing");
      // it decides nothing: no decision, no entity, no audit entry but the event's own
      const [decisions] = await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM record_decisions WHERE business_id = $1', [businessId]);
      assert.equal(Number(decisions!.n), 0);
      const { items } = await feed(key);
      assert.deepEqual(
        items.map((i) => [i.eventType, i.eventId]),
        [['test', res.body.eventId]],
      );
      assert.equal((await stack.request('POST', `/notification/${target.id}/test`, { key: otherKey })).status, 404, "another business's subscription");
      assert.equal((await stack.request('POST', `/notification/${crypto.randomUUID()}/test`, { key })).status, 404);
    } finally {
      await bystander.close();
    }
  });

  it('limits test events and secret rotations with the redelivery requests: beyond, 429 and nothing sent or changed', async () => {
    const { apiKey: key, businessId } = await stack.newBusiness();
    const sub = await subscribe(key, ['reminder']);
    const answers = await Promise.all(Array.from({ length: 15 }, () => stack.request('POST', `/notification/${sub.id}/test`, { key })));
    const refused = answers.filter((a) => a.status === 429);
    assert.ok(refused.length > 0, 'some refused');
    assert.ok(refused.every((a) => a.headers.get('retry-after')));
    const [events] = await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE business_id = $1', [businessId]);
    assert.equal(Number(events!.n), answers.filter((a) => a.status === 202).length, 'a refused request records no event');
    const { secret } = (await stack.request('GET', `/notification/${sub.id}/secret`, { key })).body as { secret: string };
    await new Promise((r) => setTimeout(r, 1100)); // the bucket the test events emptied refills
    const rotations = await Promise.all(Array.from({ length: 15 }, () => stack.request('POST', `/notification/${sub.id}/secret/rotate`, { key })));
    assert.ok(rotations.some((r) => r.status === 429));
    const issued = rotations.filter((r) => r.status === 200).map((r) => r.body.secret as string);
    // read where it is kept (a GET now might meet the general per-business limit after this burst)
    const [stored] = await stack.db.query<{ s: string }>('SELECT secret_sealed AS s FROM notification_subscriptions WHERE id = $1', [sub.id]);
    const now = createSecretBox(testSealingRing()).open(sub.id, stored!.s);
    assert.ok(issued.length > 0, 'some accepted');
    assert.ok(issued.includes(now) && now !== secret, 'the secret is one an accepted rotation issued');
    await linkNow(stack.db, businessId);
    const [rotated] = await stack.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM audit_log WHERE action = 'subscription.secret_rotated' AND subject_id = $1",
      [sub.id],
    );
    assert.equal(Number(rotated!.n), issued.length, 'a refused rotation changed nothing');
  });

  it('lists events oldest first by a sequence that every body carries, paged by after, one business at a time', async () => {
    const { apiKey: key, businessId } = await stack.newBusiness();
    const { apiKey: otherKey, businessId: otherId } = await stack.newBusiness();
    await subscribe(key, ['new_feature']);
    await subscribe(otherKey, ['new_feature']);
    for (let i = 0; i < 5; i++) await record(businessId, `a${i}`);
    await record(otherId, 'b0');

    assert.equal((await stack.request('GET', '/events', { key })).status, 400, 'Accept-Version is required');
    const all = await feed(key, '?limit=100');
    assert.deepEqual(
      all.items.map((i) => i.sequence),
      [1, 2, 3, 4, 5],
    );
    assert.deepEqual(all.meta, { limit: 100, after: 0, lastSequence: 5, hasMore: false });
    for (const i of all.items) assert.equal(i.payload.sequence, i.sequence, 'the body carries the same sequence');
    const [stored] = await stack.db.query<{ body: string }>('SELECT body FROM events WHERE id = $1', [all.items[2]!.eventId]);
    assert.match(stored!.body, /,"sequence":3\}$/, 'in the bytes every delivery sends');
    assert.deepEqual(
      (await feed(otherKey)).items.map((i) => i.sequence),
      [1],
      'each business counts its own',
    );

    // page by page, each page after the last sequence read
    const walked: number[] = [];
    let cursor = 0;
    for (;;) {
      const page = await feed(key, `?limit=2&after=${cursor}`);
      walked.push(...page.items.map((i) => i.sequence));
      cursor = page.meta.lastSequence;
      if (!page.meta.hasMore) break;
    }
    assert.deepEqual(walked, [1, 2, 3, 4, 5]);
    const empty = await feed(key, `?after=${cursor}`);
    assert.deepEqual([empty.items.length, empty.meta.lastSequence, empty.meta.hasMore], [0, 5, false]);

    // the delivery summary: each event went to the one subscription
    assert.deepEqual(Object.keys(all.items[0]!.deliveries).sort(), ['canceled', 'delivered', 'failed', 'pending', 'total']);
    assert.equal(all.items[0]!.deliveries.total, 1);
    for (const [bad, parameter] of [
      ['?after=-1', 'after'],
      ['?after=x', 'after'],
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?cursor=1', 'cursor'],
    ]) {
      const res = await stack.request('GET', `/events${bad}`, { key, headers: V });
      assert.deepEqual([res.status, res.body.code, res.body.parameter], [400, '0000000300', parameter], bad);
    }
  });

  it('numbers the events of one transaction, and of a batch, in turn; hides the events of an entity since deleted', async () => {
    const { apiKey: key, businessId } = await stack.newBusiness();
    await subscribe(key, ['new_feature', 'feature_access_change']);
    await stack.db.tx(async (q) => {
      await record(businessId, 'one', q);
      await record(businessId, 'two', q);
      await recordEvents(
        q,
        ['x', 'y', 'z'].map((n) => ({
          businessId,
          entityId: null,
          eventName: 'feature_access_updated',
          eventType: 'feature_access_change',
          payload: (eventId: string) => ({ eventName: 'feature_access_updated', eventType: 'feature_access_change', data: { eventId, n } }),
          sourceKey: `feed-batch:${businessId}:${n}`,
        })),
      );
    });
    const all = await feed(key);
    assert.deepEqual(
      all.items.map((i) => [i.sequence, i.payload.sequence]),
      [1, 2, 3, 4, 5].map((n) => [n, n]),
    );
    // an event about an entity: listed while the entity exists, gone with it
    const created = await stack.request('POST', '/entity', { key, json: { externalId: 'feed-entity', type: 'INDIVIDUAL' } });
    assert.equal(created.status, 201, created.text);
    const entityId = created.body.id as string;
    await recordEvent(stack.db, {
      businessId,
      entityId,
      eventName: 'feature_catalog_updated',
      eventType: 'new_feature',
      payload: (eventId) => ({ eventName: 'feature_catalog_updated', eventType: 'new_feature', data: { eventId, entityId } }),
      sourceKey: `feed-entity:${entityId}`,
    });
    assert.deepEqual(
      (await feed(key, '?after=5')).items.map((i) => [i.sequence, i.entityId]),
      [[6, entityId]],
    );
    assert.equal((await stack.request('DELETE', `/entity/${entityId}`, { key })).status, 204);
    assert.deepEqual((await feed(key, '?after=5')).items, [], 'what is deleted is gone from the feed too');
  });

  it('numbers an event when it commits: one committed later never has a smaller sequence than one already read', async () => {
    const { apiKey: key, businessId } = await stack.newBusiness();
    await subscribe(key, ['new_feature']);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let recorded!: () => void;
    const inserted = new Promise<void>((r) => (recorded = r));
    // the first event is inserted, then its transaction stays open while a second one commits
    const slow = stack.db.tx(async (q) => {
      await record(businessId, 'slow', q);
      recorded();
      await held;
    });
    await inserted;
    await record(businessId, 'quick');
    const read = await feed(key);
    assert.deepEqual(
      read.items.map((i) => i.sequence),
      [1],
      'the committed event is 1; the open one has no number yet',
    );
    release();
    await slow;
    // an event written by a process of the earlier release (a rolling deploy): no placeholder in its
    // body, which stays as it was; numbered in the feed all the same
    const legacy = JSON.stringify({ eventName: 'feature_catalog_updated', eventType: 'new_feature', businessId, data: { n: 'legacy' } });
    const [{ id: legacyId }] = (await stack.db.query<{ id: string }>(
      `INSERT INTO events (id, business_id, entity_id, event_name, event_type, payload, body, source_key)
       VALUES (gen_random_uuid(), $1, NULL, 'feature_catalog_updated', 'new_feature', $2::jsonb, $3, gen_random_uuid()::text) RETURNING id`,
      [businessId, legacy, legacy],
    )) as [{ id: string }];
    const [row] = await stack.db.query<{ body: string; sequence: string }>('SELECT body, sequence FROM events WHERE id = $1', [legacyId]);
    assert.deepEqual([row!.body, Number(row!.sequence)], [legacy, 3]);
    const next = await feed(key, `?after=${read.meta.lastSequence}`);
    assert.deepEqual(
      next.items.map((i) => [i.sequence, (i.payload as unknown as { data: { n: string } }).data.n]),
      [
        [2, 'slow'],
        [3, 'legacy'],
      ],
      'the reader that resumes after 1 finds it',
    );
  });
});
