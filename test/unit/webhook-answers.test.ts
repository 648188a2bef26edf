// What a receiver's answer means for the delivery (issue 38, item 3): Retry-After on a 429 or 503
// sets the wait before the next attempt when it is longer than the schedule's (bounded to an hour);
// a 410 marks the subscription gone. Each rule with a passing and a failing case.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attemptRecord } from '../../activities/webhook-send.ts';
import { afterAttempt, MAX_RETRY_AFTER_MS, RETRY_DELAYS_MS, retryAfterOf } from '../../domain/webhooks.ts';
import type { DeliveryTarget } from '../../store/deliveries.ts';
import { outcomesBySubscription } from '../../store/subscription-health.ts';

const NOW = Date.parse('2026-11-27T12:00:00Z');

describe('Retry-After', () => {
  it('reads delta-seconds and an HTTP date on a 429 or 503', () => {
    assert.equal(retryAfterOf(429, '120', NOW), 120_000);
    assert.equal(retryAfterOf(503, ' 30 ', NOW), 30_000);
    assert.equal(retryAfterOf(503, 'Fri, 27 Nov 2026 12:10:00 GMT', NOW), 600_000);
  });

  it('is bounded: at most an hour, at least a second (a date in the past, or 0)', () => {
    assert.equal(retryAfterOf(429, '86400', NOW), MAX_RETRY_AFTER_MS);
    assert.equal(retryAfterOf(429, '0', NOW), 1000);
    assert.equal(retryAfterOf(503, 'Fri, 27 Nov 2026 11:00:00 GMT', NOW), 1000);
  });

  it('means nothing on another status, or when it reads as neither form', () => {
    assert.equal(retryAfterOf(500, '120', NOW), undefined);
    assert.equal(retryAfterOf(200, '120', NOW), undefined);
    assert.equal(retryAfterOf(null, '120', NOW), undefined);
    assert.equal(retryAfterOf(429, undefined, NOW), undefined);
    assert.equal(retryAfterOf(429, 'soon', NOW), undefined);
    assert.equal(retryAfterOf(429, '-5', NOW), undefined);
    assert.equal(retryAfterOf(429, '12345678901', NOW), undefined);
  });

  it("lengthens the schedule's wait, never shortens it, and never adds to its ten attempts", () => {
    assert.deepEqual(afterAttempt(1, false, 0.5, 120_000), { status: 'pending', delayMs: 120_000 });
    assert.deepEqual(afterAttempt(1, false, 0.5), { status: 'pending', delayMs: RETRY_DELAYS_MS[0] });
    assert.deepEqual(afterAttempt(2, false, 0.5, 1000), { status: 'pending', delayMs: RETRY_DELAYS_MS[1] }, 'Retry-After: 1 spends no attempt early');
    assert.deepEqual(afterAttempt(10, false, 0.5, 120_000), { status: 'failed' });
  });
});

const target = (over: Partial<DeliveryTarget> = {}): DeliveryTarget => ({
  deliveryId: 'd1',
  eventId: 'e1',
  subscriptionId: 's1',
  businessId: 'b1',
  status: 'pending',
  mode: 'dispatcher',
  sealedSecrets: [],
  run: 1,
  attempts: 0,
  runAttempts: 0,
  body: '{}',
  url: 'https://example.com/hook',
  createdAt: new Date(NOW).toISOString(),
  resumedSlot: null,
  ...over,
});
const result = (httpStatus: number, retryAfterMs?: number) => ({
  url: 'https://example.com/hook',
  startedAt: new Date(NOW),
  keyId: 'k',
  httpStatus,
  latencyMs: 3,
  error: httpStatus < 300 ? null : `HTTP ${httpStatus}`,
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});

describe('an attempt record', () => {
  it('waits what the receiver asked for', () => {
    assert.deepEqual(attemptRecord(target(), result(429, 120_000), 0.5, NOW).next, { status: 'pending', delayMs: 120_000 });
    assert.deepEqual(attemptRecord(target(), result(429), 0.5, NOW).next, { status: 'pending', delayMs: RETRY_DELAYS_MS[0] });
  });

  it('sends a probe back to its slot, or later if the receiver asked for later', () => {
    const slot = new Date(NOW + 60_000).toISOString();
    assert.deepEqual(attemptRecord(target({ resumedSlot: slot }), result(503, 300_000), 0.5, NOW).next, { status: 'pending', delayMs: 300_000 });
    assert.deepEqual(attemptRecord(target({ resumedSlot: slot }), result(503, 1000), 0.5, NOW).next, { status: 'pending', delayMs: 60_000 });
  });

  it('marks a 410 gone, and nothing else', () => {
    assert.equal(attemptRecord(target(), result(410), 0.5, NOW).gone, true);
    assert.equal(attemptRecord(target(), result(404), 0.5, NOW).gone, false);
    assert.equal(attemptRecord(target(), result(200), 0.5, NOW).gone, false);
  });

  it("takes a subscription as gone only when none of its batch's attempts succeeded", () => {
    const at = new Date(NOW);
    const [gone] = outcomesBySubscription([{ subscriptionId: 's1', succeeded: false, gone: true, startedAt: at }]);
    assert.equal(gone!.gone, true);
    const [answered] = outcomesBySubscription([
      { subscriptionId: 's1', succeeded: false, gone: true, startedAt: at },
      { subscriptionId: 's1', succeeded: true, gone: false, startedAt: at },
    ]);
    assert.deepEqual([answered!.gone, answered!.succeeded], [false, true]);
  });
});
