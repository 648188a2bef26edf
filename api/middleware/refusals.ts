// A refused request that would have changed data is an audit entry too (issue 21): who tried what,
// and the code they got. Reads are not (a GET changes nothing; the personal-data reads record their
// own outcome), nor are refusals of the limiter (429) and of an overloaded service (503): recording
// those would turn a flood into writes. A refusal caused by our own failure (5xx) is not the caller's act.
//
// The entry holds nothing the caller chose (issue 37): its parameter by its shape (a name the API
// does not define is `<unknown>`), and the path's entity only when it is of the caller's business —
// another business's id never enters that entity's record (its evidence stays its business's alone).
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { ApiError } from '../api-error.ts';
import { parameterShape } from '../../domain/audit-bounds.ts';
import { isUuid } from '../../domain/ids.ts';
import { recordAuditAlone } from '../../store/audit-log.ts';
import type { Db } from '../../store/db.ts';
import { recordBusiness } from '../../store/retention.ts';

const NOT_RECORDED = new Set([429, 503]);

export function auditRefusals(db: Db, operationId: string, known: () => Set<string>, log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const business = ctx.state.business as { id: string } | undefined;
      if (err instanceof ApiError && business && ctx.method !== 'GET' && ctx.method !== 'HEAD' && err.status < 500 && !NOT_RECORDED.has(err.status)) {
        const vocabulary = known();
        await (async () => {
          const given = typeof ctx.params?.entityId === 'string' && isUuid(ctx.params.entityId) ? ctx.params.entityId : null;
          const ours = given !== null && (await recordBusiness(db, given))?.businessId === business.id;
          await recordAuditAlone(db, {
            businessId: business.id,
            action: 'request.refused',
            entityId: ours ? given : null,
            subject: { type: 'operation', id: operationId },
            details: { status: err.status, parameter: parameterShape(err.parameter, (name) => vocabulary.has(name)) },
            outcome: err.spec.code,
          });
        })().catch((e: unknown) => log.warn({ err: e }, 'could not record a refused request in the audit log'));
      }
      throw err;
    }
  };
}
