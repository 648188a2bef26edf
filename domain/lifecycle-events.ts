// The events beside the decision (interface 6.1: the earlier release's subscribable types):
// verification_status_change (a verification moved a stage), feature_access_change (an entity's
// enabled features changed), reminder (something the client must still do before a deadline) and
// new_feature (the catalog gained a feature). Each is shaped like 2.10 — eventName, eventType,
// data.eventId, data.message, data.entityId (where there is an entity), data.timestamp — and none
// carries a decision's outcome: that stays in account_status_change and kyb_status_change, the
// only types that satisfy the webhook prerequisite (1.4).
import type { VerificationPath } from './events.ts';

export const VERIFICATION_STATUS_EVENT = { eventName: 'verification_status_updated', eventType: 'verification_status_change' } as const;
export const FEATURE_ACCESS_EVENT = { eventName: 'feature_access_updated', eventType: 'feature_access_change' } as const;
export const REMINDER_EVENT = { eventName: 'action_required_reminder', eventType: 'reminder' } as const;
export const NEW_FEATURE_EVENT = { eventName: 'feature_catalog_updated', eventType: 'new_feature' } as const;

/** Every path a verification can take: a person's three, and a business's. */
export const VERIFICATION_PATHS = ['token-sharing', 'hosted-sdk', 'universal-kyc', 'universal-kyb'] as const satisfies readonly (
  VerificationPath | 'universal-kyb'
)[];
export type AnyVerificationPath = (typeof VERIFICATION_PATHS)[number];

/**
 * The stages a verification passes through. Which a path reports:
 * token sharing STARTED, then DECIDED or FAILED (the record failed without a decision: its
 * category is in the batch's summary.errors or the sync answer); hosted SDK WAITING_FOR_PERSON,
 * DECIDED (the provider's review itself is not visible to us); universal KYC WAITING_FOR_DOCUMENTS,
 * IN_REVIEW, DECIDED; universal KYB WAITING_FOR_PERSON (declared owners not yet decided),
 * IN_REVIEW, then DECIDED or SUPERSEDED (a change to the profile replaced the submission).
 */
export const VERIFICATION_STAGES = ['STARTED', 'WAITING_FOR_PERSON', 'WAITING_FOR_DOCUMENTS', 'IN_REVIEW', 'DECIDED', 'FAILED', 'SUPERSEDED'] as const;
export type VerificationStage = (typeof VERIFICATION_STAGES)[number];

/** Which verification moved: its path, and the id the client holds for it where there is one. */
export type VerificationRef = {
  path: AnyVerificationPath;
  /** The sync requestId, the batchId, or the submissionId; absent for the hosted SDK (the provider's applicant is the person's). */
  verificationId?: string;
  /** A batch row's number (with the batchId). */
  rowNumber?: number;
};

const STAGE_MESSAGES: Record<VerificationStage, string> = {
  STARTED: 'The verification started.',
  WAITING_FOR_PERSON: 'The verification is waiting for a person: ',
  WAITING_FOR_DOCUMENTS: "The verification is waiting for the person's identity document: upload it (ukyc-id-document).",
  IN_REVIEW: 'Everything needed has arrived; the verification is being decided.',
  DECIDED: 'The verification was decided; the outcome is in its account_status_change (a person) or kyb_status_change (a business) event.',
  FAILED:
    'The verification ended without a decision: the shared record failed (its category and what' +
    " to do are in the batch's summary.errors or the sync import's answer).",
  SUPERSEDED: 'The submission was replaced by a change to the KYB profile; submit again (POST /ukyb/submit) for a decision.',
};

function stageMessage(ref: VerificationRef, stage: VerificationStage): string {
  if (stage !== 'WAITING_FOR_PERSON') return STAGE_MESSAGES[stage];
  return (
    STAGE_MESSAGES[stage] +
    (ref.path === 'hosted-sdk' ? 'the person completes the hosted SDK flow.' : 'every declared owner is to be decided (verified by any person path).')
  );
}

