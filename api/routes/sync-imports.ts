// Synchronous token-sharing import (interface 2.5 and 4.1): one applicant, answered when it is
// onboarded. The work runs as a workflow (sync-import-<requestId>); the request waits for its result.
// An optional Idempotency-Key makes the call safe to retry: the same key and body give the same
// answer (waiting for the first request's workflow if it still runs), never a second provider call.
import { createHash, randomUUID } from 'node:crypto';
import { TimeoutFailure, WorkflowFailedError, type Client } from '@temporalio/client';
import { ApiError, type ErrorName } from '../../domain/errors.ts';
import { IMPORT_ERROR_CATEGORIES, type ImportErrorCategory } from '../../domain/import-errors.ts';
import { IDEMPOTENCY_KEY_SCHEMA, idempotencyKeyProblem, MAX_IDEMPOTENCY_KEY, syncImportBody, syncImportResponse } from '../../domain/token-sharing.ts';
import type { Config } from '../../runtime/config.ts';
import { createStarters } from '../../runtime/starters.ts';
import { isUniqueViolation, type Db } from '../../store/db.ts';
import { resolveEntityRef } from '../../store/entities.ts';
import { createSyncImport, findSyncImport, findSyncImportByKey, type SyncImport } from '../../store/sync-imports.ts';
import type { SyncImportResult } from '../../contract/workflows.ts';
import { route } from '../route.ts';

const ERROR_OF_CATEGORY: Record<ImportErrorCategory, ErrorName> = {
  TOKEN_ALREADY_USED: 'syncTokenUsed',
  TOKEN_EXPIRED_OR_INVALID: 'syncTokenInvalid',
  APPLICANT_DATA_REFUSED: 'syncDataRefused',
  CARD_PROCESSOR_TOKEN_INVALID: 'syncCardProcessorTokenTaken',
  ENTITY_NOT_FOUND: 'entityNotFound',
  APPLICANT_LEVEL_NOT_CONFIGURED: 'syncProviderRefused',
  PROVIDER_REJECTED_REQUEST: 'syncProviderRefused',
  PROVIDER_UNAVAILABLE: 'syncProviderUnavailable',
};

const PARAMETER_OF_CATEGORY: Partial<Record<ImportErrorCategory, string>> = {
  TOKEN_ALREADY_USED: 'shareToken',
  TOKEN_EXPIRED_OR_INVALID: 'shareToken',
  CARD_PROCESSOR_TOKEN_INVALID: 'cardProcessorPublicToken',
  ENTITY_NOT_FOUND: 'externalId',
};

const failure = (category: ImportErrorCategory, requestId: string) =>
  new ApiError(ERROR_OF_CATEGORY[category], `${category}: ${IMPORT_ERROR_CATEGORIES[category].message}`, { parameter: PARAMETER_OF_CATEGORY[category] ?? '', extra: { requestId, category } });

/** What identifies a request for the Idempotency-Key rule: the fields of the body, in a fixed order. */
const requestHash = (b: { externalId: string; shareToken: string; cardProcessorPublicToken?: string | undefined }) =>
  createHash('sha256').update(JSON.stringify([b.externalId, b.shareToken, b.cardProcessorPublicToken ?? null])).digest('hex');

