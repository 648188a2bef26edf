// Whether this API process can reach its database and Temporal (GET /health). The answer says
// `ok` or `degraded` per dependency and nothing else: no address, no error text (a load balancer and
// an operator's dashboard need the verdict; the cause goes to the log, with the request's id).
import { z } from 'zod';
import { coveredUntil, WARN_DAYS } from '../domain/key-rotation.ts';
import { done, type Outcome } from '../domain/outcome.ts';
import type { KeyRings } from '../runtime/signing-keys.ts';
import type { UseCaseContext } from './context.ts';

const check = z.object({ status: z.enum(['ok', 'degraded']), latencyMs: z.number().optional() });
const signingKeysCheck = z.object({
  status: z.enum(['ok', 'degraded']),
  endsAt: z.iso.datetime().meta({ description: 'When the soonest of the signing key rings stops covering (its last key ends, or a gap before its next key)' }),
});
/** GET /health's body (200 or 503). */
export const healthSchema = z.object({ status: z.enum(['ok', 'degraded']), database: check, temporal: check, signingKeys: signingKeysCheck });

export type Check = z.input<typeof check>;
type Health = z.input<typeof healthSchema>;

const PROBE_TIMEOUT_MS = 2000;

/** A dependency's check, and why it failed (logged with each request it answers, never in the body). */
type Probed = { check: Check; err?: unknown };

async function probe(fn: () => Promise<unknown>): Promise<Probed> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
      }),
    ]);
    return { check: { status: 'ok', latencyMs: Math.round(performance.now() - started) } };
  } catch (err) {
    return { check: { status: 'degraded' }, err };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The signing keys: degraded once any ring stops covering (its end, or a gap before its next
 * generation) within WARN_DAYS — rotate it: `vouch webhook-keys rotate` …. A warning, not an
 * outage: the process still signs, so it stays in its load balancer (200); `endsAt` says when the
 * first ring would stop. It checks this process's rings (the API's); workers read theirs at start.
 */
export function checkSigningKeys(keys: KeyRings, now: Date): z.input<typeof signingKeysCheck> {
  const ends = [keys.webhooks, keys.standardWebhooks, keys.signedPayloads, keys.auditCheckpoints].map((ring) => coveredUntil(ring, now).getTime());
  const soonest = Math.min(...ends);
  return { status: soonest - now.getTime() <= WARN_DAYS * 86_400_000 ? 'degraded' : 'ok', endsAt: new Date(soonest).toISOString() };
}

/** The warning is logged at most once an hour per process, not on every probe. */
let warnedAt = 0;

/**
 * How old an answer about the dependencies may be: requests within this long of a probe's start
 * share it (and any request while it runs), so a flood of `GET /health` — it needs no key — costs
 * PostgreSQL and Temporal one probe a second, not one per request.
 */
export const HEALTH_MAX_AGE_MS = 1000;

/**
 * GET /health for one API: the body, and whether both dependencies answered (`reachable`: 200, else
 * 503). The dependencies are probed at most once per HEALTH_MAX_AGE_MS; every request a failed probe
 * answers logs its cause, so each 503's request id finds it.
 */
export function healthCheck({ db, runs }: Pick<UseCaseContext, 'db' | 'runs'>, maxAgeMs = HEALTH_MAX_AGE_MS) {
  let last: { at: number; checks: Promise<[Probed, Probed]> } | undefined;
  return ({ log, keys }: Pick<UseCaseContext, 'log' | 'keys'>) => {
    if (!last || Date.now() - last.at >= maxAgeMs) {
      last = {
        at: Date.now(),
        checks: Promise.all([
          probe(() => db.ping()),
          // a deadline, so the client's own retries of an unanswered call stop with the probe (they
          // would otherwise go on in the background after the answer, even past the connection's close)
          probe(() => runs.ping(Date.now() + PROBE_TIMEOUT_MS)),
        ]),
      };
    }
    return answer(last.checks, keys, log);
  };
}

async function answer(checks: Promise<[Probed, Probed]>, keys: KeyRings, log: UseCaseContext['log']): Promise<Outcome<Health & { reachable: boolean }>> {
  const probed = await checks;
  for (const [dependency, { err }] of [
    ['database', probed[0]],
    ['temporal', probed[1]],
  ] as const)
    if (err) log.warn({ err, dependency }, `health: ${dependency} is not answering`);
  const [database, temporalCheck] = probed.map((p) => p.check) as [Check, Check];
  const reachable = database.status === 'ok' && temporalCheck.status === 'ok';
  const signingKeys = checkSigningKeys(keys, new Date());
  if (signingKeys.status === 'degraded' && Date.now() - warnedAt > 3_600_000) {
    warnedAt = Date.now();
    log.warn({ endsAt: signingKeys.endsAt }, `health: a signing key ring stops covering within ${WARN_DAYS} days; rotate it`);
  }
  const ok = reachable && signingKeys.status === 'ok';
  return done({ status: ok ? ('ok' as const) : ('degraded' as const), reachable, database, temporal: temporalCheck, signingKeys });
}
