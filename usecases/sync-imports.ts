// Synchronous token-sharing import (interface 2.5 and 4.1): one applicant, answered when it is
// onboarded. The work runs as a workflow (sync-import-<requestId>); the request waits for its result.
// An optional Idempotency-Key makes the call safe to retry: the same key and body give the same
// answer (waiting for the first request's workflow if it still runs), never a second provider call.
import { createHash, randomUUID } from 'node:crypto';
import type { ErrorName } from '../domain/errors.ts';
import { IMPORT_ERROR_CATEGORIES, type ImportErrorCategory } from '../domain/import-errors.ts';
import { done, refuse, type Outcome, type Refusal } from '../domain/outcome.ts';
import { idempotencyKeyProblem, type SyncImportAnswer, type SyncImportBody } from '../domain/token-sharing.ts';
import { isUniqueViolation } from '../store/db.ts';
import { resolveEntityRef } from '../store/entities.ts';
import { createSyncImport, findSyncImport, findSyncImportByKey, type SyncImport } from '../store/sync-imports.ts';
import type { Caller, UseCaseContext } from './context.ts';

const ERROR_OF_CATEGORY: Record<ImportErrorCategory, ErrorName> = {
  TOKEN_ALREADY_USED: 'syncTokenUsed',
  TOKEN_EXPIRED_OR_INVALID: 'syncTokenInvalid',
  APPLICANT_DATA_REFUSED: 'syncDataRefused',
  CARD_PROCESSOR_TOKEN_INVALID: 'syncCardProcessorTokenTaken',
  ENTITY_NOT_FOUND: 'entityNotFound',
  APPLICANT_LEVEL_NOT_CONFIGURED: 'syncProviderRefused',
  PROVIDER_REJECTED_REQUEST: 'syncProviderRefused',
  PROVIDER_UNAVAILABLE: 'syncProviderUnavailable',
  DUPLICATE_EXTERNAL_ID: 'invalidRequest', // a batch file's own: a sync request is one record
};

const PARAMETER_OF_CATEGORY: Partial<Record<ImportErrorCategory, string>> = {
  TOKEN_ALREADY_USED: 'shareToken',
  TOKEN_EXPIRED_OR_INVALID: 'shareToken',
  CARD_PROCESSOR_TOKEN_INVALID: 'cardProcessorPublicToken',
  ENTITY_NOT_FOUND: 'externalId',
};

const failure = (category: ImportErrorCategory, requestId: string): Refusal =>
  refuse(ERROR_OF_CATEGORY[category], `${category}: ${IMPORT_ERROR_CATEGORIES[category].message}`, {
    parameter: PARAMETER_OF_CATEGORY[category] ?? '',
    extra: { requestId, category },
  });

/** What identifies a request for the Idempotency-Key rule: the fields of the body, in a fixed order. */
const requestHash = (b: SyncImportBody) =>
  createHash('sha256')
    .update(JSON.stringify([b.externalId, b.shareToken, b.cardProcessorPublicToken ?? null]))
    .digest('hex');

function answerOf(rec: SyncImport): Outcome<SyncImportAnswer> {
  if (rec.status === 'failed' || !rec.entityId) return failure(rec.errorCategory ?? 'PROVIDER_REJECTED_REQUEST', rec.requestId);
  return done({ externalId: rec.externalId, status: 'completed', requestId: rec.requestId, entityId: rec.entityId });
}

/** Runs (or joins) the request's workflow and answers from the record it leaves. */
async function runToAnswer({ db, start }: UseCaseContext, requestId: string, businessId: string): Promise<Outcome<SyncImportAnswer>> {
  const run = await start.syncImport(requestId, { businessId });
  if (!run.ok) {
    if (run.failure.timedOut) return failure('PROVIDER_UNAVAILABLE', requestId);
    return refuse('syncProviderRefused', 'The identity provider refused our request; contact support and quote the requestId.', { extra: { requestId } });
  }
  const result = run.value;
  if (result.outcome === 'failed') return failure(result.category, requestId);
  return answerOf((await findSyncImport(db, requestId))!);
}

/** The same key again: the stored answer, or the running request's once it ends. */
function replay(
  context: UseCaseContext,
  businessId: string,
  earlier: SyncImport,
  hash: string,
): Outcome<SyncImportAnswer> | Promise<Outcome<SyncImportAnswer>> {
  if (earlier.requestSha256 !== hash) {
    return refuse(
      'syncIdempotencyKeyReused',
      `This Idempotency-Key was first used for another request (${earlier.requestId}); use a new key for a new request.`,
      {
        parameter: 'Idempotency-Key',
        extra: { requestId: earlier.requestId },
      },
    );
  }
  return earlier.status === 'pending' ? runToAnswer(context, earlier.requestId, businessId) : answerOf(earlier);
}

/** `idempotencyKey` is the header as sent ('' when absent: the request is then not deduplicated). */
export async function syncImport(context: UseCaseContext, caller: Caller, body: SyncImportBody, idempotencyKey: string): Promise<Outcome<SyncImportAnswer>> {
  const { db } = context;
  const key = idempotencyKey === '' ? null : idempotencyKey;
  const keyProblem = key === null ? null : idempotencyKeyProblem(key);
  if (keyProblem) return refuse('invalidRequest', `Idempotency-Key: ${keyProblem}`, { parameter: 'Idempotency-Key' });
  const hash = requestHash(body);
  if (key !== null) {
    const earlier = await findSyncImportByKey(db, caller.id, key);
    if (earlier) return replay(context, caller.id, earlier, hash);
  }
  if (caller.binSponsored && !body.cardProcessorPublicToken) {
    return refuse('invalidRequest', 'cardProcessorPublicToken: is required for BIN-sponsored programs', { parameter: 'cardProcessorPublicToken' });
  }
  const entityId = await resolveEntityRef(db, caller.id, body.externalId);
  if (!entityId)
    return refuse('entityNotFound', `No entity with externalId "${body.externalId}" in your business; create it with POST /entity first.`, {
      parameter: 'externalId',
    });
  const requestId = randomUUID();
  try {
    await createSyncImport(db, {
      requestId,
      businessId: caller.id,
      externalId: body.externalId,
      shareToken: body.shareToken,
      cardProcessorPublicToken: body.cardProcessorPublicToken ?? null,
      idempotencyKey: key,
      requestSha256: hash,
    });
  } catch (err) {
    // the same key arrived twice at once: the second joins the first
    if (key !== null && isUniqueViolation(err, 'sync_imports_idempotency_key'))
      return replay(context, caller.id, (await findSyncImportByKey(db, caller.id, key))!, hash);
    throw err;
  }
  return runToAnswer(context, requestId, caller.id);
}
