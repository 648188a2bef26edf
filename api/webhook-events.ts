// The webhook events as the API description's `webhooks` section (OpenAPI 3.1): one entry per
// subscribable type, with the body every delivery of it carries. The names and stage values come
// from the domain modules that build the events, so the description cannot drift from them.
import { z } from 'zod';
import { CARD_ISSUANCE_EVENT, TEST_EVENT } from '../domain/events.ts';
import { KYB_EVENT } from '../domain/kyb.ts';
import {
  FEATURE_ACCESS_EVENT,
  NEW_FEATURE_EVENT,
  REMINDER_EVENT,
  REMINDER_SUBJECTS,
  VERIFICATION_PATHS,
  VERIFICATION_STAGES,
  VERIFICATION_STATUS_EVENT,
} from '../domain/lifecycle-events.ts';

const base = {
  eventId: z.uuid().meta({ description: 'Deduplicate on it: the same on every retry and redelivery' }),
  message: z.string(),
  timestamp: z.iso.datetime(),
};
const entityId = z.uuid().meta({ description: 'The entity the event is about' });
const rejected = {
  moderationComment: z.string().optional().meta({ description: 'Only when REJECTED' }),
  rejectLabels: z.array(z.string()).optional().meta({ description: 'Only when REJECTED' }),
  reviewRejectType: z.enum(['RETRY', 'FINAL']).optional().meta({ description: 'Only when REJECTED' }),
};
const feature = z.object({ id: z.uuid(), slug: z.string(), name: z.string() });

const envelope = (event: { eventName: string; eventType: string }, data: z.ZodType) =>
  z.object({
    eventName: z.literal(event.eventName),
    eventType: z.literal(event.eventType),
    businessId: z.uuid().meta({ description: 'The business whose event it is (covered by both signatures)' }),
    data,
    sequence: z
      .number()
      .int()
      .optional()
      .meta({
        description:
          "The event's place in the business's events feed (GET /events): only grows, in the order events became visible. " +
          'Absent from events recorded before it existed (their bodies are sent as they were) and from those a process of ' +
          'an earlier release records during a rolling deploy',
      }),
  });

