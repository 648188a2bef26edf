// Synchronous token-sharing import (interface 2.5 and 4.1): one applicant, answered when it is
// onboarded (see usecases/sync-imports.ts for how it runs and how the Idempotency-Key works).
import { IDEMPOTENCY_KEY_SCHEMA, MAX_IDEMPOTENCY_KEY, syncImportBody, syncImportResponse } from '../../domain/token-sharing.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import { syncImport } from '../../usecases/sync-imports.ts';
import { route } from '../route.ts';

export function syncImportRoutes(context: UseCaseContext) {
  return [
    route({
      method: 'post',
      path: '/entity/kyc/import/sync',
      operationId: 'syncImport',
      summary: 'Share and onboard one applicant now',
      description:
        `Answers when the shared applicant is onboarded; the APPROVED or REJECTED decision arrives ` +
        `by webhook. At most ${context.settings.syncImportsPerSecond} requests per second per ` +
        `business. With an Idempotency-Key, a retried request gets the first one's answer and never` +
        ` shares the token twice.`,
      tag: 'Token sharing',
      body: syncImportBody,
      docHeaders: [
        {
          name: 'Idempotency-Key',
          required: false,
          description:
            `Optional, unique per request (1-${MAX_IDEMPOTENCY_KEY} characters): the same key and body ` +
            `answer the same; the same key with another body is refused (422)`,
          schema: IDEMPOTENCY_KEY_SCHEMA,
        },
      ],
      rateLimit: { bucket: 'sync-import', perSecond: context.settings.syncImportsPerSecond },
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
      handler: ({ body, business, ctx }) => syncImport(context, business, body, ctx.get('idempotency-key')),
    }),
  ];
}
