// Two small HTTP doors of the soak (bench/soak.ts):
// - the provider's door: the workers' PROVIDER_BASE_URL, in a process of its own
//   (provider-door-process.ts). Every call Vouch makes to the identity provider passes through it
//   to the simulator unchanged (the signature covers method, path and body, not the host) and is
//   noted where it arrives: its time, operation and answer, and for an import the share token it
//   spends. What "provider calls never above the cap" is read from.
// - the callback door: the simulator's PROVIDER_SIM_CALLBACK_URL, in the soak's process. It plays
//   the load balancer in front of the two API processes for Sumsub's callbacks, and Sumsub's retries
//   (the simulator sends each callback once; Sumsub retries one that did not get a 2xx), so a
//   callback that arrives while an API process is being killed is delivered to the other.
import { fork } from 'node:child_process';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { sleep } from './fleet.ts';

/** One call at the provider: when it arrived, what it was, its answer, the caller's TCP port, and whether it was the first on its connection. */
export type ProviderCall = { at: number; op: string; status: number; port: number; fresh: boolean };

/** `/resources/applicants/5f…/one` → `/resources/applicants/{id}/one`: the operation, not the applicant. */
export function providerOperation(method: string, url: string): string {
  const p = url.split('?')[0]!;
  const shape = p
    .replace(/^\/resources\/applicants\/-;externalUserId=[^/]+/, '/resources/applicants/-;externalUserId={externalUserId}')
    .replace(/^\/resources\/applicants\/(?!-)[^/]+/, '/resources/applicants/{id}');
  return `${method} ${shape}`;
}

const body = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

export type DoorRecords = {
  calls: ProviderCall[];
  /** Per share token: import requests naming it, and those that spent it (answered 200). */
  tokens: [string, { attempts: number; ok: number }][];
  /** The door's own event-loop delay (ms): how precise its arrival times are. */
  loopDelay: { p99: number; max: number };
};

export type ProviderDoor = {
  url: string;
  pid: number;
  /** Calls counted so far (updated every second). */
  count(): number;
  records(): Promise<DoorRecords>;
  close(): Promise<void>;
};

/**
 * The provider's door in a process of its own (bench/soak/provider-door-process.ts), so that its
 * arrival times are not late by this process's own work (a busy event loop stamps requests late and
 * bunches them: a false excess over the cap).
 */
export async function startProviderDoor(simulatorUrl: string): Promise<ProviderDoor> {
  const child = fork(fileURLToPath(new URL('./provider-door-process.ts', import.meta.url)), [simulatorUrl], { stdio: 'inherit' });
  let counted = 0;
  let answer: ((r: DoorRecords) => void) | undefined;
  const url = await new Promise<string>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`provider door exited (${code})`)));
    child.on('message', (m: { url?: string; count?: number; records?: DoorRecords }) => {
      if (m.url) resolve(m.url);
      if (m.count !== undefined) counted = m.count;
      if (m.records) answer?.(m.records);
    });
  });
  return {
    url,
    pid: child.pid!,
    count: () => counted,
    records: () =>
      new Promise<DoorRecords>((resolve) => {
        answer = resolve;
        child.send('records');
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.disconnect();
      }),
  };
}

/** The door itself: forwards every request to the simulator unchanged and notes it. */
export function providerDoorServer(simulatorUrl: string) {
  const target = new URL(simulatorUrl);
  const calls: ProviderCall[] = [];
  const tokens = new Map<string, { attempts: number; ok: number }>();
  const seen = new WeakSet<object>();
  const server = createServer(async (req, res) => {
    const at = performance.timeOrigin + performance.now(); // arrival, before the body: when the call reached "the provider"
    const fresh = !seen.has(req.socket);
    seen.add(req.socket);
    const raw = await body(req);
    const url = req.url ?? '/';
    const call: ProviderCall = { at, op: providerOperation(req.method ?? 'GET', url), status: 0, port: req.socket.remotePort ?? 0, fresh };
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
  return { server, calls, tokens };
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

/**
 * The most calls in one calendar second and in any window of 1,000 ms (the stricter reading), and
 * the shortest time that held `cap + 1` calls in a row (under 1,000 ms: the cap was exceeded; a
 * pace of 1/cap × 1.05 keeps it at 1,050 ms or more).
 */
export function busiestSeconds(
  times: number[],
  cap: number,
): { calendar: number; calendarAt: number; sliding: number; slidingAt: number; secondsAtCap: number; shortestSpan: number | null; shortestAt: number } {
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
  let shortestSpan: number | null = null;
  let shortestAt = 0;
  const k = Math.floor(cap);
  for (let i = 0; i + k < sorted.length; i++) {
    const span = sorted[i + k]! - sorted[i]!;
    if (shortestSpan === null || span < shortestSpan) {
      shortestSpan = span;
      shortestAt = sorted[i]!;
    }
  }
  return { calendar, calendarAt, sliding, slidingAt, secondsAtCap: [...perSecond.values()].filter((n) => n >= cap).length, shortestSpan, shortestAt };
}
