// Batches of requirement submissions (interface v1.1.0): upload, status, cancel, retry, and the
// failed records as CSV. The upload reads the JSON Lines file (domain/requirement-lines.ts: each
// record's own rules), checks each record against the business's entities by the single endpoints'
// rules (the entity, the person and memberId — domain/person-ref.ts — the requirement for the
// entity's type — domain/requirement-rules.ts — a card token another entity holds), stores the batch
// with every record in one transaction and starts its workflow; a bad record fails alone.
import { z } from 'zod';
import type { UploadRejected } from '../domain/batch-csv.ts';
import { csvLine } from '../domain/csv.ts';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import type { Page } from '../domain/pagination.ts';
import { isUuid } from '../domain/ids.ts';
import { personRefProblem } from '../domain/person-ref.ts';
import { cardProcessorTokenTaken } from '../domain/share-fields.ts';
import {
  requirementBatchStatus,
  type RecordFailure,
  type RequirementBatchAccepted,
  type RequirementBatchStatus,
  type RequirementRecordCategory,
} from '../domain/requirement-batch.ts';
import type { RequirementLine } from '../domain/requirement-lines.ts';
import { requirementSlugProblem } from '../domain/requirement-rules.ts';
import { CANONICAL_KYC_SLUG } from '../domain/universal-kyc.ts';
import { webhookPrerequisite } from '../domain/webhook-prerequisite.ts';
import { cardTokenHolders } from '../store/entities.ts';
import { membershipKey, membershipsAmong } from '../store/memberships.ts';
import {
  createRequirementBatch,
  entitiesNamed,
  failedRequirementRecords,
  findRequirementBatch,
  findRequirementBatchByContent,
  findRequirementBatchByKey,
  markRequirementBatchCanceled,
  requeueRequirementRecords,
  requirementBatchCounts,
  type RequirementBatch,
  type ResolvedRecord,
} from '../store/requirement-batches.ts';
import { subscribedTypes } from '../store/subscriptions.ts';
import { checkIdempotencyKey, plural, readRefusal, rejectedFile, uploadOnce } from './batch-uploads.ts';
import type { Caller, UseCaseContext } from './context.ts';
import type { UploadProblem } from './uploads.ts';

/** The upload's file as the API read it (checked line by line while it streamed in, and hashed), or why it could not be read. */
export type LinesRead =
  | { ok: true; file: { lines: { ok: true; records: RequirementLine[] } | { ok: false; rejected: UploadRejected }; sha256: string; fileName: string | null } }
  | UploadProblem;

export const REQUIREMENT_BATCH_PATH = '/entity/requirement/batch';
const statusPath = (id: string) => `${REQUIREMENT_BATCH_PATH}/${id}`;

const notFound = (id: string) =>
  refuse('batchNotFound', `Batch ${id} not found in your business; check the batchId the upload returned.`, { parameter: 'batchId' });

const failure = (category: RequirementRecordCategory, message: string, path: string): RecordFailure => ({ category, message, path });

/**
 * Each record against the business's entities, by the single endpoints' rules: the entity it names,
 * the person (memberId), the requirement for that entity, one record per entity and requirement, a
 * card token held by another entity or by another record. Records that failed on their own stay as they are.
 */
