// A provider call waits for its slot: one that wakes later than LATENESS_ALLOWED_MS (a busy event
// loop) takes a new slot, once — retaking until on time burns the slots of a saturated machine — and
// one whose slot is beyond its attempt's budget fails the attempt (retryable) before anything is sent.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { waitForSlot } from '../../activities/index.ts';
import { LATENESS_ALLOWED_MS, PROVIDER_SLOT_FAILURE } from '../../domain/provider-pace.ts';
import { connectDb, type Db } from '../../store/db.ts';
import { isolatedDatabaseUrl } from '../helpers/stack.ts';

const SPACING_MS = 20;

describe('provider slots', () => {
  let db: Db;
  before(async () => {
    db = connectDb(await isolatedDatabaseUrl(), 2);
  });
  after(() => db?.close());

  const activity = (budgetMs = 60_000) =>
    new MockActivityEnvironment({ startToCloseTimeoutMs: budgetMs + 30_000, currentAttemptScheduledTimestampMs: Date.now() } as never);

  /** A sleep that wakes `lateMs[i]` after the slot on its i-th use (0 beyond them), counting its uses: one per slot taken. */
  const sleeper = (...lateMs: number[]) => {
    const s = { slots: 0, sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms + (lateMs[s.slots++] ?? 0))) };
    return s;
  };

  it('goes at its slot when it wakes on time', async () => {
    const s = sleeper(0);
    await activity().run(() => waitForSlot(db, SPACING_MS, s.sleep));
    assert.equal(s.slots, 1);
  });

  it('takes a new slot when it wakes too late, once', async () => {
    const tooLate = LATENESS_ALLOWED_MS + 15;
    const once = sleeper(tooLate, 0);
    await activity().run(() => waitForSlot(db, SPACING_MS, once.sleep));
    assert.equal(once.slots, 2, 'a late wake, then one on time');
    const always = sleeper(tooLate, tooLate, tooLate);
    await activity().run(() => waitForSlot(db, SPACING_MS, always.sleep));
    assert.equal(always.slots, 2, 'late again: it goes rather than burn another slot');
  });

  it("fails the attempt, retryably, when its slot is beyond the attempt's budget", async () => {
    await db.query("UPDATE provider_pace SET next_at = clock_timestamp() + interval '1 hour' WHERE id = 1");
    await assert.rejects(
      activity(1000).run(() => waitForSlot(db, SPACING_MS)),
      (err: { type?: string; nonRetryable?: boolean }) => err.type === PROVIDER_SLOT_FAILURE && !err.nonRetryable,
    );
    await db.query('UPDATE provider_pace SET next_at = clock_timestamp() WHERE id = 1');
  });
});
