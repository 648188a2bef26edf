// What GET /metrics serves (and, in split mode, the worker's own metrics port): every metric of this
// process in Prometheus's text format — ours (prom-client's default registry: HTTP, records,
// provider calls, webhooks) and Node's process metrics — followed by the Temporal SDK core's own
// (workers' task slots, poll and schedule-to-start latencies, …), which the core exports on a
// loopback port of its own when this process runs workers.
import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, register } from 'prom-client';
import type { Logger } from 'pino';

collectDefaultMetrics({ prefix: 'vouch_' });

let coreMetricsUrl: string | undefined;
/** Where the Temporal core exports its metrics in this process (set when its runtime is installed). */
export function setCoreMetricsUrl(url: string): void {
  coreMetricsUrl = url;
}

export async function metricsText(): Promise<string> {
  const ours = await register.metrics();
  if (!coreMetricsUrl) return ours;
  const core = await fetch(coreMetricsUrl, { signal: AbortSignal.timeout(2000) }).then(
    (r) => (r.ok ? r.text() : ''),
    () => '',
  );
  return `${ours}\n${core}`;
}
export const METRICS_CONTENT_TYPE = register.contentType;

/**
 * The worker process's metrics endpoint (split mode): GET /metrics on host:port, the same bearer rule
 * as the API's; and GET /health, open like the API's (no client data), for probes: 200 while every
 * worker of the process polls, 503 otherwise.
 */
export function startMetricsServer(options: {
  host: string;
  port: number;
  allowed: (authorization: string | undefined) => boolean;
  health: () => { ok: boolean };
  log: Logger;
}): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') {
      const health = options.health();
      return void res.writeHead(health.ok ? 200 : 503, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(JSON.stringify(health));
    }
    if (req.method !== 'GET' || req.url !== '/metrics') return void res.writeHead(404).end();
    if (!options.allowed(req.headers.authorization)) return void res.writeHead(401, { 'WWW-Authenticate': 'Bearer' }).end();
    metricsText().then(
      (text) => res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE }).end(text),
      (err: unknown) => {
        options.log.warn({ err }, 'metrics could not be collected');
        res.writeHead(500).end();
      },
    );
  });
  return new Promise((resolve) => server.listen(options.port, options.host, () => resolve(server)));
}
