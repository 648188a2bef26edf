// The fleet-wide pace of provider calls (activities/provider-pace.ts): a call waits for its slot, then
// for a place in the window of sends, and counts from just after its request left until a window
// after. However late a process wakes, no window holds more than the cap's sends; a request counts
// from when it left, not from its claim; a claim whose process died counts until its request's
// timeout and a window after; a call whose client says nothing counts from when it ended; and a wait
// beyond the attempt's budget (counted from the attempt's start) fails the attempt (retryable) before
// anything is sent, and takes no slot.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import pino from 'pino';
import { Context } from '@temporalio/activity';
import { noteAttemptStarted, paced, waitForTurn } from '../../activities/provider-pace.ts';
import { PROVIDER_SLOT_FAILURE, type ProviderPace } from '../../domain/provider-pace.ts';
import { sentNotice } from '../../provider/send-notice.ts';
import { PROVIDER_REQUEST_TIMEOUT_MS, type IdentityProvider } from '../../provider/types.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { claimProviderSend } from '../../store/provider-pace.ts';
import { isolatedDatabaseUrl } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

const log = pino({ level: 'silent' });
const pace = (over: Partial<ProviderPace['window']> = {}, spacingMs = 20): ProviderPace => ({
  spacingMs,
  window: { cap: 3, windowMs: 300, pendingMs: 10_000, pollMs: 5, ...over },
});

