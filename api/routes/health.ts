// GET /health: whether this API process can reach its database and Temporal. No client data, no key.
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import type { Db } from '../../store/db.ts';
import { route } from '../route.ts';

const check = z.object({ ok: z.boolean(), latencyMs: z.number().optional(), error: z.string().optional() });
const healthSchema = z.object({ status: z.enum(['ok', 'degraded']), database: check, temporal: check });

async function probe(fn: () => Promise<unknown>, timeoutMs = 2000): Promise<z.infer<typeof check>> {
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

export function healthRoutes(db: Db, temporal: Client) {
  return [
    route({
      method: 'get',
      path: '/health',
      operationId: 'health',
      summary: 'Service health',
      description: 'Reports whether the database and Temporal answer. 200 when both do, 503 otherwise. No API key needed.',
      tag: 'Operations',
      auth: false,
      responses: {
        200: { description: 'Healthy', schema: healthSchema },
        503: { description: 'A dependency is down', schema: healthSchema },
      },
      async handler() {
        const [database, temporalCheck] = await Promise.all([
          probe(() => db.ping()),
          probe(() => temporal.connection.workflowService.getSystemInfo({})),
        ]);
        const ok = database.ok && temporalCheck.ok;
        return { status: ok ? 200 : 503, body: { status: ok ? 'ok' : 'degraded', database, temporal: temporalCheck } };
      },
    }),
  ];
}
