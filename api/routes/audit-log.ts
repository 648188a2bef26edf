// GET /audit-log: the business's own audit log (issue 21), and the signed checkpoints of its chain with their keys (issue 37).
import { auditLogPageSchema, auditLogQuery, checkpointKeysSchema, checkpointsPageSchema, checkpointsQuery } from '../../domain/audit-log.ts';
import { checkpointKeys, readAuditLog, readCheckpoints } from '../../usecases/audit-log.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import { route } from '../route.ts';

export function auditLogRoutes(context: UseCaseContext) {
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
      handler: ({ query, business }) => readAuditLog(context, business, query),
    }),
    route({
      method: 'get',
      path: '/audit-log/checkpoints',
      operationId: 'readAuditCheckpoints',
      summary: "Signed checkpoints of your audit log's chain, oldest first",
      description:
        'Every hour (by default) the head of your chain, if it moved, is signed with a key the database does not hold and stored ' +
        'outside it. Keep them: each later page of GET /audit-log must still contain the entry a checkpoint names, with its hash, ' +
        'so no one — not even with the service’s own database credentials — rewrote the log before it unseen. Verify the signature ' +
        'with GET /audit-log/checkpoint-keys.',
      tag: 'Record',
      versioned: true,
      query: checkpointsQuery,
      responses: { 200: { description: 'A page of checkpoints', schema: checkpointsPageSchema } },
      errors: ['invalidRequest', 'acceptVersionMissing', 'acceptVersionUnsupported'],
      handler: ({ query, business }) => readCheckpoints(context, business, query),
    }),
    route({
      method: 'get',
      path: '/audit-log/checkpoint-keys',
      operationId: 'auditCheckpointKeys',
      summary: 'Public keys that verify audit checkpoints, with their validity windows',
      description: 'Beside GET /webhook-keys and GET /signed-payload-keys. A checkpoint is valid when the key its keyId names signed it while valid.',
      tag: 'Record',
      responses: { 200: { description: 'The checkpoint key ring of this environment', schema: checkpointKeysSchema } },
      handler: () => checkpointKeys(context),
    }),
  ];
}
