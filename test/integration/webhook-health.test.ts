// Endpoints that fail for days (issue 23): a subscription's health in its read, in the audit log and
// in metrics; disabled after WEBHOOK_DISABLE_AFTER_MS (shortened here) with its deliveries held, not
// failed; enabled by request; a receiver back after an outage gets its waiting deliveries at once,
// each keeping its place in its retry schedule; a short run of failures leaves each delivery on its
// own slot. On the real pipeline: the API, workers and dispatchers on the run's Temporal dev server
// and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createWebhookSender } from '../../activities/webhook-send.ts';
import { createWebhookActivities } from '../../activities/webhooks.ts';
import { errorCatalogue } from '../../domain/errors.ts';
import { webhookRetryWorkflowId } from '../../contract/webhook-retry.ts';
import { createLogger } from '../../runtime/logger.ts';
import { recordAttempts } from '../../store/deliveries.ts';
import { probeFailingSubscriptions, reconcileHeldDeliveries } from '../../store/subscription-health.ts';
import { recordTestEvent } from '../helpers/events.ts';
import { eventually } from '../helpers/eventually.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, testWebhookKeys, type Stack } from '../helpers/stack.ts';
import { entity, subscribe } from '../helpers/world.ts';

// an hour here: a test makes a subscription "fail for longer" by moving its failing_since back
const DISABLE_AFTER_MS = 3_600_000;