/** The source keys naming a submission's verification: its decision's event, and its stages'. */
export const ukycVerificationKey = (submissionId: string) => `universal-kyc:${submissionId}`;
export const kybVerificationKey = (submissionId: string) => `universal-kyb:${submissionId}`;

/** The fields 2.10 gives every event's data, in its order (new_feature names no entity). */
const common = (input: { eventId: string; entityId?: string; timestamp: string }, message: string) => ({
  eventId: input.eventId,
  message,
  ...(input.entityId !== undefined ? { entityId: input.entityId } : {}),
  timestamp: input.timestamp,
});

export function verificationStatusEvent(input: { eventId: string; entityId: string; timestamp: string; ref: VerificationRef; stage: VerificationStage }) {
  const { ref } = input;
  return {
    ...VERIFICATION_STATUS_EVENT,
    data: {
      ...common(input, stageMessage(ref, input.stage)),
      verificationStatus: input.stage,
      verificationPath: ref.path,
      ...(ref.verificationId !== undefined ? { verificationId: ref.verificationId } : {}),
      ...(ref.rowNumber !== undefined ? { rowNumber: ref.rowNumber } : {}),
    },
  };
}

export type FeatureRef = { id: string; slug: string; name: string };

export function featureAccessEvent(input: { eventId: string; entityId: string; timestamp: string; feature: FeatureRef; enabled: boolean }) {
  const { feature } = input;
  return {
    ...FEATURE_ACCESS_EVENT,
    data: {
      ...common(input, input.enabled ? `Feature ${feature.slug} was enabled for the entity.` : `Feature ${feature.slug} was removed from the entity.`),
      feature: { id: feature.id, slug: feature.slug, name: feature.name },
      access: input.enabled ? 'ENABLED' : 'REMOVED',
    },
  };
}

/** What a reminder is about: a universal KYC submission without its identity document, a KYB submission whose owners are not all verified. */
export const REMINDER_SUBJECTS = ['universal-kyc-document', 'kyb-owners'] as const;
export type ReminderSubject = (typeof REMINDER_SUBJECTS)[number];

const REMINDER_MESSAGES: Record<ReminderSubject, (deadlineAt: string) => string> = {
  'universal-kyc-document': (at) =>
    `The universal KYC submission still has no identity document: upload it (ukyc-id-document) before ${at}, or the submission is decided as incomplete.`,
  'kyb-owners': (at) =>
    `Declared owners of the business (waitingFor) have no decision yet: verify each (any person path) before ${at}, or the submission is decided as it stands.`,
};

export function reminderEvent(input: {
  eventId: string;
  entityId: string;
  timestamp: string;
  subject: ReminderSubject;
  submissionId: string;
  deadlineAt: string;
  waitingFor: string[];
}) {
  return {
    ...REMINDER_EVENT,
    data: {
      ...common(input, REMINDER_MESSAGES[input.subject](input.deadlineAt)),
      reminderFor: input.subject,
      submissionId: input.submissionId,
      deadlineAt: input.deadlineAt,
      waitingFor: input.waitingFor,
    },
  };
}

/**
 * When a waiting submission is reminded: once less than a day of its wait is left, or less than half
 * of it when the whole wait is shorter than two days (the store applies it, in its query).
 */
export const REMINDER_LEAD = { atMostMs: 24 * 3600_000, shareOfWait: 0.5 } as const;

/** A reminder's source key: one reminder per subject and submission. */
export const reminderKey = (subject: ReminderSubject, submissionId: string) => `reminder:${subject}:${submissionId}`;

export function newFeatureEvent(input: { eventId: string; timestamp: string; feature: FeatureRef & { description: string } }) {
  const { feature } = input;
  return {
    ...NEW_FEATURE_EVENT,
    data: {
      ...common(input, `The feature catalog gained ${feature.name} (${feature.slug}); see GET /feature/${feature.id}/requirement for what it requires.`),
      feature: { id: feature.id, slug: feature.slug, name: feature.name, description: feature.description },
    },
  };
}
