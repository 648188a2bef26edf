// Every provider request waits its turn in the fleet-wide pace (domain/provider-pace.ts): its slot,
// then a place in the window of sends, which it holds from just before it goes until a window after
// it has left.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Logger } from 'pino';
import { PROVIDER_SLOT_FAILURE, type ProviderPace } from '../domain/provider-pace.ts';
import { withSendNotice } from '../provider/send-notice.ts';
import { PROVIDER_REQUEST_METHODS, type IdentityProvider } from '../provider/types.ts';
import type { Db } from '../store/db.ts';
import { claimProviderSend, releaseProviderSend, stampProviderSend, takeProviderSlot } from '../store/provider-pace.ts';

type Sleep = (ms: number) => Promise<void>;
const sleepMs: Sleep = (ms) => (ms > 0 ? new Promise<void>((r) => setTimeout(r, ms)) : Promise.resolve());

/** The provider with every request paced (the other members as they are). */
export function paced(provider: IdentityProvider, db: Db, pace: ProviderPace, log: Logger, sleep: Sleep = sleepMs): IdentityProvider {
  const wrapped: Record<string, unknown> = {};
  for (const method of PROVIDER_REQUEST_METHODS) {
    const call = provider[method] as (...a: unknown[]) => Promise<unknown>;
    wrapped[method] = async (...args: unknown[]) => {
      const sendId = await waitForTurn(db, pace, sleep);
      let stamped = false;
      const stamp = () => {
        if (stamped) return;
        stamped = true;
        // never fails the call: its request has gone, and a retry could spend a share token twice.
        // Unstamped, the claim counts until its request's timeout and a window after it: later, never less
        stampProviderSend(db, sendId, pace.window.windowMs).catch((err: Error) => log.warn({ err: err.message }, 'provider send not stamped'));
      };
      try {
        return await withSendNotice(stamp, () => call.apply(provider, args));
      } finally {
        stamp(); // a client that said nothing (or a request that never left): counted from now
      }
    };
  }
  return Object.assign(Object.create(provider) as IdentityProvider, wrapped);
}

/**
 * Waits for the call's slot, then for a place in the window of sends; returns the place's id. All
 * within the attempt's budget — the time its start-to-close timeout leaves beyond the provider
 * request itself: a slot or place further away than that fails the attempt (retryable) before any
 * request goes out, rather than letting Temporal time it out while its request is still to be sent (a
 * timed-out attempt whose request goes out anyway could spend a share token twice). Such an attempt
 * takes no slot: later calls keep theirs.
 */
export async function waitForTurn(db: Db, pace: ProviderPace, sleep: Sleep = sleepMs): Promise<string> {
  const budget = () => budgetLeftMs(pace.window.pendingMs);
  const slot = await takeProviderSlot(db, pace.spacingMs, budget());
  if (!slot.taken) tooFar(slot.waitMs, 'slot', budget());
  await sleep(slot.waitMs);
  for (;;) {
    const { sendId, waitMs } = await claimProviderSend(db, pace.window);
    if (sendId !== null) {
      // a sleep or the claim itself may have overrun (a busy machine): the request must still have its whole timeout
      if (budget() >= 0) return sendId;
      await releaseProviderSend(db, sendId);
      tooFar(0, 'place among the last second’s sends (found too late)', budget());
    }
    if (waitMs > budget()) tooFar(waitMs, 'place among the last second’s sends', budget());
    await sleep(waitMs);
  }
}

/** What the worker may receive an attempt after the server started its timeout (the network between them). */
const START_MARGIN_MS = 250;

/**
 * What the attempt can still wait before its provider request: its start-to-close timeout less the
 * time since it started (noted by noteAttemptStarted, less START_MARGIN_MS; since it was scheduled
 * where that is unknown, which also counts its time in the queue) and less the request's own timeout.
 */
function budgetLeftMs(requestTimeoutMs: number): number {
  const ctx = Context.current();
  const noted = attemptStarted.get(ctx);
  const started = noted === undefined ? ctx.info.currentAttemptScheduledTimestampMs : noted - START_MARGIN_MS;
  return ctx.info.startToCloseTimeoutMs - (Date.now() - started) - requestTimeoutMs;
}

function tooFar(waitMs: number, what: string, leftMs: number): never {
  throw ApplicationFailure.retryable(
    `the provider's next free ${what} is ${Math.round(waitMs)} ms away, more than this attempt can wait (${Math.max(0, Math.round(leftMs))} ms)`,
    PROVIDER_SLOT_FAILURE,
  );
}

const attemptStarted = new WeakMap<Context, number>();

/**
 * Notes that the current attempt starts now, where its start-to-close timeout begins (worker.ts calls
 * it from an interceptor of the provider worker). Without it an attempt's budget would also lose its
 * time in the task queue, and under a backlog (every business at 3 sync imports a second) attempts
 * dispatched after a few seconds' wait would fail at once, one after the other.
 */
export function noteAttemptStarted(ctx: Context): void {
  attemptStarted.set(ctx, Date.now());
}