async function resolveRecords(context: UseCaseContext, caller: Caller, lines: readonly RequirementLine[]): Promise<ResolvedRecord[]> {
  const open = lines.filter((l) => !l.failure);
  // failed lines too: a record names its entity so that the entity's deletion takes the record's value with it
  const ids = lines.flatMap((l) => [l.entityId, l.memberId].filter((x): x is string => x !== null && isUuid(x)));
  const { byId, byExternalId } = await entitiesNamed(
    context.db,
    caller.id,
    [...new Set(ids.map((id) => id.toLowerCase()))],
    [...new Set(lines.flatMap((l) => (l.externalId === null ? [] : [l.externalId])))],
  );
  const entityOf = (l: RequirementLine) =>
    l.entityId !== null ? byId.get(l.entityId.toLowerCase()) : l.externalId !== null ? byExternalId.get(l.externalId) : undefined;
  const memberships = await membershipsAmong(
    context.db,
    lines.flatMap((l) => {
      const e = entityOf(l);
      return e && l.memberId !== null && isUuid(l.memberId) && e.type === 'BUSINESS' ? [{ businessEntityId: e.id, memberId: l.memberId.toLowerCase() }] : [];
    }),
  );
  /** Whom a record that failed at once is about: the member it names, else its entity (none when neither is of the business). */
  const namedBy = (l: RequirementLine): string | null => {
    const e = entityOf(l);
    if (!e) return null;
    const m = l.memberId?.toLowerCase();
    return m !== undefined && memberships.has(membershipKey(e.id, m)) ? m : e.id;
  };
  const tokens = await cardTokenHolders(context.db, caller.id, [
    ...new Set(open.flatMap((l) => (l.cardProcessorPublicToken ? [l.cardProcessorPublicToken] : []))),
  ]);
  const firstOf = new Map<string, number>(); // entity and requirement → the line that has it
  const tokenOf = new Map<string, { entityId: string; line: number }>(); // card token → the person a line gave it to

  return lines.map((l): ResolvedRecord => {
    if (l.failure) return { ...l, targetEntityId: namedBy(l) };
    const fails = (f: RecordFailure, targetEntityId: string | null = null): ResolvedRecord => ({ ...l, targetEntityId, failure: f });
    const entity = entityOf(l);
    if (!entity) {
      const [field, given] = l.entityId !== null ? ['entityId', l.entityId] : ['externalId', l.externalId!];
      return fails(
        failure(
          'ENTITY_NOT_FOUND',
          `No entity with ${field} ${JSON.stringify(given.slice(0, 100))} in your business; create it with POST /entity first.`,
          field,
        ),
      );
    }
    const slug = l.requirementSlug!;
    const memberId = l.memberId?.toLowerCase();
    if (memberId !== undefined || slug === CANONICAL_KYC_SLUG) {
      const isMember = memberId !== undefined && memberships.has(membershipKey(entity.id, memberId));
      const problem = personRefProblem(entity.id, entity.type, memberId, isMember);
      if (problem)
        return fails(failure(problem.error === 'memberNotFound' ? 'MEMBER_NOT_FOUND' : 'PERSON_REQUIRED', problem.message, problem.parameter), entity.id);
    }
    const target = memberId !== undefined ? (byId.get(memberId) ?? { id: memberId, type: 'INDIVIDUAL' as const }) : entity;
    const slugProblem = requirementSlugProblem(slug, target.type, 'requirement-batch');
    if (slugProblem) return fails(failure('REQUIREMENT_NOT_ACCEPTED', `${slugProblem}.`, 'requirementSlug'), target.id);
    const key = `${target.id} ${slug}`;
    const first = firstOf.get(key);
    if (first !== undefined)
      return fails(
        failure(
          'DUPLICATE_RECORD',
          `Line ${first} of this file already submits ${slug} of entity ${target.id}; one record per entity and requirement in a file.`,
          'requirementSlug',
        ),
        target.id,
      );
    firstOf.set(key, l.rowNumber);
    const token = l.cardProcessorPublicToken;
    if (token) {
      // held by another entity, or given to another person by an earlier line: the one rule, asked of both
      const given = tokenOf.get(token);
      const taken = cardProcessorTokenTaken(target.id, tokens.get(token) ?? null) ?? cardProcessorTokenTaken(target.id, given?.entityId ?? null);
      if (taken) {
        const other = taken.holder === given?.entityId ? `the person of line ${given.line}` : `entity ${taken.holder}`;
        return fails(
          failure(
            taken.category,
            `cardProcessorPublicToken is already assigned to ${other}; send this person's own token, or leave it out.`,
            'value.cardProcessorPublicToken',
          ),
          target.id,
        );
      }
      tokenOf.set(token, { entityId: target.id, line: l.rowNumber });
    }
    return { ...l, targetEntityId: target.id };
  });
}

/** The upload's answer; `failedAtOnce`, the records that failed at upload, told on the first answer. */
const accepted = (b: RequirementBatch, failedAtOnce: number): RequirementBatchAccepted => ({
  batchId: b.id,
  businessUuid: b.businessId,
  status: 'pending',
  totalRecords: b.totalRecords,
  message:
    `Batch accepted: ${plural(b.totalRecords, 'record')} queued` +
    (failedAtOnce
      ? `; ${plural(failedAtOnce, 'record')} failed on ${failedAtOnce === 1 ? 'its' : 'their'} own ` +
        `and ${failedAtOnce === 1 ? 'is' : 'are'} listed in summary.errors`
      : '') +
    `. Poll GET ${statusPath(b.id)} for progress; decisions arrive by webhook.`,
  createdAt: b.createdAt,
});

export type RequirementUploadRequest = {
  /** Idempotency-Key, as sent ('' when absent). */
  idempotencyKey: string;
  /** Reads the file; called once the headers are valid. */
  readLines(): Promise<LinesRead>;
};

