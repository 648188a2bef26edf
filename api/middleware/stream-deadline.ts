// A streamed response (a file download) must be sent within the deadline, or its connection is cut:
// a reader that trickles (or reads nothing) holds no open file, socket and stream for longer, and a
// download that began before its entity was deleted stops sending the deleted bytes by then. JSON
// answers are small and not concerned.
import { Readable } from 'node:stream';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

export function streamDeadline(deadlineMs: number, log: Logger): Middleware {
  return async (ctx, next) => {
    await next();
    const body: unknown = ctx.body;
    if (!(body instanceof Readable)) return;
    const timer = setTimeout(() => {
      log.info({ deadlineMs }, 'streamed response cut off at its deadline'); // the request id comes with the timer's context
      body.destroy();
      ctx.res.destroy();
    }, deadlineMs);
    ctx.res.once('close', () => clearTimeout(timer));
  };
}
