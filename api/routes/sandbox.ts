// The sandbox control (DESIGN.md): registered only when VOUCH_ENVIRONMENT=sandbox, so it answers
// 404 anywhere else.
import { entityIdParams } from '../../domain/entity.ts';
import { memberIdQuery } from '../../domain/members.ts';
import { sandboxReviewBody } from '../../domain/sandbox.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import { completeSandboxKyc, sandboxReviewAnswerSchema } from '../../usecases/sandbox.ts';
import { route } from '../route.ts';

export function sandboxRoutes(context: UseCaseContext) {
  if (!context.settings.sandbox) return [];
  return [
    route({
      method: 'post',
      path: '/sandbox/entity/:entityId/kyc/complete',
      operationId: 'sandboxCompleteKyc',
      summary: "Sandbox only: play the person and the provider's reviewer, so the real decision path runs",
      description:
        "Creates the person's applicant at the provider's sandbox as the hosted SDK would (a " +
        'complete adult with an identity document unless person changes it; an existing applicant ' +
        "is reused), then finishes its review with reviewAnswer. The provider's signed callback, " +
        "the person's verification workflow and the account_status_change webhook follow as in " +
        'production. Absent outside the sandbox environment (404).',
      tag: 'Verification',
      params: entityIdParams,
      query: memberIdQuery,
      body: sandboxReviewBody,
      responses: { 202: { description: 'The review is finished at the provider; the decision follows by webhook', schema: sandboxReviewAnswerSchema } },
      errors: [
        'invalidRequest',
        'malformedJson',
        'entityNotFound',
        'webhookRegistrationRequired',
        'personRequired',
        'memberNotFound',
        'sandboxApplicantExists',
        'providerUnavailable',
        'providerRefused',
      ],
      handler: ({ params, query, body, business }) => completeSandboxKyc(context, business, params.entityId, query.memberId, body),
    }),
  ];
}
