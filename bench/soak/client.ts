// The soak's HTTP client of the Vouch API (bench/soak.ts): requests go to the API processes that are
// up, in turn (what a load balancer with health checks does); a request refused at connect (a
// process being restarted) goes to the next one, and so does a request cut off mid-way when it is
// safe to send twice (reads, and writes made idempotent by an Idempotency-Key). Every attempt is
// timed under its route template (`POST /entity/{entityId}/kyc`, never the raw URL).
import type { paths } from '../../client/index.ts';
import { sleep } from './fleet.ts';

export type Route = keyof paths & string;
export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** One attempt: when it started (ms since the epoch), how long it took, its status (0: no answer). */
export type Sample = { path: string; at: number; ms: number; status: number };

export type Answer = {
  status: number;
  body: any;
  text: string;
  headers: Headers | null;
  /** The API that answered (or failed last). */
  api: string;
  /** No answer: the connection failed. `refused`: it never reached a process. */
  error?: { message: string; refused: boolean };
};

export type CallOptions = {
  key?: string;
  params?: Record<string, string>;
  query?: Record<string, string>;
  json?: unknown;
  /** A multipart body, made anew for each attempt (a body can be sent once). */
  form?: () => FormData;
  headers?: Record<string, string>;
  /** Safe to send again after a connection cut off mid-request. */
  idempotent?: boolean;
};

export type Client = {
  call(method: Method, route: Route, options?: CallOptions): Promise<Answer>;
  samples: Sample[];
};

const codeOf = (err: unknown): string | undefined => {
  const e = err as { code?: string; cause?: { code?: string; errors?: { code?: string }[] } };
  return e.cause?.code ?? e.cause?.errors?.[0]?.code ?? e.code;
};

/** `apis()`: the base URLs of the API processes that are up now. */
export function createClient(apis: () => string[]): Client {
  const samples: Sample[] = [];
  let turn = 0;
  async function call(method: Method, route: Route, o: CallOptions = {}): Promise<Answer> {
    const path = route.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(o.params?.[k] ?? `{${k}}`));
    const query = o.query ? `?${new URLSearchParams(o.query).toString()}` : '';
    const headers: Record<string, string> = { ...o.headers };
    if (o.key) headers['x-vouch-api-key'] = o.key;
    if (o.json !== undefined) headers['content-type'] = 'application/json';
    const label = `${method} ${route}`;
    let last: Answer = { status: 0, body: undefined, text: '', headers: null, api: '', error: { message: 'no API process is up', refused: true } };
    const until = Date.now() + 15_000;
    for (let attempt = 0; attempt < 8 && Date.now() < until; attempt++) {
      const up = apis();
      if (up.length === 0) {
        await sleep(500);
        continue;
      }
      const base = up[turn++ % up.length]!;
      const at = Date.now();
      const started = performance.now();
      try {
        const res = await fetch(`${base}${path}${query}`, {
          method,
          headers,
          body: o.form ? o.form() : o.json !== undefined ? JSON.stringify(o.json) : undefined,
          signal: AbortSignal.timeout(150_000),
        });
        const text = await res.text();
        samples.push({ path: label, at, ms: performance.now() - started, status: res.status });
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        return { status: res.status, body, text, headers: res.headers, api: base };
      } catch (err) {
        samples.push({ path: label, at, ms: performance.now() - started, status: 0 });
        const code = codeOf(err);
        const refused = code === 'ECONNREFUSED';
        last = { status: 0, body: undefined, text: '', headers: null, api: base, error: { message: `${(err as Error).message} (${code ?? '?'})`, refused } };
        if (!refused && !o.idempotent) return last;
        if (attempt > 0) await sleep(250);
      }
    }
    return last;
  }
  return { call, samples };
}
