// GET /audit-log: the business's own audit log (issue 21).
import { auditLogPageSchema, auditLogQuery } from '../../domain/audit-log.ts';
import { readAuditLog } from '../../usecases/audit-log.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import { route } from '../route.ts';

export function auditLogRoutes(uc: UseCaseContext) {
  return [
    route({
      method: 'get',
      path: '/audit-log',
      operationId: 'readAuditLog',
      summary: "Your business's audit log, oldest first",
      description:
        'Every change to your data and every read of a person’s data: when, who (API key id, admin CLI, operator, provider callback, ' +
        'workflow run), what action on which ids, the request id and the outcome. Ids and hashes only. Entries are hash-chained ' +
        '(prevHash, hash), so you can check that none was changed, removed or reordered.',
      tag: 'Record',
      versioned: true,
      query: auditLogQuery,
      responses: { 200: { description: 'A page of entries', schema: auditLogPageSchema } },
      errors: ['invalidRequest', 'acceptVersionMissing', 'acceptVersionUnsupported'],
      handler: ({ query, business }) => readAuditLog(uc, business, query),
    }),
  ];
}
