// GET /metrics: every metric of this process in Prometheus's text format (runtime/metrics-export.ts);
// open in the sandbox, elsewhere only for `Authorization: Bearer <METRICS_TOKEN>`.
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import { metricsText } from '../runtime/metrics-export.ts';
import { bearerAllowed } from '../domain/bearer.ts';
import { refreshSubscriptionHealthGauge } from '../runtime/subscription-health-gauge.ts';
import type { UseCaseContext } from './context.ts';

export async function readMetrics(context: UseCaseContext, authorization: string | undefined): Promise<Outcome<string>> {
  if (!bearerAllowed(context.config.environment, context.config.metrics.token, authorization)) {
    return refuse(
      'metricsUnauthorized',
      context.config.metrics.token
        ? 'The Authorization header is missing or does not hold the metrics token; send Authorization: Bearer <METRICS_TOKEN>.'
        : 'Metrics are closed here: set METRICS_TOKEN to open them to holders of that token.',
      { parameter: 'Authorization' },
    );
  }
  await refreshSubscriptionHealthGauge(context.db, (err) => context.log.warn({ err }, 'metrics: subscription health not counted'));
  return done(await metricsText());
}
