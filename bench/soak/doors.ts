// Two small HTTP doors the soak runs in its own process (bench/soak.ts):
// - the provider's door: the workers' PROVIDER_BASE_URL. Every call Vouch makes to the identity
//   provider passes through it to the simulator unchanged (the signature covers method, path and
//   body, not the host) and is counted where it arrives: its time, operation and answer, and for an
//   import the share token it spends. What "provider calls never above the cap" is read from.
// - the callback door: the simulator's PROVIDER_SIM_CALLBACK_URL. It plays the load balancer in
//   front of the two API processes for Sumsub's callbacks, and Sumsub's retries (the simulator sends
//   each callback once; Sumsub retries a callback that did not get a 2xx), so a callback that arrives
//   while an API process is being killed is delivered to the other.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sleep } from './fleet.ts';

export type ProviderCall = { at: number; op: string; status: number };

/** `/resources/applicants/5f…/one` → `/resources/applicants/{id}/one`: the operation, not the applicant. */
export function providerOperation(method: string, url: string): string {
  const p = url.split('?')[0]!;
  const shape = p
    .replace(/^\/resources\/applicants\/-;externalUserId=[^/]+/, '/resources/applicants/-;externalUserId={externalUserId}')
    .replace(/^\/resources\/applicants\/(?!-)[^/]+/, '/resources/applicants/{id}');
  return `${method} ${shape}`;
}

export type ProviderDoor = {
  url: string;
  calls: ProviderCall[];
  /** Per share token: import requests that spent it (answered 200) and all import requests naming it. */
  tokens: Map<string, { attempts: number; ok: number }>;
  close(): Promise<void>;
};

const body = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

export async function startProviderDoor(simulatorUrl: string): Promise<ProviderDoor> {
  const target = new URL(simulatorUrl);
  const calls: ProviderCall[] = [];
  const tokens = new Map<string, { attempts: number; ok: number }>();
  const server = createServer(async (req, res) => {
    const at = Date.now(); // arrival, before the body: when the call reached "the provider"
    const raw = await body(req);
    const url = req.url ?? '/';
    const op = providerOperation(req.method ?? 'GET', url);
    const call: ProviderCall = { at, op, status: 0 };
    calls.push(call);
    const token = /\/(reusableIdentity\/reuse|applicants\/-\/import)\?/.test(url) ? new URL(url, 'http://x').searchParams.get('shareToken') : null;
    const out = request(
      { host: target.hostname, port: target.port, method: req.method, path: url, headers: { ...req.headers, host: target.host } },
      (answer) => {
        call.status = answer.statusCode ?? 0;
        if (token !== null) {
          const t = tokens.get(token) ?? { attempts: 0, ok: 0 };
          t.attempts++;
          if (call.status === 200) t.ok++;
          tokens.set(token, t);
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', (err) => {
      call.status = 599;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ description: `soak provider door: ${err.message}`, code: 502 }));
    });
    out.end(raw);
  });
  const url = await listen(server);
  return { url, calls, tokens, close: () => close(server) };
}

export type CallbackDoor = {
  url: string;
  stats: { received: number; delivered: number; retried: number; lost: number };
  /** Resolves when no callback is waiting for a retry. */
  idle(): Promise<void>;
  close(): Promise<void>;
};

/**
 * `apis()` names the API processes a load balancer would send to now (those up), in turn. A callback
 * is acknowledged to the simulator at once and forwarded with retries: on any error or a 5xx, the
 * next API after a second, for up to `giveUpMs`.
 */
export async function startCallbackDoor(apis: () => string[], giveUpMs = 120_000): Promise<CallbackDoor> {
  const stats = { received: 0, delivered: 0, retried: 0, lost: 0 };
  const pending = new Set<Promise<void>>();
  let turn = 0;
  const forward = async (path: string, headers: Record<string, string>, raw: Buffer) => {
    const until = Date.now() + giveUpMs;
    for (let attempt = 0; ; attempt++) {
      const up = apis();
      const base = up.length ? up[turn++ % up.length] : undefined;
      if (base) {
        try {
          const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: raw, signal: AbortSignal.timeout(10_000) });
          await res.arrayBuffer();
          if (res.status < 500) {
            stats.delivered++;
            return;
          }
        } catch {
          // the process went away under the request: try again, elsewhere
        }
      }
      if (Date.now() > until) {
        stats.lost++;
        return;
      }
      stats.retried++;
      await sleep(1000);
    }
  };
  const server = createServer(async (req, res) => {
    const raw = await body(req);
    stats.received++;
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'x-payload-digest', 'x-payload-digest-alg']) {
      const v = req.headers[name];
      if (typeof v === 'string') headers[name] = v;
    }
    const p = forward(req.url ?? '/', headers, raw).finally(() => pending.delete(p));
    pending.add(p);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":1}');
  });
  const url = await listen(server);
  return {
    url,
    stats,
    async idle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    close: () => close(server),
  };
}

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export function close(server: Server): Promise<void> {
  return new Promise<void>((r) => {
    server.close(() => r());
    server.closeAllConnections();
  });
}

/** The most calls in one calendar second, and in any window of 1,000 ms (the stricter reading), and when. */
export function busiestSeconds(times: number[]): {
  calendar: number;
  calendarAt: number;
  sliding: number;
  slidingAt: number;
  secondsAtCap: (cap: number) => number;
} {
  const sorted = [...times].sort((a, b) => a - b);
  const perSecond = new Map<number, number>();
  for (const t of sorted) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
  let calendar = 0;
  let calendarAt = 0;
  for (const [s, n] of perSecond)
    if (n > calendar) {
      calendar = n;
      calendarAt = s * 1000;
    }
  let sliding = 0;
  let slidingAt = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j]! - sorted[i]! >= 1000) i++;
    if (j - i + 1 > sliding) {
      sliding = j - i + 1;
      slidingAt = sorted[i]!;
    }
  }
  return { calendar, calendarAt, sliding, slidingAt, secondsAtCap: (cap) => [...perSecond.values()].filter((n) => n >= cap).length };
}
