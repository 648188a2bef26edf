// Whether this API process can reach its database and Temporal (GET /health). The answer says
// `ok` or `degraded` per dependency and nothing else: no address, no error text (a load balancer and
// an operator's dashboard need the verdict; the cause goes to the log, with the request's id).
import { done } from '../domain/outcome.ts';
import type { UseCaseContext } from './context.ts';

export type Check = { status: 'ok' | 'degraded'; latencyMs?: number };

const PROBE_TIMEOUT_MS = 2000;

async function probe(dependency: string, fn: () => Promise<unknown>, log: UseCaseContext['log']): Promise<Check> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
      }),
    ]);
    return { status: 'ok', latencyMs: Math.round(performance.now() - started) };
  } catch (err) {
    log.warn({ err, dependency }, `health: ${dependency} is not answering`);
    return { status: 'degraded' };
  } finally {
    clearTimeout(timer);
  }
}

export async function checkHealth({ db, temporal, log }: Pick<UseCaseContext, 'db' | 'temporal' | 'log'>) {
  const [database, temporalCheck] = await Promise.all([
    probe('database', () => db.ping(), log),
    // a deadline, so the client's own retries of an unanswered call stop with the probe (they
    // would otherwise go on in the background after the answer, even past the connection's close)
    probe('temporal', () => temporal.connection.withDeadline(Date.now() + PROBE_TIMEOUT_MS, () => temporal.connection.workflowService.getSystemInfo({})), log),
  ]);
  const ok = database.status === 'ok' && temporalCheck.status === 'ok';
  return done({ status: ok ? ('ok' as const) : ('degraded' as const), database, temporal: temporalCheck });
}
