// First middleware: gives every request an id of ours, opens the log scope that stamps it on every
// line, and logs one line per request when it ends (a download link in the path is logged by a
// hash: the link itself is a credential; requests a flood limit refused unread are summed up by it
// instead). A caller's X-Request-Id (when sane) is logged beside it as
// clientRequestId, to find the line by; it is never the request's id, which the audit log records
// (issue 37: no text a caller chose enters the log).
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { redactedLinkPath } from '../../files/download-links.ts';
import { runWithLogContext } from '../../runtime/logger.ts';
import { observeRequest } from '../http-metrics.ts';

const SAFE_ID = /^[\w.:-]{1,128}$/;

export function requestContext(log: Logger): Middleware {
  return async (ctx, next) => {
    const given = ctx.get('x-request-id');
    const requestId = randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    await runWithLogContext({ requestId, ...(SAFE_ID.test(given) ? { clientRequestId: given } : {}) }, async () => {
      try {
        await next();
      } finally {
        observeRequest((ctx as { _matchedRoute?: string })._matchedRoute, ctx.method, ctx.status, (performance.now() - started) / 1000);
        // a request refused unread by a flood limit is counted in a summary line instead (a flood must not flood the log)
        if (!ctx.state.unlogged)
          log.info(
            { method: ctx.method, path: redactedLinkPath(ctx.path), status: ctx.status, durationMs: Math.round((performance.now() - started) * 10) / 10 },
            'request',
          );
      }
    });
  };
}
