// Token-sharing request rules (interface 2.5 and 4.1) shared by validation and documentation.
import { z } from 'zod';
import { MAX_EXTERNAL_ID } from './entity.ts';
import { CARD_PROCESSOR_TOKEN, CARD_PROCESSOR_TOKEN_RULE, CONTROL_CHARACTER_RULE, MAX_SHARE_TOKEN, NO_CONTROL_CHARACTERS } from './share-fields.ts';

/** Values accepted in `X-Provider` for imports (compared case-insensitively). */
export const IMPORT_PROVIDERS = ['sumsub'] as const;

export const MAX_IDEMPOTENCY_KEY = 255;
/** An Idempotency-Key (batch upload, sync import): 1-255 characters, not only blanks. */
export const idempotencyKey = z
  .string()
  .min(1, 'must not be empty')
  .regex(/\S/, 'must not be blank')
  .max(MAX_IDEMPOTENCY_KEY, `must be at most ${MAX_IDEMPOTENCY_KEY} characters`);
/** What is wrong with a key (the first problem), or null. */
export const idempotencyKeyProblem = (key: string): string | null => {
  const result = idempotencyKey.safeParse(key);
  return result.success ? null : result.error.issues[0]!.message;
};
/** How the header is documented: the same schema. */
export const IDEMPOTENCY_KEY_SCHEMA = (({ $schema: _drop, ...json }) => json)(z.toJSONSchema(idempotencyKey) as Record<string, unknown>);
/** How X-Provider is documented: a supported provider, compared case-insensitively (surrounding blanks ignored). */
export const PROVIDER_HEADER_SCHEMA = {
  type: 'string',
  pattern: `^\\s*(${IMPORT_PROVIDERS.map((p) => [...p].map((c) => `[${c.toLowerCase()}${c.toUpperCase()}]`).join('')).join('|')})\\s*$`,
} as const;

/** A text field of a share: not empty, bounded, no control characters. */
const plainText = (name: string, max: number) =>
  z
    .string()
    .min(1, `${name} must not be empty`)
    .max(max, `${name} is at most ${max} characters`)
    .regex(NO_CONTROL_CHARACTERS, `${name} ${CONTROL_CHARACTER_RULE}`);

export const syncImportBody = z
  .object({
    externalId: plainText('externalId', MAX_EXTERNAL_ID),
    shareToken: plainText('shareToken', MAX_SHARE_TOKEN),
    // "" or null is absent, as an empty cell of the batch file is (issue 38, item 11): a client that
    // is not BIN-sponsored may send the field empty; a BIN-sponsored one is still told it is required
    cardProcessorPublicToken: z
      .union([z.literal(''), z.null(), z.string().regex(CARD_PROCESSOR_TOKEN, `cardProcessorPublicToken ${CARD_PROCESSOR_TOKEN_RULE}`)])
      .optional()
      .transform((v) => v || undefined)
      .meta({ description: 'The card processor token; required for BIN-sponsored programs. Empty ("") or null is the same as leaving it out.' }),
  })
  .strict();
export type SyncImportBody = z.output<typeof syncImportBody>;

export const syncImportResponse = z.object({
  externalId: z.string(),
  status: z.literal('completed'),
  requestId: z.uuid(),
  entityId: z.uuid(),
});
export type SyncImportAnswer = z.infer<typeof syncImportResponse>;

export const batchUploadResponse = z.object({
  batchId: z.uuid(),
  businessUuid: z.uuid(),
  status: z.literal('pending'),
  totalRecords: z.number().int(),
  message: z.string(),
  createdAt: z.string(),
  ignoredColumns: z
    .array(z.string())
    .optional()
    .meta({
      description:
        'Present when the header had columns the interface does not name (or a repeat of one): each' +
        ' as `name (column n)`, ignored. A typo in a column name shows here.',
    }),
});
export type BatchAccepted = z.input<typeof batchUploadResponse>;

export const batchIdParams = z.object({ batchId: z.uuid({ message: 'batchId must be a UUID' }) }).strict();
