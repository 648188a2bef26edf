// A flood of requests with a wrong or missing key or token, limited per client address before any
// of them costs a database lookup. Each 401 an address earns takes a token from its bucket
// (AUTH_FAILURE_LIMIT_PER_SECOND a second, as many in a burst); while the address has a bucket,
// each of its requests needs a token not promised to another in flight, and without one it is
// answered 429 with Retry-After at once — its key is not looked up. A bucket refilled is
// forgotten, so what a fresh address sends at once before its first 401 goes through. A client
// with a valid key never earns a 401, so it meets this limit only when it shares its address with
// the flood. Kept in each API process's memory (n processes let n times through), for at most
// MAX_ADDRESSES addresses at once. Refused requests get no request log line each: one warning every
// REPORT_EVERY_MS sums them up (how many, from how many addresses).
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { ApiError } from '../api-error.ts';
import { clientAddress, type AddressRange } from '../../domain/client-address.ts';

/** Addresses remembered at once; beyond, the ones whose buckets have refilled are forgotten first, then the oldest. */
export const MAX_ADDRESSES = 100_000;

/** How often at most the refusals are summed up in the log. */
export const REPORT_EVERY_MS = 10_000;

/** tokens at `at` (each 401 takes one; PER_SECOND come back a second); `pending`: requests let through and not answered yet. */
type Bucket = { tokens: number; at: number; pending: number };

export function authFailureLimit(options: { perSecond: number; trustedProxies: readonly AddressRange[]; log: Logger; now?: () => number }): Middleware {
  const { perSecond, trustedProxies, log } = options;
  const report = { at: 0, refused: 0, addresses: new Set<string>() };
  /** Counts a refusal; every REPORT_EVERY_MS at most, logs the count since the last line. */
  const refusedOne = (addr: string, t: number) => {
    report.refused++;
    if (report.addresses.size < 1000) report.addresses.add(addr);
    if (t - report.at < REPORT_EVERY_MS) return;
    log.warn(
      { refused: report.refused, addresses: report.addresses.size, sinceMs: report.at ? t - report.at : null },
      'requests refused unread: too many 401s from their addresses',
    );
    Object.assign(report, { at: t, refused: 0, addresses: new Set<string>() });
  };
  const now = options.now ?? Date.now;
  const buckets = new Map<string, Bucket>();
  const level = (b: Bucket, t: number) => Math.min(perSecond, b.tokens + ((t - b.at) / 1000) * perSecond);
  const forget = (t: number) => {
    for (const [addr, b] of buckets) if (b.pending === 0 && level(b, t) >= perSecond) buckets.delete(addr);
    for (const [addr, b] of buckets) {
      if (buckets.size < MAX_ADDRESSES) break;
      if (b.pending === 0) buckets.delete(addr);
    }
  };
  /**
   * Whether a request from the address may go on. An address with no 401 on record goes on freely;
   * one with a bucket goes on only against a token not already promised to a request in flight, so
   * a flood that arrives all at once cannot pass on one token while the first of it is looked up.
   */
  const admit = (addr: string): { ok: true; counted: boolean } | { ok: false; retryAfter: number } => {
    const b = buckets.get(addr);
    if (!b) return { ok: true, counted: false };
    const t = now();
    const tokens = level(b, t);
    if (tokens >= perSecond && b.pending === 0) {
      buckets.delete(addr); // refilled: the address is as one with no 401 on record
      return { ok: true, counted: false };
    }
    if (tokens - b.pending < 1) return { ok: false, retryAfter: Math.max(1, Math.ceil((1 + b.pending - tokens) / perSecond)) };
    b.pending++;
    return { ok: true, counted: true };
  };
  const answered = (addr: string, counted: boolean, unauthorized: boolean) => {
    const t = now();
    let b = buckets.get(addr);
    if (b && counted) b.pending--;
    if (!unauthorized) return;
    if (!b) {
      if (buckets.size >= MAX_ADDRESSES) forget(t);
      b = { tokens: perSecond, at: t, pending: 0 };
      buckets.set(addr, b);
    }
    b.tokens = level(b, t) - 1;
    b.at = t;
  };
  return async (ctx, next) => {
    const addr = clientAddress(ctx.req.socket.remoteAddress ?? '', ctx.get('x-forwarded-for') || undefined, trustedProxies);
    const admitted = admit(addr);
    if (!admitted.ok) {
      ctx.state.unlogged = true;
      refusedOne(addr, now());
      throw new ApiError(
        'authFailuresRateLimited',
        `Too many requests without a valid API key or token from this address; retry in ${admitted.retryAfter} s with a valid one.`,
        { headers: { 'Retry-After': String(admitted.retryAfter) } },
      );
    }
    let unauthorized = false;
    try {
      await next();
      unauthorized = ctx.status === 401;
    } catch (err) {
      unauthorized = err instanceof ApiError && err.spec.status === 401;
      throw err;
    } finally {
      answered(addr, admitted.counted, unauthorized);
    }
  };
}