describe('provider pace', () => {
  let db: Db;
  before(async () => {
    db = connectDb(await isolatedDatabaseUrl(), 8);
  });
  after(() => db?.close());
  beforeEach(async () => {
    await db.query('DELETE FROM provider_sends');
    await db.query('UPDATE provider_pace SET next_at = clock_timestamp() WHERE id = 1');
  });

  /** An attempt whose start-to-close timeout leaves `budgetMs` beyond the provider request's own timeout. */
  const activity = (budgetMs = 60_000, requestTimeoutMs = PROVIDER_REQUEST_TIMEOUT_MS) =>
    new MockActivityEnvironment({
      startToCloseTimeoutMs: budgetMs + requestTimeoutMs,
      currentAttemptScheduledTimestampMs: Date.now(),
    } as never);

  /** A provider whose importApplicant sends after `beforeSendMs` (telling the pace, unless `silent`), records when, and answers after `afterSendMs`. */
  const fakeProvider = (o: { beforeSendMs?: number; afterSendMs?: number; silent?: boolean } = {}) => {
    const sends: number[] = [];
    const provider = {
      name: 'fake',
      async importApplicant() {
        const sent = sentNotice();
        await new Promise((r) => setTimeout(r, o.beforeSendMs ?? 0));
        sends.push(Date.now());
        if (!o.silent) sent();
        await new Promise((r) => setTimeout(r, o.afterSendMs ?? 0));
        return {} as never;
      },
    } as unknown as IdentityProvider;
    return { provider, sends };
  };

  /** The most sends found within any span shorter than `windowMs`. */
  const busiest = (sends: number[], windowMs: number) => {
    const t = [...sends].sort((a, b) => a - b);
    let most = 0;
    for (let i = 0; i < t.length; i++) {
      let j = i;
      while (j + 1 < t.length && t[j + 1]! - t[i]! < windowMs) j++;
      most = Math.max(most, j - i + 1);
    }
    return most;
  };

  it('goes at once when the window has room', async () => {
    const { provider, sends } = fakeProvider();
    await activity().run(() => paced(provider, db, pace(), log).importApplicant({ shareToken: 't' }));
    assert.equal(sends.length, 1);
    const [row] = await db.query<{ sent: boolean }>('SELECT sent_at IS NOT NULL AS sent FROM provider_sends');
    assert.equal(row?.sent, true, 'the send is stamped once it has left');
  });

  it('holds the cap however late the processes wake from their slots', async () => {
    const p = pace({ cap: 3, windowMs: 300 }, 20);
    const { provider, sends } = fakeProvider({ afterSendMs: 10 });
    // each wake late by 0–250 ms, as on a saturated machine: slots alone then let calls bunch up
    const lateSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms + Math.random() * 250));
    const calls = Array.from({ length: 15 }, () => activity().run(() => paced(provider, db, p, log, lateSleep).importApplicant({ shareToken: 't' })));
    await Promise.all(calls);
    assert.equal(sends.length, 15);
    assert.ok(busiest(sends, 300) <= 3, `at most 3 sends within any 300 ms (${busiest(sends, 300)})`);
  });

  it('counts a request from when it left, not from its claim', async () => {
    const p = pace({ cap: 1, windowMs: 200 });
    // the first request leaves 300 ms after its claim: the next may not leave until 200 ms after that
    const slow = fakeProvider({ beforeSendMs: 300 });
    const quick = fakeProvider();
    const first = activity().run(() => paced(slow.provider, db, p, log).importApplicant({ shareToken: 'a' }));
    await new Promise((r) => setTimeout(r, 50));
    await activity().run(() => paced(quick.provider, db, p, log).importApplicant({ shareToken: 'b' }));
    await first;
    assert.ok(quick.sends[0]! - slow.sends[0]! >= 199, `the second left ${quick.sends[0]! - slow.sends[0]!} ms after the first`);
  });

  it('counts a call whose client says nothing from when it ended', async () => {
    const p = pace({ cap: 1, windowMs: 200 });
    const silent = fakeProvider({ silent: true, afterSendMs: 150 });
    const quick = fakeProvider();
    await activity().run(() => paced(silent.provider, db, p, log).importApplicant({ shareToken: 'a' }));
    const ended = Date.now();
    await activity().run(() => paced(quick.provider, db, p, log).importApplicant({ shareToken: 'b' }));
    assert.ok(quick.sends[0]! - ended >= 195, `the next left ${quick.sends[0]! - ended} ms after the silent call ended`);
  });

  it('counts a claim whose process died until its timeout and a window after it', async () => {
    const p = pace({ cap: 1, windowMs: 100, pendingMs: 400 });
    const dead = await claimProviderSend(db, p.window); // claimed, never stamped
    assert.notEqual(dead.sendId, null);
    const held = await claimProviderSend(db, p.window);
    assert.equal(held.sendId, null, 'the window is held by the claim');
    assert.equal(held.waitMs, p.window.pollMs, 'a request still to leave: look again soon');
    const started = Date.now();
    await activity().run(() => waitForTurn(db, p));
    assert.ok(Date.now() - started >= 450, `a place only after 400 + 100 ms (${Date.now() - started} ms)`);
  });

  it('waits exactly until the oldest send leaves the window', async () => {
    const p = pace({ cap: 2, windowMs: 3000 });
    const { provider } = fakeProvider();
    await activity().run(() => paced(provider, db, p, log).importApplicant({ shareToken: 'a' }));
    await activity().run(() => paced(provider, db, p, log).importApplicant({ shareToken: 'b' }));
    // the stamps go out as the calls end, unawaited: wait for both
    await eventually('both stamps written', async () => (await db.query('SELECT 1 FROM provider_sends WHERE sent_at IS NULL')).length === 0, { everyMs: 5 });
    const [{ left }] = (await db.query<{ left: number }>(
      'SELECT extract(epoch FROM min(counts_until) - clock_timestamp()) * 1000 AS left FROM provider_sends',
    )) as [{ left: number }];
    const full = await claimProviderSend(db, p.window);
    assert.equal(full.sendId, null);
    assert.ok(Math.abs(full.waitMs - Number(left)) < 100, `until the first send's window ends (${full.waitMs} ms; it ends in ${left} ms)`);
    assert.ok(full.waitMs > 0 && full.waitMs <= 3000);
  });

  it('gives its place back when it finds it too late to send', async () => {
    // budget 100 ms; the wake from the slot comes 300 ms late: the request could no longer have its whole timeout
    const { provider, sends } = fakeProvider();
    const lateSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms + 300));
    await assert.rejects(
      activity(100).run(() => paced(provider, db, pace(), log, lateSleep).importApplicant({ shareToken: 't' })),
      (err: { type?: string; message?: string }) => err.type === PROVIDER_SLOT_FAILURE && /too late/.test(err.message ?? ''),
    );
    assert.equal(sends.length, 0, 'nothing was sent');
    assert.equal((await db.query('SELECT 1 FROM provider_sends')).length, 0, 'the place was given back');
  });

  it("fails the attempt, retryably, when its slot is beyond the attempt's budget, and leaves the slot", async () => {
    await db.query("UPDATE provider_pace SET next_at = clock_timestamp() + interval '1 hour' WHERE id = 1");
    const nextAt = async () => (await db.query<{ next_at: Date }>('SELECT next_at FROM provider_pace'))[0]!.next_at.getTime();
    const before = await nextAt();
    const { provider, sends } = fakeProvider();
    await assert.rejects(
      activity(1000).run(() => paced(provider, db, pace(), log).importApplicant({ shareToken: 't' })),
      (err: { type?: string; nonRetryable?: boolean }) => err.type === PROVIDER_SLOT_FAILURE && !err.nonRetryable,
    );
    assert.equal(sends.length, 0, 'nothing was sent');
    assert.equal(await nextAt(), before, 'no slot taken: the calls after it keep theirs');
  });

  it('counts the budget from the attempt’s start, not from when it was scheduled', async () => {
    // 1,500 ms to wait beyond the request's timeout; scheduled 1,200 ms ago (its time in the queue); its slot 600 ms away
    const queued = (noted: boolean) =>
      new MockActivityEnvironment({
        startToCloseTimeoutMs: 1500 + PROVIDER_REQUEST_TIMEOUT_MS,
        currentAttemptScheduledTimestampMs: Date.now() - 1200,
      } as never).run(async () => {
        if (noted) noteAttemptStarted(Context.current());
        await db.query("UPDATE provider_pace SET next_at = clock_timestamp() + interval '600 milliseconds' WHERE id = 1");
        return paced(fakeProvider().provider, db, pace(), log).importApplicant({ shareToken: 't' });
      });
    await assert.rejects(queued(false), (err: { type?: string }) => err.type === PROVIDER_SLOT_FAILURE, 'counted from its scheduling: 300 ms left');
    await queued(true); // counted from its start (less the margin for the network): about 1,250 ms left, it waits 600 and goes
  });

  it("fails the attempt, retryably, when the window's next place is beyond the budget", async () => {
    const p = pace({ cap: 1, windowMs: 100, pendingMs: 60_000 });
    await claimProviderSend(db, p.window); // a request still leaving, for up to a minute
    const { provider, sends } = fakeProvider();
    // the poll keeps finding it held: with 50 ms to wait, the attempt fails within them, not in a minute
    const started = Date.now();
    await assert.rejects(
      activity(50, p.window.pendingMs).run(() => paced(provider, db, p, log).importApplicant({ shareToken: 't' })),
      (err: { type?: string; nonRetryable?: boolean; message?: string }) =>
        err.type === PROVIDER_SLOT_FAILURE && !err.nonRetryable && /place among/.test(err.message ?? ''),
    );
    assert.equal(sends.length, 0, 'nothing was sent');
    assert.ok(Date.now() - started < 5_000);
  });
});
