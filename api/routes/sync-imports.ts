// Synchronous token-sharing import (interface 2.5 and 4.1): one applicant, answered when it is
// onboarded. The work runs as a workflow on the sync task queue; the request waits for its result.
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { ApiError, type ErrorName } from '../../domain/errors.ts';
import { IMPORT_ERROR_CATEGORIES, type ImportErrorCategory } from '../../domain/import-errors.ts';
import { syncImportBody, syncImportResponse } from '../../domain/token-sharing.ts';
import type { Config } from '../../runtime/config.ts';
import type { Db } from '../../store/db.ts';
import { resolveEntityRef } from '../../store/entities.ts';
import { createSyncImport } from '../../store/sync-imports.ts';
import { syncWorkflowId, type SyncImportInput, type SyncImportResult } from '../../workflows/definitions.ts';
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

export function syncImportRoutes(deps: { db: Db; temporal: Client; config: Config }) {
  const { db, temporal, config } = deps;
  return [
    route({
      method: 'post',
      path: '/entity/kyc/import/sync',
      operationId: 'syncImport',
      summary: 'Share and onboard one applicant now',
      description: `Answers when the shared applicant is onboarded; the APPROVED or REJECTED decision arrives by webhook. At most ${config.http.syncImportRateLimitPerSecond} requests per second per business.`,
      tag: 'Token sharing',
      body: syncImportBody,
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
      ],
      async handler({ body, business }) {
        if (business.binSponsored && !body.cardProcessorPublicToken) {
          throw new ApiError('invalidRequest', 'cardProcessorPublicToken: is required for BIN-sponsored programs', { parameter: 'cardProcessorPublicToken' });
        }
        const entityId = await resolveEntityRef(db, business.id, body.externalId);
        if (!entityId) throw new ApiError('entityNotFound', `No entity with externalId "${body.externalId}" in your business; create it with POST /entity first.`, { parameter: 'externalId' });
        const requestId = randomUUID();
        await createSyncImport(db, { requestId, businessId: business.id, externalId: body.externalId, shareToken: body.shareToken, cardProcessorPublicToken: body.cardProcessorPublicToken ?? null });
        let result: SyncImportResult;
        try {
          const input: SyncImportInput = { requestId };
          result = await temporal.workflow.execute('syncImportWorkflow', {
            taskQueue: config.temporal.syncTaskQueue,
            workflowId: syncWorkflowId(requestId),
            args: [input],
            workflowExecutionTimeout: '2 minutes',
          });
        } catch (err) {
          if (err instanceof WorkflowFailedError) {
            throw new ApiError('syncProviderRefused', 'The identity provider refused our request; contact support and quote the requestId.', { extra: { requestId } });
          }
          throw err;
        }
        if (result.outcome === 'failed') {
          const category = result.category as ImportErrorCategory;
          throw new ApiError(ERROR_OF_CATEGORY[category], `${category}: ${IMPORT_ERROR_CATEGORIES[category].message}`, { parameter: PARAMETER_OF_CATEGORY[category] ?? '', extra: { requestId, category } });
        }
        return { status: 200, body: { externalId: body.externalId, status: 'completed', requestId, entityId } };
      },
    }),
  ];
}