export function syncImportRoutes(deps: { db: Db; temporal: Client; config: Config }) {
  const { db, temporal, config } = deps;
  const start = createStarters(temporal, config);

  /** Runs (or joins) the request's workflow and answers from the record it leaves. */
  async function answer(requestId: string) {
    let result: SyncImportResult;
    try {
      result = await (await start.syncImport(requestId)).result();
    } catch (err) {
      if (!(err instanceof WorkflowFailedError)) throw err;
      if (err.cause instanceof TimeoutFailure) throw failure('PROVIDER_UNAVAILABLE', requestId);
      throw new ApiError('syncProviderRefused', 'The identity provider refused our request; contact support and quote the requestId.', { extra: { requestId } });
    }
    if (result.outcome === 'failed') throw failure(result.category, requestId);
    return reply((await findSyncImport(db, requestId))!);
  }

  function reply(rec: SyncImport) {
    if (rec.status === 'failed') throw failure(rec.errorCategory ?? 'PROVIDER_REJECTED_REQUEST', rec.requestId);
    return { status: 200, body: { externalId: rec.externalId, status: 'completed', requestId: rec.requestId, entityId: rec.entityId } };
  }

  /** The same key again: the stored answer, or the running request's once it ends. */
  function replay(earlier: SyncImport, hash: string) {
    if (earlier.requestSha256 !== hash) {
      throw new ApiError('syncIdempotencyKeyReused', `This Idempotency-Key was first used for another request (${earlier.requestId}); use a new key for a new request.`, {
        parameter: 'Idempotency-Key',
        extra: { requestId: earlier.requestId },
      });
    }
    return earlier.status === 'pending' ? answer(earlier.requestId) : reply(earlier);
  }

  return [
    route({
      method: 'post',
      path: '/entity/kyc/import/sync',
      operationId: 'syncImport',
      summary: 'Share and onboard one applicant now',
      description: `Answers when the shared applicant is onboarded; the APPROVED or REJECTED decision arrives by webhook. At most ${config.http.syncImportRateLimitPerSecond} requests per second per business. With an Idempotency-Key, a retried request gets the first one's answer and never shares the token twice.`,
      tag: 'Token sharing',
      body: syncImportBody,
      docHeaders: [
        {
          name: 'Idempotency-Key',
          required: false,
          description: `Optional, unique per request (1-${MAX_IDEMPOTENCY_KEY} characters): the same key and body answer the same; the same key with another body is refused (422)`,
          schema: IDEMPOTENCY_KEY_SCHEMA,
        },
      ],
      rateLimit: { bucket: 'sync-import', perSecond: config.http.syncImportRateLimitPerSecond },
      responses: { 200: { description: 'Onboarded', schema: syncImportResponse } },
      errors: [
        'invalidRequest',
        'malformedJson',
        'unsupportedMediaType',
        'entityNotFound',
        'syncTokenInvalid',
        'syncTokenUsed',
        'syncDataRefused',
        'syncCardProcessorTokenTaken',
        'syncProviderRefused',
        'syncProviderUnavailable',
        'syncIdempotencyKeyReused',
      ],
      async handler({ body, business, ctx }) {
        const rawKey = ctx.get('idempotency-key');
        const key = rawKey === '' ? null : rawKey;
        const keyProblem = key === null ? null : idempotencyKeyProblem(key);
        if (keyProblem) throw new ApiError('invalidRequest', `Idempotency-Key: ${keyProblem}`, { parameter: 'Idempotency-Key' });
        const hash = requestHash(body);
        if (key !== null) {
          const earlier = await findSyncImportByKey(db, business.id, key);
          if (earlier) return replay(earlier, hash);
        }
        if (business.binSponsored && !body.cardProcessorPublicToken) {
          throw new ApiError('invalidRequest', 'cardProcessorPublicToken: is required for BIN-sponsored programs', { parameter: 'cardProcessorPublicToken' });
        }
        const entityId = await resolveEntityRef(db, business.id, body.externalId);
        if (!entityId) throw new ApiError('entityNotFound', `No entity with externalId "${body.externalId}" in your business; create it with POST /entity first.`, { parameter: 'externalId' });
        const requestId = randomUUID();
        try {
          await createSyncImport(db, {
            requestId,
            businessId: business.id,
            externalId: body.externalId,
            shareToken: body.shareToken,
            cardProcessorPublicToken: body.cardProcessorPublicToken ?? null,
            idempotencyKey: key,
            requestSha256: hash,
          });
        } catch (err) {
          // the same key arrived twice at once: the second joins the first
          if (key !== null && isUniqueViolation(err, 'sync_imports_idempotency_key')) return replay((await findSyncImportByKey(db, business.id, key))!, hash);
          throw err;
        }
        return answer(requestId);
      },
    }),
  ];
}