describe('webhook subscription health', () => {
  let stack: Stack;
  const receivers: Receiver[] = [];

  before(async () => {
    stack = await startStack({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', WEBHOOK_DISABLE_AFTER_MS: String(DISABLE_AFTER_MS) } });
  });
  after(async () => {
    for (const r of receivers) await r.close();
    await stack.close();
  });

  async function receiver() {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  }

  async function subscribed(url: string) {
    const { businessId, apiKey: key } = await stack.newBusiness();
    const res = await subscribe(stack, key, url);
    assert.deepEqual(res.body.health, { state: 'healthy', failingSince: null, disabledAt: null });
    return { businessId, key, id: res.body.id as string };
  }

  const read = async (key: string, id: string) => {
    const res = await stack.request('GET', `/notification/${id}`, { key });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  const until = <T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000, state?: () => Promise<unknown>) =>
    eventually(what, probe, { timeoutMs, state });

  /** A subscription's row and its deliveries' rows, as they stand. */
  const stateOf = async (subscriptionId: string) => ({
    subscription: await stack.db.query('SELECT failing_since, next_probe_at, disabled_at FROM notification_subscriptions WHERE id = $1', [subscriptionId]),
    deliveries: await stack.db.query(
      `SELECT status, mode, run, attempts, run_attempts, next_attempt_at, lease_until, resumed_slot, last_error, now() AS now
         FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY created_at`,
      [subscriptionId],
    ),
  });

  const deliveriesOf = (subscriptionId: string) =>
    stack.db.query<{ id: string; status: string; mode: string; run: number; attempts: number; run_attempts: number }>(
      'SELECT id, status, mode, run, attempts, run_attempts FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY created_at',
      [subscriptionId],
    );

  const auditOf = (businessId: string, action: string) =>
    stack.db
      .query<{ details: string; actor_type: string }>('SELECT details, actor_type FROM audit_log WHERE business_id = $1 AND action = $2 ORDER BY seq', [
        businessId,
        action,
      ])
      .then((rows) => rows.map((r) => ({ ...r, details: JSON.parse(r.details) as Record<string, unknown> })));

  const gauge = async (health: string) => {
    const text = (await stack.request('GET', '/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`vouch_webhook_subscriptions{health="${health}"}`));
    assert.ok(line, `the gauge has a ${health} line`);
    return Number(line.split(' ').at(-1));
  };

  it('is failing from its first failed attempt, disabled after WEBHOOK_DISABLE_AFTER_MS with its deliveries held, and enabled by request', async () => {
    const r = await receiver();
    r.answer({ status: 503 });
    const { businessId, key, id } = await subscribed(r.url);
    await recordTestEvent(stack.db, businessId, 'health-1');
    const failing = await until('failing', async () => {
      const s = await read(key, id);
      return s.health.state === 'failing' && s.health;
    });
    assert.equal(failing.disabledAt, null);
    assert.ok(Date.parse(failing.failingSince) <= Date.now());
    assert.equal(await gauge('failing'), 1);

    // failing for longer than WEBHOOK_DISABLE_AFTER_MS, as if it had: the next failed attempt disables it
    const [{ since }] = (await stack.db.query<{ since: Date }>(
      'UPDATE notification_subscriptions SET ' +
        "failing_since = failing_since - interval '2 hours', next_probe_at = now() + interval '1 day' WHERE id = $1 RETURNING failing_since AS since",
      [id],
    )) as [{ since: Date }];
    await recordTestEvent(stack.db, businessId, 'health-2');
    const disabled = await until('disabled', async () => {
      const s = await read(key, id);
      return s.health.state === 'disabled' && s.health;
    });
    assert.equal(disabled.failingSince, since.toISOString(), 'failing since the same first failure');
    const [entry] = await until(
      'the audit entry',
      async () => (await auditOf(businessId, 'subscription.disabled')).length > 0 && auditOf(businessId, 'subscription.disabled'),
    );
    assert.equal(entry!.details.failingSince, since.toISOString());
    assert.equal(entry!.details.heldDeliveries, 2);
    assert.equal(entry!.details.reason, 'failing');
    assert.equal(await gauge('disabled'), 1);

    // held: kept pending, attempted by no one (not even once their slots have come); a new event is held at once
    const sent = r.received.length;
    await recordTestEvent(stack.db, businessId, 'health-3');
    const held = await deliveriesOf(id);
    assert.deepEqual(
      held.map((d) => [d.status, d.mode]),
      Array(3).fill(['pending', 'held']),
    );
    await stack.db.query("UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 minute' WHERE subscription_id = $1", [id]);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // a few turns of the dispatchers' promotion (every 250 ms)
    assert.equal(r.received.length, sent, 'nothing was sent to a disabled subscription');

    // a disabled subscription meets no webhook prerequisite (its decisions would be held): 409, naming it and how to enable it
    const person = await entity(stack, key, `health-person-${id}`);
    const unmet = await stack.request('POST', `/entity/${person}/kyc`, { key });
    assert.equal(unmet.status, 409, unmet.text);
    assert.equal(unmet.body.code, errorCatalogue.webhookRegistrationRequired.code);
    assert.ok(unmet.body.message.includes(`(${id}) is disabled`) && unmet.body.message.includes(`POST /notification/${id}/enable`), unmet.body.message);

    // another business cannot enable it
    const other = await stack.newBusiness();
    const refused = await stack.request('POST', `/notification/${id}/enable`, { key: other.apiKey });
    assert.equal(refused.status, 404, refused.text);
    assert.deepEqual([refused.body.code, refused.body.parameter], [errorCatalogue.subscriptionNotFound.code, 'notificationId']);
    assert.equal((await read(key, id)).health.state, 'disabled');

    // enabled: healthy, and every held delivery goes out now
    r.answer({ status: 200 });
    const enabled = await stack.request('POST', `/notification/${id}/enable`, { key });
    assert.equal(enabled.status, 200, enabled.text);
    assert.deepEqual(enabled.body.health, { state: 'healthy', failingSince: null, disabledAt: null });
    await until('every held delivery delivered', async () => (await deliveriesOf(id)).every((d) => d.status === 'delivered'));
    const [enabledEntry] = await until(
      'the audit entry',
      async () => (await auditOf(businessId, 'subscription.enabled')).length > 0 && auditOf(businessId, 'subscription.enabled'),
    );
    assert.deepEqual([enabledEntry!.details.by, enabledEntry!.details.resumedDeliveries, enabledEntry!.actor_type], ['request', 3, 'api_key']);
    assert.equal(await gauge('disabled'), 0);
    assert.equal((await stack.request('POST', `/notification/${id}/enable`, { key })).status, 200, 'enabling a healthy subscription is harmless');
    const met = await stack.request('POST', `/entity/${person}/kyc`, { key });
    assert.equal(met.status, 200, `enabled, it meets the prerequisite again: ${met.text}`);
  });

  it('sends the waiting deliveries at once when the receiver answers after an outage, not at their next retry slot', async () => {
    const r = await receiver();
    r.answer({ status: 503 });
    const { businessId, key, id } = await subscribed(r.url);
    for (let i = 0; i < 5; i++) await recordTestEvent(stack.db, businessId, `outage-${i}`);
    // the first attempt and the first retry (5 s later) fail: the next slot is 5 minutes away (±20 %)
    await until(
      'five deliveries waiting for their third attempt',
      async () => {
        const ds = await deliveriesOf(id);
        return ds.length === 5 && ds.every((d) => d.mode === 'waiting' && d.attempts === 2);
      },
      60_000,
    );
    const [{ slot }] = (await stack.db.query<{ slot: Date }>(
      "SELECT min(next_attempt_at) AS slot FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'pending'",
      [id],
    )) as [{ slot: Date }];
    // the outage has lasted longer than RESUME_AFTER_FAILING_MS (a minute), as if it had
    // (no probe meanwhile: this is the path of a new event's success; probes have a test of their own)
    await stack.db.query(
      "UPDATE notification_subscriptions SET failing_since = failing_since - interval '2 minutes', next_probe_at = now() + interval '1 day' WHERE id = $1",
      [id],
    );
    r.answer({ status: 200 });
    await recordTestEvent(stack.db, businessId, 'outage-back');
    const delivered = await until(
      'all six delivered',
      async () => {
        const ds = await deliveriesOf(id);
        return ds.length === 6 && ds.every((d) => d.status === 'delivered') && ds;
      },
      30_000,
      () => stateOf(id),
    );
    assert.ok(Date.now() < slot.getTime() - 60_000, 'long before the next retry slot');
    const resumed = delivered.filter((d) => d.run === 2);
    assert.equal(resumed.length, 5, 'the five went back to the dispatcher as a new run');
    assert.ok(
      resumed.every((d) => d.attempts === 3 && d.run_attempts === 3),
      'each kept its place in its retry schedule',
    );
    assert.equal((await read(key, id)).health.state, 'healthy');
    assert.equal(r.received.length, 5 + 5 + 1 + 5, 'two failed attempts each, the event that succeeded, the resumed five: nothing more');
  });

  it('leaves each delivery on its own schedule after a short run of failures', async () => {
    const r = await receiver();
    r.answer({ status: 503 });
    const { businessId, key, id } = await subscribed(r.url);
    await recordTestEvent(stack.db, businessId, 'refused-once');
    await until('waiting', async () => (await deliveriesOf(id))[0]?.mode === 'waiting');
    r.answer({ status: 200 });
    await recordTestEvent(stack.db, businessId, 'accepted');
    await until('healthy', async () => (await read(key, id)).health.state === 'healthy');
    const [first] = await deliveriesOf(id);
    assert.equal(first!.run, 1, 'not resumed as a new run: it keeps its slot');
  });

  it("attempts a delivery only for the run that owns it (an earlier release's retry workflow)", async () => {
    const r = await receiver();
    const { businessId, id } = await subscribed(r.url);
    await recordTestEvent(stack.db, businessId, 'runs');
    const [d] = await until('delivered', async () => {
      const ds = await deliveriesOf(id);
      return ds[0]?.status === 'delivered' && ds;
    });
    // as if redelivered (run 2) and waiting for run 2's retry workflow
    await stack.db.query("UPDATE webhook_deliveries SET status = 'pending', mode = 'workflow', run = 2, next_attempt_at = now() WHERE id = $1", [d!.id]);
    const activities = createWebhookActivities({
      db: stack.db,
      log: createLogger('silent'),
      send: createWebhookSender({ keys: testWebhookKeys(), allowInsecureUrls: true }),
      dispatcher: { maxInFlight: 1, perSubscription: 1, perBusiness: 1, leaseMs: 1, pollMs: 1 },
      disableAfterMs: DISABLE_AFTER_MS,
    });
    const asRun = (run: number) => new MockActivityEnvironment({ workflowExecution: { workflowId: webhookRetryWorkflowId(d!.id, run), runId: 'test' } });
    const sent = r.received.length;
    assert.equal(await asRun(1).run(activities.deliveryDueIn, d!.id), null);
    assert.deepEqual(await asRun(1).run(activities.attemptDelivery, d!.id), { status: 'pending', nextDelayMs: null });
    assert.equal(r.received.length, sent, 'the superseded run sent nothing');
    // a delivery that waits in PostgreSQL (migration 031, or handed over by the reconciler) is no longer the workflow's: it ends, sending nothing
    await stack.db.query("UPDATE webhook_deliveries SET mode = 'waiting', next_attempt_at = now() + interval '1 hour' WHERE id = $1", [d!.id]);
    assert.equal(await asRun(2).run(activities.deliveryDueIn, d!.id), null);
    assert.deepEqual(await asRun(2).run(activities.attemptDelivery, d!.id), { status: 'pending', nextDelayMs: null });
    assert.equal(r.received.length, sent, "a waiting delivery is not the workflow's to send");
    await stack.db.query("UPDATE webhook_deliveries SET mode = 'workflow', next_attempt_at = now() WHERE id = $1", [d!.id]);
    assert.equal(await asRun(2).run(activities.deliveryDueIn, d!.id), 0);
    assert.deepEqual(await asRun(2).run(activities.attemptDelivery, d!.id), { status: 'delivered', nextDelayMs: null });
    assert.equal(r.received.length, sent + 1);
  });

  it('sends early as a probe: a failed early attempt goes back to its slot, its place in the schedule unspent, however often', async () => {
    const r = await receiver();
    r.answer({ status: 503 });
    const { businessId, key, id } = await subscribed(r.url);
    await recordTestEvent(stack.db, businessId, 'probe');
    // the first attempt and the first retry (5 s later) fail: the next slot is minutes away
    const [waiting] = await until('waiting for its third attempt', async () => {
      const ds = await deliveriesOf(id);
      return ds[0]?.attempts === 2 && ds[0].mode === 'waiting' && ds;
    });
    const slotOf = async () =>
      (await stack.db.query<{ at: Date }>('SELECT next_attempt_at AS at FROM webhook_deliveries WHERE id = $1', [waiting!.id]))[0]!.at.getTime();
    const slot = await slotOf();
    for (let probe = 1; probe <= 3; probe++) {
      assert.equal((await stack.request('POST', `/notification/${id}/enable`, { key })).status, 200);
      const [d] = await until(`probe ${probe} recorded`, async () => {
        const ds = await deliveriesOf(id);
        return ds[0]?.attempts === 2 + probe && ds[0].mode === 'waiting' && ds;
      });
      assert.equal(d!.run_attempts, 2, 'its place in the retry schedule is unspent');
      assert.equal(d!.run, 1 + probe, 'each probe a run of its own');
      assert.ok(Math.abs((await slotOf()) - slot) < 1000, 'back to the slot it was waiting for');
    }
  });

  it('moves a delivery on only for the run its attempt was made for (a success always)', async () => {
    const r = await receiver();
    const { businessId, id } = await subscribed(r.url);
    await recordTestEvent(stack.db, businessId, 'stale');
    const [d] = await until('delivered', async () => {
      const ds = await deliveriesOf(id);
      return ds[0]?.status === 'delivered' && ds;
    });
    await stack.db.query(
      "UPDATE webhook_deliveries SET status = 'pending', mode = 'dispatcher', run = 3, next_attempt_at = now() + interval '1 hour' WHERE id = $1",
      [d!.id],
    );
    const attempt = (succeeded: boolean) => ({
      deliveryId: d!.id,
      subscriptionId: id,
      run: 2,
      probe: false,
      attempt: 9,
      url: r.url,
      keyId: null,
      startedAt: new Date(),
      latencyMs: 1,
      httpStatus: succeeded ? 200 : 503,
      error: succeeded ? null : 'HTTP 503',
      succeeded,
      gone: false,
      next: succeeded ? ({ status: 'delivered' } as const) : ({ status: 'pending', delayMs: 1000 } as const),
    });
    const stale = await recordAttempts(stack.db, [attempt(false)], { disableAfterMs: DISABLE_AFTER_MS });
    assert.ok(stale.superseded.has(d!.id));
    const [after] = await deliveriesOf(id);
    assert.deepEqual([after!.status, after!.mode, after!.run], ['pending', 'dispatcher', 3], "run 3's state untouched by run 2's failure");
    const late = await recordAttempts(stack.db, [attempt(true)], { disableAfterMs: DISABLE_AFTER_MS });
    assert.equal(late.superseded.size, 0);
    assert.equal((await deliveriesOf(id))[0]!.status, 'delivered', "a success is a success, whichever run's");
  });

  it('holds a redelivery to a disabled subscription; a new URL (PUT) enables it and its deliveries go there', async () => {
    const down = await receiver();
    down.answer({ status: 503 });
    const { businessId, key, id } = await subscribed(down.url);
    await recordTestEvent(stack.db, businessId, 'put-1');
    await until('failing', async () => (await read(key, id)).health.state === 'failing');
    await stack.db.query(
      "UPDATE notification_subscriptions SET failing_since = failing_since - interval '2 hours', next_probe_at = now() + interval '1 day' WHERE id = $1",
      [id],
    );
    await recordTestEvent(stack.db, businessId, 'put-2');
    await until('disabled', async () => (await read(key, id)).health.state === 'disabled');
    // a delivery that had failed, redelivered while disabled: held with the others
    const [first] = await deliveriesOf(id);
    await stack.db.query("UPDATE webhook_deliveries SET status = 'failed', mode = 'waiting' WHERE id = $1", [first!.id]);
    const redelivered = await stack.request('POST', `/notification/${id}/redeliver`, { key, json: { since: '2020-01-01T00:00:00Z' } });
    assert.equal(redelivered.status, 202, redelivered.text);
    assert.deepEqual(
      (await deliveriesOf(id)).map((d) => [d.status, d.mode]),
      [
        ['pending', 'held'],
        ['pending', 'held'],
      ],
    );
    const sent = down.received.length;
    const fixed = await receiver();
    const put = await stack.request('PUT', `/notification/${id}`, {
      key,
      json: { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: fixed.url },
    });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.health.state, 'healthy');
    await until('both delivered to the new URL', async () => (await deliveriesOf(id)).every((d) => d.status === 'delivered'));
    assert.equal(fixed.received.length, 2);
    assert.equal(down.received.length, sent);
    const [entry] = await until('the audit entry', async () => {
      const entries = await auditOf(businessId, 'subscription.enabled');
      return entries.length > 0 && entries;
    });
    assert.equal(entry!.details.by, 'replaced');
  });

  it('mends held deliveries that do not match their subscription (the reconciler, every minute)', async () => {
    const r = await receiver();
    const { businessId, id } = await subscribed(r.url);
    // an event recorded while the subscription was disabled, committed after it was enabled: held on a healthy subscription
    await stack.db.query("UPDATE notification_subscriptions SET disabled_at = now(), failing_since = now() - interval '6 days' WHERE id = $1", [id]);
    await recordTestEvent(stack.db, businessId, 'mend-1');
    await stack.db.query('UPDATE notification_subscriptions SET disabled_at = NULL, failing_since = NULL WHERE id = $1', [id]);
    assert.equal((await deliveriesOf(id))[0]!.mode, 'held');
    assert.ok((await reconcileHeldDeliveries(stack.db)) >= 1);
    await until('delivered once released', async () => (await deliveriesOf(id))[0]?.status === 'delivered');
    // held for a subscription deleted meanwhile: canceled
    await stack.db.query("UPDATE notification_subscriptions SET disabled_at = now(), failing_since = now() - interval '6 days' WHERE id = $1", [id]);
    await recordTestEvent(stack.db, businessId, 'mend-2');
    await stack.db.query('DELETE FROM notification_subscriptions WHERE id = $1', [id]);
    await reconcileHeldDeliveries(stack.db);
    assert.deepEqual(
      (await deliveriesOf(id)).map((d) => d.status),
      ['delivered', 'canceled'],
    );
  });

  it('disables a subscription at once when its receiver answers 410 Gone, its deliveries held, nothing more sent', async () => {
    const r = await receiver();
    r.answer({ status: 410 });
    const { businessId, key, id } = await subscribed(r.url);
    await recordTestEvent(stack.db, businessId, 'gone-1');
    const disabled = await until('disabled', async () => {
      const s = await read(key, id);
      return s.health.state === 'disabled' && s.health;
    });
    assert.ok(disabled.failingSince && disabled.disabledAt, JSON.stringify(disabled));
    const [entry] = await until(
      'the audit entry',
      async () => (await auditOf(businessId, 'subscription.disabled')).length > 0 && auditOf(businessId, 'subscription.disabled'),
    );
    assert.deepEqual([entry!.details.reason, entry!.details.heldDeliveries], ['gone', 1], 'the delivery answered 410 is held with it');
    await until('its delivery held', async () => (await deliveriesOf(id))[0]?.mode === 'held');
    await recordTestEvent(stack.db, businessId, 'gone-2');
    assert.deepEqual(
      (await deliveriesOf(id)).map((d) => [d.status, d.mode, d.attempts]),
      [
        ['pending', 'held', 1],
        ['pending', 'held', 0],
      ],
    );
    await stack.db.query("UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 minute' WHERE subscription_id = $1", [id]);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // a few turns of the dispatchers
    assert.equal(r.received.length, 1, 'one request: the 410');
    // enabled once the endpoint is back: its held deliveries go out
    r.answer({ status: 200 });
    assert.equal((await stack.request('POST', `/notification/${id}/enable`, { key })).status, 200);
    await until('both delivered', async () => (await deliveriesOf(id)).every((d) => d.status === 'delivered'));
    assert.equal((await read(key, id)).health.state, 'healthy');
    // a 410 from a URL the subscription no longer has (a PUT moved it while the attempt was under way) disables nothing
    const old = await receiver();
    old.answer({ status: 410, delayMs: 1500 });
    const moving = await subscribed(old.url);
    await recordTestEvent(stack.db, moving.businessId, 'gone-moved');
    await old.waitFor(1);
    const fresh = await receiver();
    const put = await stack.request('PUT', `/notification/${moving.id}`, {
      key: moving.key,
      json: { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: fresh.url },
    });
    assert.equal(put.status, 200, put.text);
    await until('the 410 recorded', async () => (await deliveriesOf(moving.id))[0]?.attempts === 1);
    assert.equal((await read(moving.key, moving.id)).health.state, 'failing', 'failing (its attempt failed), not disabled');
    await until('delivered to the new URL at its next slot', async () => (await deliveriesOf(moving.id))[0]?.status === 'delivered');
    assert.equal(fresh.received.length, 1);
    // a 404 is a failure like any other: failing, not disabled
    const other = await receiver();
    other.answer({ status: 404 });
    const second = await subscribed(other.url);
    await recordTestEvent(stack.db, second.businessId, 'not-found');
    await until('failing', async () => (await read(second.key, second.id)).health.state === 'failing');
  });

  it("waits as long as a 429's or 503's Retry-After asks (at most an hour), when longer than the schedule's wait", async () => {
    const r = await receiver();
    const { businessId, id } = await subscribed(r.url);
    const waitAfter = async (behaviour: { status: number; retryAfter?: string }, label: string) => {
      r.answer(behaviour);
      const before = r.received.length;
      await recordTestEvent(stack.db, businessId, label);
      await r.waitFor(before + 1);
      const [d] = await until('recorded', async () => {
        const rows = await stack.db.query<{ id: string; mode: string; attempts: number; wait_s: number }>(
          `SELECT d.id, d.mode, d.attempts, extract(epoch FROM d.next_attempt_at - a.started_at)::float8 AS wait_s
             FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhook_attempts a ON a.delivery_id = d.id
            WHERE d.subscription_id = $1 AND e.source_key LIKE $2`,
          [id, `${label}-%`],
        );
        return rows[0]?.mode === 'waiting' && rows;
      });
      assert.equal(d!.attempts, 1);
      return d!.wait_s;
    };
    const near = (got: number, want: number) => assert.ok(Math.abs(got - want) < 2, `${got} s, not ${want} s`);
    near(await waitAfter({ status: 429, retryAfter: '120' }, 'too-many'), 120);
    near(await waitAfter({ status: 503, retryAfter: new Date(Date.now() + 600_000).toUTCString() }, 'unavailable'), 600);
    near(await waitAfter({ status: 503, retryAfter: '86400' }, 'a-day'), 3600);
    const plain = await waitAfter({ status: 503 }, 'no-header');
    assert.ok(plain >= 4 && plain <= 6.1, `the schedule's first wait (5 s ± 20 %): ${plain} s`);
    const shorter = await waitAfter({ status: 429, retryAfter: '1' }, 'shorter');
    assert.ok(shorter >= 4 && shorter <= 6.1, `a Retry-After shorter than the schedule's wait changes nothing: ${shorter} s`);
    const ignored = await waitAfter({ status: 500, retryAfter: '120' }, 'server-error');
    assert.ok(ignored >= 4 && ignored <= 6.1, `a 500's Retry-After is not read: ${ignored} s`);
  });

  it('probes a subscription failing for over a minute, once per interval, and sends its backlog once a probe succeeds', async () => {
    const r = await receiver();
    r.answer({ status: 503 });
    const { businessId, key, id } = await subscribed(r.url);
    for (let i = 0; i < 3; i++) await recordTestEvent(stack.db, businessId, `probe-${i}`);
    // the first attempt and the first retry (5 s later) fail: the next slots are minutes away
    await until(
      'three deliveries waiting for their third attempt',
      async () => {
        const ds = await deliveriesOf(id);
        return ds.length === 3 && ds.every((d) => d.mode === 'waiting' && d.attempts === 2);
      },
      60_000,
    );
    const before = r.received.length;
    // failing for over a minute, as if it had: the next dispatcher pass probes one delivery, which fails
    await stack.db.query("UPDATE notification_subscriptions SET failing_since = failing_since - interval '2 minutes' WHERE id = $1", [id]);
    await until('one probe', async () => r.received.length === before + 1);
    const [{ next_probe_in_s }] = (await stack.db.query<{ next_probe_in_s: number }>(
      'SELECT extract(epoch FROM next_probe_at - now())::float8 AS next_probe_in_s FROM notification_subscriptions WHERE id = $1',
      [id],
    )) as [{ next_probe_in_s: number }];
    assert.ok(next_probe_in_s > 25 && next_probe_in_s <= 30, `the next probe in 30 s (${next_probe_in_s})`);
    await new Promise((resolve) => setTimeout(resolve, 2500)); // a few passes of the dispatchers
    assert.equal(r.received.length, before + 1, 'one probe per interval');
    const probed = (await deliveriesOf(id)).filter((d) => d.attempts === 3);
    assert.equal(probed.length, 1);
    assert.deepEqual([probed[0]!.mode, probed[0]!.run_attempts], ['waiting', 2], 'a failed probe spends no place in the schedule');
    // the receiver is back; the next probe (its time come, as if 30 s had passed) succeeds and the backlog follows at once
    r.answer({ status: 200 });
    await stack.db.query('UPDATE notification_subscriptions SET next_probe_at = now() WHERE id = $1', [id]);
    await until('every delivery delivered', async () => (await deliveriesOf(id)).every((d) => d.status === 'delivered'));
    assert.equal((await read(key, id)).health.state, 'healthy');
    const [{ next_probe_at }] = (await stack.db.query<{ next_probe_at: Date | null }>('SELECT next_probe_at FROM notification_subscriptions WHERE id = $1', [
      id,
    ])) as [{ next_probe_at: Date | null }];
    assert.equal(next_probe_at, null, 'healthy: no probe pending');
    assert.equal(r.received.length, before + 1 + 3, 'the failed probe, then each delivery once');
  });

  it('does not probe a subscription failing for less than a minute, nor a disabled one', async () => {
    const r = await receiver();
    r.answer({ status: 503 });
    const { businessId, id } = await subscribed(r.url);
    await recordTestEvent(stack.db, businessId, 'no-probe');
    await until('waiting', async () => (await deliveriesOf(id))[0]?.mode === 'waiting');
    const before = r.received.length;
    const probedYet = async () =>
      (await stack.db.query('SELECT 1 FROM notification_subscriptions WHERE id = $1 AND next_probe_at IS NOT NULL', [id])).length > 0 ||
      (await deliveriesOf(id))[0]!.run !== 1;
    await probeFailingSubscriptions(stack.db); // a dispatcher's pass, now
    assert.equal(await probedYet(), false, 'failing for seconds: left to its slot');
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the dispatchers' passes too (the slot is 4 to 6 s away)
    assert.equal(r.received.length, before);
    // disabled (as disabling does: the subscription and its deliveries held, in one transaction)
    await stack.db.tx(async (q) => {
      await q.query("UPDATE notification_subscriptions SET failing_since = now() - interval '2 minutes', disabled_at = now() WHERE id = $1", [id]);
      await q.query("UPDATE webhook_deliveries SET mode = 'held' WHERE subscription_id = $1 AND status = 'pending'", [id]);
    });
    await probeFailingSubscriptions(stack.db);
    assert.equal(await probedYet(), false, 'disabled: no probe');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(r.received.length, before, 'nothing is sent');
  });
});
