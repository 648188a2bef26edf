// GET /audit-log (issue 21): a business reads its own audit log, oldest first, with the hashes that
// chain it, so a client can check the chain itself (domain/audit-chain.ts says how).
import { z } from 'zod';
import { AUDIT_ACTION_NAMES } from './audit-actions.ts';
import { paginationQuery, pageMetaSchema } from './pagination.ts';

const EARLIEST = Date.UTC(2000, 0, 1);
const LATEST = Date.UTC(9999, 11, 31);
/** An ISO 8601 date-time between 2000 and 9999, given to the query as UTC (PostgreSQL's calendar is not the client's problem). */
const isoTime = (name: string) =>
  z.iso
    .datetime({ offset: true, message: `${name} must be an ISO 8601 date-time` })
    .refine((v) => Date.parse(v) >= EARLIEST && Date.parse(v) <= LATEST, `${name} must be between 2000-01-01 and 9999-12-31`)
    .transform((v) => new Date(v).toISOString());

export const auditLogQuery = paginationQuery
  .extend({
    entityId: z.uuid({ message: 'entityId must be a UUID' }).optional().meta({ description: 'Only entries naming this entity.' }),
    action: z
      .enum(AUDIT_ACTION_NAMES, { message: 'action must be one of the audit actions (see the README)' })
      .optional()
      .meta({ description: 'Only entries of this action.' }),
    from: isoTime('from').optional().meta({ description: 'Only entries at or after this time.' }),
    to: isoTime('to').optional().meta({ description: 'Only entries before this time.' }),
  })
  .strict();

export const auditEntrySchema = z.object({
  id: z.uuid(),
  seq: z.number().int().meta({ description: "The entry's place in your business's chain, from 1." }),
  occurredAt: z.string(),
  actor: z.object({
    type: z.enum(['api_key', 'admin_cli', 'operator', 'provider_callback', 'download_link', 'workflow', 'system']),
    id: z.string().meta({ description: "The API key's id, the operator's name, the workflow id, …" }),
    runId: z.string().nullable().meta({ description: 'The workflow run, when the actor is a workflow.' }),
  }),
  requestId: z.string().nullable(),
  action: z.enum(AUDIT_ACTION_NAMES),
  entityId: z.uuid().nullable(),
  subject: z.object({ type: z.string(), id: z.string() }).nullable(),
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).meta({ description: 'Ids and hashes only.' }),
  outcome: z.string().meta({ description: '`ok`, or the code of the refusal.' }),
  prevHash: z.string(),
  hash: z.string().meta({ description: 'SHA-256 (hex) of prevHash, a newline, and the RFC 8785 JSON of the other fields as stored (see README).' }),
});

export const auditLogPageSchema = z.object({ items: z.array(auditEntrySchema), meta: pageMetaSchema() });
export type AuditLogPage = z.input<typeof auditLogPageSchema>;