/** POST /entity/requirement/batch. */
export async function uploadRequirementBatch(
  context: UseCaseContext,
  caller: Caller,
  request: RequirementUploadRequest,
): Promise<Outcome<RequirementBatchAccepted>> {
  const key = checkIdempotencyKey(request.idempotencyKey);
  if (!key.ok) return key;
  const { db } = context;
  type File = { records: ResolvedRecord[]; fileName: string | null };
  return uploadOnce<RequirementBatch, File, RequirementBatchAccepted>({
    key: key.value,
    statusPath,
    byKey: (k) => findRequirementBatchByKey(db, caller.id, k),
    byContent: (sha) => findRequirementBatchByContent(db, caller.id, sha),
    async read() {
      const read = await request.readLines();
      if (!read.ok) return { ok: false, refusal: readRefusal(read) };
      const { lines, sha256, fileName } = read.file;
      if (!lines.ok) return { ok: true, sha256, file: { records: [], fileName }, invalid: rejectedFile(lines.rejected) };
      const records = await resolveRecords(context, caller, lines.records);
      // the decision of canonical KYC data is delivered only by webhook (spec 1.4), as on the single endpoint
      const unmet = records.some((r) => !r.failure && r.requirementSlug === CANONICAL_KYC_SLUG)
        ? webhookPrerequisite('person', await subscribedTypes(db, caller.id))
        : null;
      return { ok: true, sha256, file: { records, fileName }, invalid: unmet };
    },
    create: (file, sha256) =>
      createRequirementBatch(db, { businessId: caller.id, idempotencyKey: key.value, contentSha256: sha256, fileName: file.fileName, records: file.records }),
    constraints: { key: 'requirement_batches_idempotency_key', content: 'requirement_batches_content_key' },
    start: (batch) => context.start.requirementBatchRun(batch.id, batch.run, caller.id),
    accepted: (batch, file) => accepted(batch, file ? file.records.filter((r) => r.failure).length : 0),
  });
}

/** The status record, with every error or (page given) a page of them. */
async function statusOf(context: UseCaseContext, batch: RequirementBatch, page: Page | null): Promise<RequirementBatchStatus> {
  const [counts, failed] = await Promise.all([requirementBatchCounts(context.db, batch.id), failedRequirementRecords(context.db, batch.id, page)]);
  return requirementBatchStatus(batch, counts, failed, page);
}

export async function getRequirementBatch(
  context: UseCaseContext,
  caller: Caller,
  batchId: string,
  page: Page | null = null,
): Promise<Outcome<RequirementBatchStatus>> {
  const batch = await findRequirementBatch(context.db, caller.id, batchId);
  if (!batch) return notFound(batchId);
  return done(await statusOf(context, batch, page));
}

export async function cancelRequirementBatch(context: UseCaseContext, caller: Caller, batchId: string): Promise<Outcome<RequirementBatchStatus>> {
  const batch = await findRequirementBatch(context.db, caller.id, batchId);
  if (!batch) return notFound(batchId);
  if (!(await markRequirementBatchCanceled(context.db, caller.id, batch.id))) {
    return refuse(
      'batchNotCancelable',
      `Batch ${batch.id} has already finished (${batch.status}), so there is nothing to cancel; read its outcome with GET ${statusPath(batch.id)}.`,
      { parameter: 'batchId' },
    );
  }
  // the batch is canceled in PostgreSQL, which every record checks before it starts: stopping the workflow only saves its empty steps
  await context.runs.cancelRequirementBatchRun(batch.id, batch.run).catch((err: unknown) => {
    context.log.warn({ err, batchId: batch.id }, 'requirement batch canceled; its workflow could not be told (records not yet started will not start)');
  });
  return done(await statusOf(context, (await findRequirementBatch(context.db, caller.id, batch.id))!, null));
}

/** POST …/retry's answer: the new run has started. */
export const requirementBatchRetrySchema = z.object({ batchId: z.uuid(), status: z.literal('in_progress'), requeuedRecords: z.number().int() });

export async function retryRequirementBatch(
  context: UseCaseContext,
  caller: Caller,
  batchId: string,
): Promise<Outcome<z.input<typeof requirementBatchRetrySchema>>> {
  const result = await requeueRequirementRecords(context.db, caller.id, batchId);
  if (result === 'not-found') return notFound(batchId);
  if (result === 'running')
    return refuse('batchNotRetryable', 'The batch is still running; retry its failed records once it has finished.', { parameter: 'batchId' });
  if (result === 'nothing')
    return refuse(
      'batchNotRetryable',
      'The batch has no records left unprocessed; a failed record fails again as it is (retryable false): correct it ' + 'and upload it in a new file.',
      { parameter: 'batchId' },
    );
  await context.start.requirementBatchRun(batchId, result.run, caller.id);
  return done({ batchId, status: 'in_progress' as const, requeuedRecords: result.requeued });
}

/** The failed records as CSV: the record's fields (value as JSON text, so the line can be rebuilt), then what went wrong. */
export async function requirementBatchFailedRecords(context: UseCaseContext, caller: Caller, batchId: string) {
  const batch = await findRequirementBatch(context.db, caller.id, batchId);
  if (!batch) return notFound(batchId);
  const lines = [
    csvLine(['rowNumber', 'entityId', 'externalId', 'memberId', 'requirementSlug', 'value', 'errorCategory', 'errorPath', 'errorMessage', 'retryable']),
  ];
  for (const f of await failedRequirementRecords(context.db, batch.id, null, true)) {
    lines.push(
      csvLine([
        String(f.rowNumber),
        f.entityId ?? '',
        f.externalId ?? '',
        f.memberId ?? '',
        f.requirementSlug ?? '',
        f.value ?? '',
        f.category,
        f.path,
        f.message,
        String(f.retryable),
      ]),
    );
  }
  return done({ fileName: `requirement-batch-${batch.id}-failed-records.csv`, csv: lines.join('') });
}
