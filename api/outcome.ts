// The one place where a use case's outcome becomes a response: a value is sent with the route's
// success status (and content type), a refusal becomes the catalogue's error (code and HTTP status)
// that the error middleware renders as { code, message, parameter }.
import type { Context } from 'koa';
import { ApiError } from './api-error.ts';
import type { Outcome } from '../domain/outcome.ts';
import type { Route } from './route.ts';

/** The route's one 2xx response (routes that answer more than one success say so in `present`). */
function successStatus(r: Route): number {
  const statuses = Object.keys(r.responses)
    .map(Number)
    .filter((s) => s >= 200 && s < 300);
  if (statuses.length !== 1) throw new Error(`${r.operationId}: declare present() to choose among success statuses ${statuses.join(', ')}`);
  return statuses[0]!;
}

export function respond(ctx: Context, r: Route, outcome: Outcome<unknown>): void {
  if (!outcome.ok) {
    const headers = outcome.retryAfterSeconds !== undefined ? { 'Retry-After': String(outcome.retryAfterSeconds) } : undefined;
    throw new ApiError(outcome.error, outcome.message, { parameter: outcome.parameter, extra: { ...outcome.extra }, ...(headers ? { headers } : {}) });
  }
  const presented = r.present?.(outcome.value) ?? {};
  const status = presented.status ?? successStatus(r);
  const body = 'body' in presented ? presented.body : outcome.value;
  ctx.status = status;
  if (presented.headers) ctx.set(presented.headers);
  const contentType = r.responses[status]?.contentType;
  if (contentType && !presented.headers?.['Content-Type']) ctx.type = contentType; // a served file says its own type
  if (body !== undefined) ctx.body = body;
}
