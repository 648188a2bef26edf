// A batch of requirement submissions (interface v1.1.0): why a record fails (its category, with
// whether resubmitting helps), and the status record — the batch import's shape (interface 2.3)
// with each error naming the field at fault and echoing the record.
import { z } from 'zod';
import { statusRecordFields, statusRecordSchema, type BatchView } from './batch-status.ts';
import type { Page } from './pagination.ts';
import { batchUploadResponse } from './token-sharing.ts';

export const REQUIREMENT_RECORD_CATEGORIES = {
  INVALID_RECORD: { retryable: false, message: 'The line is not a record: a JSON object with entityId or externalId, requirementSlug and value.' },
  ENTITY_NOT_FOUND: { retryable: false, message: 'No entity with this entityId (or externalId) exists in your business. Create it with POST /entity first.' },
  PERSON_REQUIRED: { retryable: false, message: 'The record must name a person: an INDIVIDUAL entity, or a BUSINESS entity with memberId.' },
  MEMBER_NOT_FOUND: { retryable: false, message: 'The memberId is not a declared member of the business entity.' },
  REQUIREMENT_NOT_ACCEPTED: { retryable: false, message: 'The requirement cannot be submitted in a batch on this entity.' },
  INVALID_VALUE: { retryable: false, message: "The value is not of the requirement's form." },
  CARD_PROCESSOR_TOKEN_INVALID: {
    retryable: false,
    message: "The cardProcessorPublicToken is already assigned to another entity. Check that the token is this person's: a token belongs to one entity.",
  },
  DUPLICATE_RECORD: { retryable: false, message: 'An earlier record of the same file submits the same requirement of the same entity; one per file.' },
} as const;

export type RequirementRecordCategory = keyof typeof REQUIREMENT_RECORD_CATEGORIES;

/** Why a record failed: its category, a message saying what to do, and the field at fault (`value.identity.dob`, `memberId`, …; '' for the line). */
export type RecordFailure = { category: RequirementRecordCategory; message: string; path: string };

/** A failed record as stored, for the status record and the failed-records CSV. */
export type FailedRecordView = {
  rowNumber: number;
  entityId: string | null;
  externalId: string | null;
  memberId: string | null;
  requirementSlug: string | null;
  /** The value as sent (JSON text), null once its entity is deleted. */
  value: string | null;
  category: string;
  message: string;
  path: string;
  retryable: boolean;
};

const recordErrorSchema = z.object({
  rowNumber: z.number().int().meta({ description: 'The line of the file (1-based)' }),
  error: z.string(),
  errorDetail: z.object({
    category: z.enum(Object.keys(REQUIREMENT_RECORD_CATEGORIES) as [RequirementRecordCategory, ...RequirementRecordCategory[]]),
    message: z.string(),
    retryable: z.boolean(),
    path: z.string().meta({ description: "The field at fault, as a path into the record ('value.identity.dob', 'memberId'); empty for the whole line" }),
  }),
  entityData: z
    .object({ entityId: z.string().optional(), externalId: z.string().optional(), memberId: z.string().optional(), requirementSlug: z.string().optional() })
    .meta({ description: 'The record as sent, without its value (the failed-records CSV has it)' }),
});

/** The status record (2.3's shape), as the status and cancel endpoints answer it. */
export const requirementBatchStatusSchema = statusRecordSchema(recordErrorSchema, {
  decided: z
    .number()
    .int()
    .meta({ description: 'Successful canonical KYC records whose submission was complete and is decided (the decision arrives by webhook)' }),
  waitingForDocuments: z.number().int().meta({ description: 'Successful canonical KYC records whose submission waits for an identity document' }),
});
export type RequirementBatchStatus = z.input<typeof requirementBatchStatusSchema>;

/** The upload's answer: the batch import's (2.3), without the CSV's ignoredColumns. */
export const requirementBatchAcceptedSchema = batchUploadResponse.omit({ ignoredColumns: true });
export type RequirementBatchAccepted = z.input<typeof requirementBatchAcceptedSchema>;

export type RequirementBatchCounts = { succeeded: number; failed: number; decided: number; waiting: number };

/** The status record; with `page`, `failed` holds that page of the errors and `meta` says which. */
export function requirementBatchStatus(
  batch: Omit<BatchView, 'successfulRecords' | 'failedRecords'>,
  counts: RequirementBatchCounts,
  failed: readonly FailedRecordView[],
  page: Page | null = null,
): RequirementBatchStatus {
  const errors = failed.map((f) => ({
    rowNumber: f.rowNumber,
    error: f.message,
    errorDetail: { category: f.category as RequirementRecordCategory, message: f.message, retryable: f.retryable, path: f.path },
    entityData: {
      ...(f.entityId !== null ? { entityId: f.entityId } : {}),
      ...(f.externalId !== null ? { externalId: f.externalId } : {}),
      ...(f.memberId !== null ? { memberId: f.memberId } : {}),
      ...(f.requirementSlug !== null ? { requirementSlug: f.requirementSlug } : {}),
    },
  }));
  const view = { ...batch, successfulRecords: counts.succeeded, failedRecords: counts.failed };
  return {
    ...statusRecordFields(view, page),
    summary: { successfulRecords: counts.succeeded, decided: counts.decided, waitingForDocuments: counts.waiting, errors },
  };
}
