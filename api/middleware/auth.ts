// Every client endpoint needs `x-vouch-api-key`; the key decides which business the request acts for.
import type { Middleware } from 'koa';
import { ApiError } from '../api-error.ts';
import { currentLogContext } from '../../runtime/logger.ts';
import { actAs } from '../../store/audit-actor.ts';
import { findApiKey } from '../../store/businesses.ts';
import type { Db } from '../../store/db.ts';

export const API_KEY_HEADER = 'x-vouch-api-key';

export function authenticate(db: Db): Middleware {
  return async (ctx, next) => {
    const key = ctx.get(API_KEY_HEADER);
    if (!key) throw new ApiError('authMissingKey', `The ${API_KEY_HEADER} header is missing; send your API key in it.`, { parameter: API_KEY_HEADER });
    const found = key.length <= 200 ? await findApiKey(db, key) : undefined;
    if (!found)
      throw new ApiError('authInvalidKey', `The API key in ${API_KEY_HEADER} is unknown or revoked; check it, or use a current key.`, {
        parameter: API_KEY_HEADER,
      });
    const { business, keyId } = found;
    ctx.state.business = business;
    const logContext = currentLogContext();
    if (logContext) logContext.businessId = business.id;
    // what the request writes is audited as this key's doing (store/audit-actor.ts)
    await actAs({ type: 'api_key', id: keyId }, String(ctx.state.requestId ?? '') || null, next);
  };
}
