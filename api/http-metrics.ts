// HTTP metrics of the API (prom-client's default registry; served at /metrics): requests by route
// (the route's path pattern, never the raw path with its ids), method and status, and their latency.
import { Counter, Histogram } from 'prom-client';

const requests = new Counter({
  name: 'vouch_http_requests_total',
  help: 'HTTP requests, by route, method and status',
  labelNames: ['route', 'method', 'status'] as const,
});
const latency = new Histogram({
  name: 'vouch_http_request_duration_seconds',
  help: 'HTTP request latency, by route, method and status',
  labelNames: ['route', 'method', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
});

export function observeRequest(route: string | undefined, method: string, status: number, seconds: number): void {
  const labels = { route: route ?? 'unmatched', method, status: String(status) };
  requests.inc(labels);
  latency.observe(labels, seconds);
}
