// The hosted-SDK path (interface 1.2, 4.4): an SDK token for a person, and the provider's review
// callbacks that end in a decision by webhook. Both go through the person's verification workflow
// (workflows/person-verification.ts); the API never calls the provider itself.
import { z } from 'zod';
import { entityOfSdkUserId, type SdkToken } from '../contract/person-verification.ts';
import { sha256Hex } from '../domain/digests.ts';
import { CARD_ISSUANCE_EVENT } from '../domain/events.ts';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import { personRefProblem } from '../domain/person-ref.ts';
import { webhookPrerequisite } from '../domain/webhook-prerequisite.ts';
import type { RawHeaders } from '../runtime/provider.ts';
import { actAs } from '../store/audit-actor.ts';
import { recordAuditAlone } from '../store/audit-log.ts';
import { businessOfEntity, entityType, isMemberOf } from '../store/entities.ts';
import { recordVerificationStage } from '../onboarding/lifecycle-events.ts';
import { lastDecisionEventOf } from '../store/events.ts';
import { subscribedTypes } from '../store/subscriptions.ts';
import type { Caller, UseCaseContext } from './context.ts';

/**
 * The person an endpoint names: the INDIVIDUAL entity itself, or with `memberId` a declared member
 * of the BUSINESS entity. `requireWebhook` (the verification paths) also enforces the webhook
 * prerequisite (interface 1.4, domain/webhook-prerequisite.ts): their decision is delivered only by webhook. `takesMemberId` false
 * (the canonical KYC submission, which has no memberId) points a BUSINESS at the person's own entity.
 */
export async function personNamed(
  { db }: UseCaseContext,
  caller: Caller,
  entityId: string,
  memberId: string | undefined,
  { requireWebhook, takesMemberId = true }: { requireWebhook: boolean; takesMemberId?: boolean },
): Promise<Outcome<string>> {
  const type = await entityType(db, caller.id, entityId);
  if (!type)
    return refuse('entityNotFound', `Entity ${entityId} not found in your business; check the id (GET /entity lists your entities).`, {
      parameter: 'entityId',
    });
  if (requireWebhook) {
    const unmet = webhookPrerequisite('person', await subscribedTypes(db, caller.id));
    if (unmet) return unmet;
  }
  const isMember = memberId !== undefined && type === 'BUSINESS' && (await isMemberOf(db, entityId, memberId));
  const problem = personRefProblem(entityId, type, memberId, isMember, takesMemberId);
  if (problem) return refuse(problem.error, problem.message, { parameter: problem.parameter });
  return done(memberId ?? entityId);
}

/** POST /entity/{entityId}/kyc's answer: the token the person's workflow minted (its SdkToken). */
export const sdkTokenSchema = z.object({ provider: z.string(), sdkToken: z.string() });

/** POST /entity/{entityId}/kyc: an SDK token bound to the person, for the provider's hosted SDK. */
export async function issueSdkToken(
  context: UseCaseContext,
  caller: Caller,
  entityId: string,
  memberId: string | undefined,
): Promise<Outcome<z.input<typeof sdkTokenSchema>>> {
  const person = await personNamed(context, caller, entityId, memberId, { requireWebhook: true });
  if (!person.ok) return person;
  const minted = await context.start.sdkToken({ businessId: caller.id, entityId: person.value });
  if (!minted.ok) {
    context.log.warn({ err: minted.error, entityId: person.value }, 'SDK token not minted');
    if (minted.failure.nonRetryable) return refuse('providerRefused', 'The identity provider refused to mint an SDK token; contact support.');
    return refuse('providerUnavailable', 'The identity provider did not answer; retry in a moment.');
  }
  const token = minted.value;
  // no row of ours holds the token (the provider does): the entry is the record that it was issued, written before it is answered
  await recordAuditAlone(context.db, {
    businessId: caller.id,
    action: 'sdk_token.issued',
    entityId: person.value,
    subject: { type: 'sdk_token', id: sha256Hex(token.sdkToken) },
    details: { provider: token.provider, tokenSha256: sha256Hex(token.sdkToken), memberOf: memberId === undefined ? null : entityId },
  });
  // the person is now awaited (verification_status_change WAITING_FOR_PERSON): once per round, a
  // round ending with the person's next decision
  // round; the token is minted by now, so a failure here is logged, not answered (the stage is news, not a record)
  try {
    const round = (await lastDecisionEventOf(context.db, person.value, CARD_ISSUANCE_EVENT.eventType)) ?? 'first';
    await recordVerificationStage(context.db, {
      businessId: caller.id,
      entityId: person.value,
      ref: { path: 'hosted-sdk' },
      stage: 'WAITING_FOR_PERSON',
      key: `hosted-sdk:${person.value}:after:${round}`,
      now: new Date(),
    });
  } catch (err) {
    context.log.warn({ err, entityId: person.value }, 'the WAITING_FOR_PERSON stage was not recorded; the SDK token is answered');
  }
  return done(token);
}

/** What a provider callback led to (the provider only needs a 2xx; this is for logs and tests). */
export const callbackReceiptSchema = z.object({ received: z.literal(true), forwarded: z.boolean() });
export type CallbackReceipt = z.input<typeof callbackReceiptSchema>;

/**
 * POST /provider-webhooks/sumsub: a review callback, checked against its signature over the raw
 * body, handed to the person's workflow by applicant id. Callbacks about applicants that are not
 * SDK applicants of ours (token-sharing copies, other types) are acknowledged and ignored. The one
 * acting is the provider (its callback carries no API key); a callback forwarded about a person of a
 * business is an entry of that business (provider_callback.received), the decision its workflow's.
 */
export function receiveProviderCallback(
  context: UseCaseContext,
  raw: Buffer,
  headers: RawHeaders,
  requestId: string | null,
): Promise<Outcome<CallbackReceipt>> {
  return actAs({ type: 'provider_callback', id: PROVIDER_CALLBACK_NAME }, requestId, () => receiveCallback(context, raw, headers));
}

/** The provider whose callbacks the route takes (its path names it). */
const PROVIDER_CALLBACK_NAME = 'sumsub';

async function receiveCallback(context: UseCaseContext, raw: Buffer, headers: RawHeaders): Promise<Outcome<CallbackReceipt>> {
  if (!context.verifyProviderCallback(raw, headers)) {
    return refuse('providerSignatureInvalid', 'The callback is not signed with our provider webhook secret (x-payload-digest).', {
      parameter: 'x-payload-digest',
    });
  }
  let body: { type?: unknown; applicantId?: unknown; externalUserId?: unknown };
  try {
    body = JSON.parse(raw.toString('utf8')) as typeof body;
  } catch {
    return refuse('malformedJson', 'The callback body is not valid JSON.');
  }
  const entityId = typeof body.externalUserId === 'string' ? entityOfSdkUserId(body.externalUserId) : null;
  if (body.type !== 'applicantReviewed' || typeof body.applicantId !== 'string' || !entityId) return done({ received: true, forwarded: false });
  const businessId = await businessOfEntity(context.db, entityId);
  if (!businessId) return done({ received: true, forwarded: false }); // the person was deleted
  await recordAuditAlone(context.db, {
    businessId,
    action: 'provider_callback.received',
    entityId,
    subject: { type: 'applicant', id: body.applicantId },
    details: { type: body.type, applicantId: body.applicantId },
  });
  await context.start.applicantReviewed({ businessId, entityId }, body.applicantId);
  return done({ received: true, forwarded: true });
}
