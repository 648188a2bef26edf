// Whether this API process can reach its database and Temporal (GET /health).
import { done } from '../domain/outcome.ts';
import type { UseCaseContext } from './context.ts';

export type Check = { ok: boolean; latencyMs?: number; error?: string };

const PROBE_TIMEOUT_MS = 2000;

async function probe(fn: () => Promise<unknown>, timeoutMs = PROBE_TIMEOUT_MS): Promise<Check> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (err) {
    return { ok: false, error: (err as Error).message.split('\n')[0]!.slice(0, 200) };
  } finally {
    clearTimeout(timer);
  }
}

export async function checkHealth({ db, temporal }: Pick<UseCaseContext, 'db' | 'temporal'>) {
  const [database, temporalCheck] = await Promise.all([probe(() => db.ping()), probe(() =>
      // a deadline, so the client's own retries of an unanswered call stop with the probe (they
      // would otherwise go on in the background after the answer, even past the connection's close)
      temporal.connection.withDeadline(Date.now() + PROBE_TIMEOUT_MS, () => temporal.connection.workflowService.getSystemInfo({})),
    )]);
  const ok = database.ok && temporalCheck.ok;
  return done({ status: ok ? ('ok' as const) : ('degraded' as const), database, temporal: temporalCheck });
}