const EVENTS = [
  {
    event: CARD_ISSUANCE_EVENT,
    summary: "A person's decision (interface 2.10)",
    description:
      'Sent when a decision on a person is made, by any path (token sharing, hosted SDK, ' +
      'universal KYC). The only place the outcome is told. Satisfies the webhook prerequisite of ' +
      'the person paths.',
    data: z.object({ ...base, entityId, status: z.enum(['APPROVED', 'REJECTED']), ...rejected }),
  },
  {
    event: KYB_EVENT,
    summary: "A business's decision",
    description:
      "Sent when a universal KYB submission is decided; ubos lists each declared owner's status. Satisfies the webhook prerequisite of universal KYB.",
    data: z.object({
      ...base,
      entityId,
      submissionId: z.uuid(),
      status: z.enum(['APPROVED', 'REJECTED']),
      ubos: z.array(z.object({ entityId: z.uuid(), externalId: z.string().nullable(), status: z.enum(['APPROVED', 'REJECTED', 'PENDING']) })),
      ...rejected,
    }),
  },
  {
    event: VERIFICATION_STATUS_EVENT,
    summary: 'A verification moved a stage',
    description:
      'Token sharing: STARTED (the import request is sent), then DECIDED, or FAILED (the record ' +
      'failed without a decision; a retried row may still be DECIDED later). Hosted SDK: ' +
      'WAITING_FOR_PERSON (an SDK token was issued; once per round until the next decision), ' +
      'DECIDED. Universal KYC: WAITING_FOR_DOCUMENTS, IN_REVIEW (data and identity document are ' +
      'there), DECIDED. Universal KYB: WAITING_FOR_PERSON (declared owners not all decided), ' +
      'IN_REVIEW, then DECIDED or SUPERSEDED (a profile change replaced the submission). Never ' +
      'the outcome: that is in account_status_change or kyb_status_change; there is no ' +
      'data.status, so dispatch on eventType first. Does not satisfy the webhook prerequisite.',
    data: z.object({
      ...base,
      entityId,
      verificationStatus: z.enum(VERIFICATION_STAGES),
      verificationPath: z.enum(VERIFICATION_PATHS),
      verificationId: z
        .uuid()
        .optional()
        .meta({ description: 'The sync requestId, the batchId (with rowNumber), or the submissionId; absent for the hosted SDK' }),
      rowNumber: z.number().int().optional().meta({ description: "A batch row's number" }),
    }),
  },
  {
    event: FEATURE_ACCESS_EVENT,
    summary: "An entity's enabled features changed",
    description:
      'Sent when a decision turns a feature on (ENABLED) or off (REMOVED); a decision that leaves' +
      ' the features as they were sends none. Does not satisfy the webhook prerequisite.',
    data: z.object({ ...base, entityId, feature, access: z.enum(['ENABLED', 'REMOVED']) }),
  },
  {
    event: REMINDER_EVENT,
    summary: 'Something is still to do before a deadline',
    description:
      'Sent once per waiting submission when less than a day of its wait is left (less than half ' +
      'of it when the wait is shorter than two days): a universal KYC submission without its ' +
      'identity document (universal-kyc-document), a KYB submission whose declared owners are not' +
      ' all verified (kyb-owners; waitingFor lists their entity ids). Does not satisfy the ' +
      'webhook prerequisite.',
    data: z.object({
      ...base,
      entityId,
      reminderFor: z.enum(REMINDER_SUBJECTS),
      submissionId: z.uuid(),
      deadlineAt: z.iso.datetime(),
      waitingFor: z.array(z.string()),
    }),
  },
  {
    event: NEW_FEATURE_EVENT,
    summary: 'The feature catalog gained a feature',
    description:
      'Sent once to each business that existed when the feature was added (within a minute of the' +
      ' release). About no entity: data has no entityId. Does not satisfy the webhook ' +
      'prerequisite.',
    data: z.object({ ...base, feature: feature.extend({ description: z.string() }) }),
  },
];

/** Not subscribable: sent on request to one subscription (POST /notification/{notificationId}/test). */
const TEST = {
  event: TEST_EVENT,
  summary: 'A test event, sent on request',
  description:
    'Sent by POST /notification/{notificationId}/test to that subscription alone, whatever types it takes: check that your ' +
    "receiver gets and verifies deliveries. It decides nothing; its delivery counts toward the subscription's health like any other. " +
    'It is in the events feed like every event.',
  data: z.object({ ...base, subscriptionId: z.uuid() }),
};
const DOCUMENTED = [...EVENTS, TEST];

/** The `webhooks` section: keyed by event type. */
export function webhookEventsDoc(toSchema: (schema: z.ZodType) => Record<string, unknown>) {
  return Object.fromEntries(
    DOCUMENTED.map(({ event, summary, description, data }) => [
      event.eventType,
      {
        post: {
          summary,
          description: `${description} Signed like every delivery (vouch-signature, webhook-signature); answer 2xx within 5 seconds.`,
          requestBody: { required: true, content: { 'application/json': { schema: toSchema(envelope(event, data)) } } },
          responses: { 200: { description: 'Received (any 2xx)' } },
        },
      },
    ]),
  );
}

/** The documented body of an event type's deliveries (tests check what is delivered against it). */
export function eventBodySchema(eventType: string): z.ZodType | undefined {
  const e = DOCUMENTED.find((x) => x.event.eventType === eventType);
  return e && envelope(e.event, e.data);
}

/** The subscribable event types the description documents (a test keeps them equal to the subscribable types; `test` is documented beside them). */
export const DOCUMENTED_EVENT_TYPES = EVENTS.map((e) => e.event.eventType);
