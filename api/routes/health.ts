// GET /health: whether this API process can reach its database and Temporal. No client data, no key.
import type { UseCaseContext } from '../../usecases/context.ts';
import { HEALTH_MAX_AGE_MS, healthCheck, healthSchema } from '../../usecases/health.ts';
import { route } from '../route.ts';

export function healthRoutes(context: UseCaseContext) {
  const health = healthCheck(context); // one probe of the dependencies a second, whatever the requests
  return [
    route({
      method: 'get',
      path: '/health',
      operationId: 'health',
      summary: 'Service health',
      description:
        'Reports whether the database and Temporal answer: ok or degraded for each, 200 when both ' +
        'are ok, 503 otherwise. signingKeys turns degraded 30 days before a signing key ring ends ' +
        '(rotate it with the admin CLI); that makes the status degraded but keeps 200, since the ' +
        'process still works. No addresses or error texts: the cause is in the log line of this ' +
        'request (its X-Request-Id). No API key needed. The database and Temporal are probed at most ' +
        `once every ${HEALTH_MAX_AGE_MS / 1000} s: requests within that share one probe's answer.`,
      tag: 'Operations',
      auth: false,
      responses: {
        200: { description: 'Healthy', schema: healthSchema },
        503: { description: 'A dependency is down', schema: healthSchema },
      },
      handler: () => health(context),
      present: ({ reachable, ...health }) => ({ status: reachable ? 200 : 503, body: health }),
    }),
  ];
}
