// Per-business request limits, counted in PostgreSQL so they hold across API processes.
import type { Middleware } from 'koa';
import { ApiError } from '../api-error.ts';
import type { Db } from '../../store/db.ts';
import { takeRateToken } from '../../store/rate-limit.ts';

export function rateLimit(db: Db, options: { bucket: string; perSecond: number }): Middleware {
  return async (ctx, next) => {
    const businessId: string = ctx.state.business.id;
    const decision = await takeRateToken(db, `${options.bucket}:${businessId}`, options.perSecond);
    if (!decision.allowed) {
      throw new ApiError('rateLimited', `Rate limit of ${options.perSecond} requests per second exceeded; retry in ${decision.retryAfterSeconds} s.`, {
        headers: { 'Retry-After': String(decision.retryAfterSeconds) },
      });
    }
    await next();
  };
}
