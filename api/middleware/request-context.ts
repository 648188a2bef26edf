// First middleware: gives every request an id (the caller's X-Request-Id when sane), opens the log
// scope that stamps it on every line, and logs one line per request when it ends (a download link
// in the path is logged by a hash: the link itself is a credential).
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
    const requestId = SAFE_ID.test(given) ? given : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    await runWithLogContext({ requestId }, async () => {
      try {
        await next();
      } finally {
        observeRequest((ctx as { _matchedRoute?: string })._matchedRoute, ctx.method, ctx.status, (performance.now() - started) / 1000);
        log.info(
          { method: ctx.method, path: redactedLinkPath(ctx.path), status: ctx.status, durationMs: Math.round((performance.now() - started) * 10) / 10 },
          'request',
        );
      }
    });
  };
}
