// The one place where failures become responses. Client errors carry their catalogue code;
// anything else is logged in full and answered with a plain 500 that leaks no detail.
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { ApiError } from '../api-error.ts';
import { errorCatalogue } from '../../domain/errors.ts';

export function errorHandler(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (err instanceof ApiError) {
        ctx.status = err.status;
        ctx.set(err.headers);
        ctx.body = err.body();
        return;
      }
      log.error({ err }, 'unhandled error');
      ctx.status = 500;
      ctx.body = {
        code: errorCatalogue.internal.code,
        message: `Internal error. Quote request id ${ctx.state.requestId} to support.`,
        parameter: '',
        requestId: ctx.state.requestId,
      };
    }
  };
}
