// Metrics of calls to the identity provider (prom-client's default registry; served at /metrics):
// counts and latency by operation (the path with its ids replaced) and outcome (`ok`, or the
// classified failure: `token_invalid`, `rate_limited`, `unavailable`, …).
import { Counter, Histogram } from 'prom-client';

const calls = new Counter({
  name: 'vouch_provider_calls_total',
  help: 'Requests to the identity provider, by operation and outcome',
  labelNames: ['operation', 'outcome'] as const,
});
const latency = new Histogram({
  name: 'vouch_provider_call_duration_seconds',
  help: 'Latency of requests to the identity provider, by operation and outcome',
  labelNames: ['operation', 'outcome'] as const,
  buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
});

/** `POST /resources/applicants/{id}/one` from a request path: ids and the query left out, so the label stays small. */
export function providerOperation(method: string, path: string): string {
  const bare = path.split('?')[0]!;
  const shaped = bare
    .split('/')
    .map((seg) => (/^[0-9a-f]{24}$/i.test(seg) || /^[0-9a-f-]{36}$/i.test(seg) || seg.startsWith('-;') ? '{id}' : seg))
    .join('/');
  return `${method} ${shaped}`;
}

export function observeProviderCall(operation: string, outcome: string, seconds: number): void {
  calls.inc({ operation, outcome });
  latency.observe({ operation, outcome }, seconds);
}
