// GET /audit-log (issue 21): a business reads its own audit log, oldest first, with the hashes that
// chain it, so a client can check the chain itself (domain/audit-chain.ts says how).
import { z } from 'zod';
import { AUDIT_ACTION_NAMES } from './audit-actions.ts';
import { paginationQuery, pageMetaSchema } from './pagination.ts';

/** An ISO 8601 date-time of the years 2000 to 9999 (the pattern says so in the API description), given to the query as UTC. */
const isoTime = (name: string) =>
  z.iso
    .datetime({ offset: true, message: `${name} must be an ISO 8601 date-time` })
    .regex(/^[2-9]\d{3}-/, `${name} must be of the years 2000 to 9999`)
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
  entityId: z.uuid().optional().meta({ description: 'The entity the entry concerns; absent when it concerns none (a subscription, a key).' }),
  subject: z.object({ type: z.string(), id: z.string() }).nullable(),
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).meta({ description: 'Ids and hashes only.' }),
  outcome: z.string().meta({ description: '`ok`, or the code of the refusal.' }),
  prevHash: z.string(),
  hash: z.string().meta({ description: 'SHA-256 (hex) of prevHash, a newline, and the RFC 8785 JSON of the other fields as stored (see README).' }),
});

export const auditLogPageSchema = z.object({ items: z.array(auditEntrySchema), meta: pageMetaSchema() });
export type AuditLogPage = z.input<typeof auditLogPageSchema>;

/** GET /audit-log/checkpoints: paging only. */
export const checkpointsQuery = paginationQuery.strict();

export const checkpointSchema = z.object({
  format: z.literal('vouch-audit-checkpoint/1'),
  businessId: z.uuid(),
  seq: z.number().int().meta({ description: 'The head it attests: the seq of the last entry of your chain when it was signed.' }),
  hash: z.string().meta({ description: "That entry's hash." }),
  at: z.string().meta({ description: 'When it was signed (ISO 8601, as signed).' }),
  keyId: z.string().meta({ description: 'The key of GET /audit-log/checkpoint-keys that signed it.' }),
  signature: z.string().meta({ description: 'Ed25519 over the RFC 8785 JSON of the other fields, Base64.' }),
});

export const checkpointsPageSchema = z.object({ items: z.array(checkpointSchema), meta: pageMetaSchema() });
export type CheckpointsPage = z.input<typeof checkpointsPageSchema>;

export const checkpointKeysSchema = z.object({
  algorithm: z.literal('Ed25519'),
  signedContent: z.string(),
  keys: z.array(z.object({ keyId: z.string(), algorithm: z.literal('Ed25519'), publicKeyPem: z.string(), validFrom: z.string(), validUntil: z.string() })),
});
export type CheckpointKeys = z.input<typeof checkpointKeysSchema>;
