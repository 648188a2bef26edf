// Prometheus metrics of this process (and, under npm start, of the workers in it).
import { z } from 'zod';
import type { UseCaseContext } from '../../usecases/context.ts';
import { readMetrics } from '../../usecases/read-metrics.ts';
import { route } from '../route.ts';

export function metricsRoutes(context: UseCaseContext) {
  const open = context.settings.sandbox;
  return [
    route({
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      summary: 'Metrics in Prometheus format',
      description:
        `HTTP requests by route and status with latency; shared records by outcome and category; ` +
        `provider calls by operation and outcome with latency; webhook attempts by outcome and ` +
        `delivery lag; Node's process metrics; and, where workers run in this process, the Temporal` +
        ` SDK's own. No API key. ` +
        `${open ? 'Open in the sandbox.' : 'Needs Authorization: Bearer <METRICS_TOKEN>.'}`,
      tag: 'Operations',
      auth: false,
      docHeaders: [{ name: 'Authorization', required: !open, description: 'Bearer <METRICS_TOKEN> (outside the sandbox)' }],
      responses: { 200: { description: 'Prometheus text format', contentType: 'text/plain', schema: z.string() } },
      errors: ['metricsUnauthorized'],
      handler: ({ ctx }) => readMetrics(context, ctx.get('authorization') || undefined),
      present: (text) => ({ body: text, headers: { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8', 'Cache-Control': 'no-store' } }),
    }),
  ];
}
