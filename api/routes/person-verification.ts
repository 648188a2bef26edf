// Hosted SDK (interface 1.2, 4.4): SDK tokens, and the provider's review callbacks.
import { entityIdParams } from '../../domain/entity.ts';
import { memberIdQuery } from '../../domain/members.ts';
import { SDK_TOKEN_TTL_SECONDS } from '../../domain/hosted-sdk.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import { callbackReceiptSchema, issueSdkToken, receiveProviderCallback, sdkTokenSchema } from '../../usecases/person-verification.ts';
import { readRawJsonBody } from '../middleware/validate.ts';
import { route } from '../route.ts';

const CALLBACK_BODY_LIMIT = 256 * 1024;

export function personVerificationRoutes(context: UseCaseContext) {
  return [
    route({
      method: 'post',
      path: '/entity/:entityId/kyc',
      operationId: 'createSdkToken',
      summary: "A token for the identity provider's hosted SDK, bound to the person",
      description:
        `The person is the INDIVIDUAL entity, or with memberId a declared member of the BUSINESS ` +
        `entity. Give the token to the provider SDK in your app; the decision arrives by webhook ` +
        `(account_status_change), so a subscription for it must exist. Each call mints a new token ` +
        `(valid ${SDK_TOKEN_TTL_SECONDS / 60} minutes).`,
      tag: 'Verification',
      params: entityIdParams,
      query: memberIdQuery,
      responses: { 200: { description: 'The token', schema: sdkTokenSchema } },
      errors: ['invalidRequest', 'entityNotFound', 'webhookRegistrationRequired', 'personRequired', 'memberNotFound', 'providerUnavailable', 'providerRefused'],
      handler: ({ params, query, business }) => issueSdkToken(context, business, params.entityId, query.memberId),
    }),
    route({
      method: 'post',
      path: '/provider-webhooks/sumsub',
      operationId: 'sumsubCallback',
      summary: "The identity provider's review callbacks (called by Sumsub, not by clients)",
      description:
        'Signed by the provider with x-payload-digest, an HMAC of the raw body with our webhook secret; anything else is refused and changes nothing.',
      tag: 'Operations',
      auth: false,
      docHeaders: [
        { name: 'x-payload-digest', required: true, description: 'Hex HMAC of the raw body', schema: { type: 'string', pattern: '^[0-9a-fA-F]{64,128}$' } },
        {
          name: 'x-payload-digest-alg',
          required: false,
          description: 'HMAC_SHA256_HEX (default), HMAC_SHA512_HEX or HMAC_SHA1_HEX',
          schema: { type: 'string', enum: ['HMAC_SHA1_HEX', 'HMAC_SHA256_HEX', 'HMAC_SHA512_HEX'] },
        },
      ],
      docBody: { contentType: 'application/json', schema: { type: 'object', description: "The provider's callback" } },
      responses: { 200: { description: 'Received', schema: callbackReceiptSchema } },
      errors: ['providerSignatureInvalid', 'malformedJson', 'unsupportedMediaType', 'bodyTooLarge', 'internal'],
      handler: async ({ ctx }) =>
        receiveProviderCallback(context, await readRawJsonBody(ctx, CALLBACK_BODY_LIMIT), ctx.req.headers, String(ctx.state.requestId ?? '') || null),
    }),
  ];
}
