// Universal KYB (interface 2.9, 4.7): the business profile a client saves with POST/PATCH /ukyb,
// the documents a business and its owners upload, and the decision on a submission. Countries and
// dates follow the same rules as universal KYC (calendar.ts); a refusal names the field's path.
import { z } from 'zod';
import { addYears, dayOf, isCalendarDate, isCountryAlpha3 } from './calendar.ts';
import { MEMBER_ROLES } from './members.ts';
import { decisionData } from './events.ts';
import type { Decision } from './reliance.ts';
import { CONTROL_CHARACTER_RULE, NO_CONTROL_CHARACTERS } from './share-fields.ts';

/** The business documents of universal KYB, by requirement slug (published in the feature catalog). */
export const KYB_REQUIRED_DOCUMENT_SLUGS = ['ukyb-certificate-of-incorporation', 'ukyb-proof-of-address', 'ukyb-register-of-shareholders'] as const;
export const KYB_OPTIONAL_DOCUMENT_SLUGS = ['ukyb-articles-of-association'] as const;
export const KYB_DOCUMENT_SLUGS = [...KYB_REQUIRED_DOCUMENT_SLUGS, ...KYB_OPTIONAL_DOCUMENT_SLUGS] as const;
export type KybDocumentSlug = (typeof KYB_DOCUMENT_SLUGS)[number];

/** The kinds of an owner's documents; the identity documents among them make an owner complete. */
export const OWNER_DOCUMENT_TYPES = ['PASSPORT', 'ID_CARD', 'DRIVERS_LICENCE', 'RESIDENCE_PERMIT', 'UTILITY_BILL', 'UTILITY_BILL2'] as const;
export type OwnerDocumentType = (typeof OWNER_DOCUMENT_TYPES)[number];
export const OWNER_IDENTITY_DOCUMENT_TYPES: readonly OwnerDocumentType[] = ['PASSPORT', 'ID_CARD', 'DRIVERS_LICENCE', 'RESIDENCE_PERMIT'];
/** The slug an owner's document is filed under (on the owner's own entity). */
export const OWNER_DOCUMENT_SLUG = 'ukyb-owner-document';
/** The requirement the profile's business part is recorded as on the entity. */
export const KYB_PROFILE_SLUG = 'ukyb-business-profile';

export const MAX_OWNERS = 25;
/** How long a submission waits for its owners' KYC decisions by default (KYB_SUBMISSION_DEADLINE_SECONDS). */
export const DEFAULT_KYB_DEADLINE_SECONDS = 30 * 86_400;

/** DRAFT: saved and not submitted since its last change; IN_REVIEW: a submission waits for its owners; then the decision. */
export const KYB_STATUSES = ['DRAFT', 'IN_REVIEW', 'APPROVED', 'REJECTED'] as const;
export type KybStatus = (typeof KYB_STATUSES)[number];

/**
 * What a read tells of a profile: its stage, never its outcome (interface 1.4: the decision is
 * carried by the webhook alone, kyb_status_change). DRAFT, IN_REVIEW (submitted), DECIDED.
 */
export const KYB_STAGES = ['DRAFT', 'IN_REVIEW', 'DECIDED'] as const;
export type KybStage = (typeof KYB_STAGES)[number];
export const kybStageOf = (status: KybStatus): KybStage => (status === 'APPROVED' || status === 'REJECTED' ? 'DECIDED' : status);

/** A submission's stage as a read may say it (verification_status_change's words): never its outcome (1.4). */
export const KYB_SUBMISSION_STAGES = ['IN_REVIEW', 'DECIDED', 'SUPERSEDED'] as const;
export type KybSubmissionStage = (typeof KYB_SUBMISSION_STAGES)[number];
/**
 * A stored submission status as its stage: `expired` (decided at its deadline, always REJECTED) and
 * `decided` alike are DECIDED, so the read tells no outcome (issue 38, item 9); `waiting` (for its
 * owners or its documents) is IN_REVIEW, as the profile's status says.
 */
export function kybSubmissionStageOf(status: string): KybSubmissionStage {
  if (status === 'decided' || status === 'expired') return 'DECIDED';
  if (status === 'superseded') return 'SUPERSEDED';
  return 'IN_REVIEW';
}

const text = (min: number, max: number) =>
  z
    .string()
    .regex(NO_CONTROL_CHARACTERS, CONTROL_CHARACTER_RULE)
    .refine((s) => s.trim().length >= min, min === 1 ? 'must not be empty or whitespace only' : `at least ${min} characters`)
    .refine((s) => s.length <= max, `at most ${max} characters`);
const country = z.string().refine(isCountryAlpha3, 'must be an ISO 3166-1 alpha-3 country code (GBR, DEU, …)');
const day = z.string().refine(isCalendarDate, 'must be a calendar date, YYYY-MM-DD');
/** Dates are judged on the day of the request (refinements run at each parse). */
const today = () => dayOf(new Date());

const address = z
  .object({
    country,
    postCode: text(1, 20),
    street: text(1, 200),
    town: text(1, 100).optional(),
    state: text(1, 100).optional(),
    subStreet: text(1, 200).optional(),
    buildingNumber: text(1, 20).optional(),
    buildingName: text(1, 100).optional(),
    flatNumber: text(1, 20).optional(),
  })
  .strict();

/** The business part of a profile (dates must not be in the future). */
export const kybBusiness = z
  .object({
    legalName: text(1, 255),
    tradingName: text(1, 255).optional(),
    registrationNumber: text(1, 100),
    country,
    address,
    incorporationDate: day.refine((d) => d <= today(), 'must not be in the future').optional(),
    taxNumber: text(1, 100).optional(),
    website: z
      .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
      .max(2048, 'at most 2048 characters')
      .optional(),
    email: z.email({ message: 'must be an email address' }).max(254, 'at most 254 characters').optional(),
    phone: z
      .string()
      .regex(/^\+[1-9]\d{6,14}$/, 'must be an E.164 phone number (+ and 7 to 15 digits)')
      .optional(),
  })
  .strict();
export type KybBusiness = z.infer<typeof kybBusiness>;

/** One declared owner (an adult). */
export const kybOwner = z
  .object({
    externalId: text(1, 255).meta({ description: 'Your reference for the person: reuses your INDIVIDUAL entity with this externalId, or creates one' }),
    firstName: text(1, 100),
    lastName: text(1, 100),
    dob: day.superRefine((dob, ctx) => {
      if (dob > addYears(today(), -18)) ctx.addIssue({ code: 'custom', message: 'the owner must be at least 18 years old' });
      else if (dob <= addYears(today(), -151)) ctx.addIssue({ code: 'custom', message: 'the owner must be at most 150 years old' });
    }),
    nationality: country,
    ownershipPercentage: z.number().gt(0, 'must be more than 0').max(100, 'must be at most 100'),
    roles: z
      .array(z.enum(MEMBER_ROLES, { message: `must be one of ${MEMBER_ROLES.join(', ')}` }))
      .min(1, 'must list at least one role (or leave roles out for UBO)')
      .refine((r) => new Set(r).size === r.length, 'lists a role twice; list each role once')
      .optional()
      .meta({ description: `Default [UBO]; ${MEMBER_ROLES.join(', ')}` }),
  })
  .strict();
export type KybOwner = z.infer<typeof kybOwner>;

/** The owners list: distinct externalIds, at most MAX_OWNERS, ownership adding up to at most 100 %. */
export const kybOwners = z
  .array(kybOwner)
  .max(MAX_OWNERS, `must list at most ${MAX_OWNERS} owners`)
  .superRefine((owners, ctx) => {
    const seen = new Set<string>();
    for (const [i, o] of owners.entries()) {
      if (seen.has(o.externalId))
        ctx.addIssue({ code: 'custom', path: [i, 'externalId'], message: 'the same externalId is listed twice; list each owner once' });
      seen.add(o.externalId);
    }
    const total = owners.reduce((s, o) => s + o.ownershipPercentage, 0);
    if (total > 100 + 1e-9)
      ctx.addIssue({
        code: 'custom',
        message: `ownershipPercentage adds up to ${total}, more than 100; correct the owners' shares so they add up to 100 or less`,
      });
  });

const entityId = z.uuid({ message: 'entityId must be a UUID' }).meta({ description: 'A BUSINESS entity of yours' });
/** POST /ukyb: the whole profile. */
export const kybCreate = z.object({ entityId, business: kybBusiness, ubos: kybOwners }).strict();
/** PATCH /ukyb: entityId and the parts to change; `business` fields replace (the address merges field by field), `ubos` replaces the declared set. */
export const kybPatch = z
  .object({
    entityId,
    business: kybBusiness.partial().extend({ address: address.partial().optional() }).strict().optional(),
    ubos: kybOwners.optional(),
  })
  .strict();
export type KybCreate = z.infer<typeof kybCreate>;
export type KybPatch = z.infer<typeof kybPatch>;
/** POST /ukyb/submit. */
export const kybSubmit = z.object({ entityId }).strict();

/** The business part after a PATCH: fields replace, the address merges field by field. */
export function mergeBusiness(current: KybBusiness, change: NonNullable<KybPatch['business']>): unknown {
  const { address: addressChange, ...rest } = change;
  return { ...current, ...rest, address: { ...current.address, ...(addressChange ?? {}) } };
}

/** An owner's role as kept on the membership (the first declared; UBO by default). */
export const primaryRole = (o: KybOwner) => o.roles?.[0] ?? 'UBO';

/** An owner's latest KYC decision (any individual path), or none yet. */
export type OwnerDecision = { entityId: string; externalId: string | null; decision: Decision | null };

export type KybDecision = Decision & { owners: { entityId: string; externalId: string | null; status: 'APPROVED' | 'REJECTED' | 'PENDING' }[] };

/**
 * The decision on a submission once every owner is decided, or null while one is not (the
 * submission keeps waiting). An owner REJECTED → the business REJECTED with the owners' labels
 * (RETRY when every rejected owner may retry); every owner APPROVED and the documents complete →
 * APPROVED. `documentsMissing` is the manifest's completeness check, read again at the decision.
 */
export function decideKyb(owners: readonly OwnerDecision[], documentsMissing: readonly string[]): KybDecision | null {
  if (owners.some((o) => o.decision === null)) return null;
  return settleKyb(owners, documentsMissing);
}

/** The decision at the deadline: owners still without a decision make the business REJECTED (RETRY). */
export function decideKybAtDeadline(owners: readonly OwnerDecision[], documentsMissing: readonly string[], deadlineSeconds: number): KybDecision {
  return settleKyb(owners, documentsMissing, deadlineSeconds);
}

function settleKyb(owners: readonly OwnerDecision[], documentsMissing: readonly string[], deadlineSeconds?: number): KybDecision {
  const statuses = owners.map((o) => ({ entityId: o.entityId, externalId: o.externalId, status: o.decision?.status ?? ('PENDING' as const) }));
  const labels: string[] = [];
  const comments: string[] = [];
  let final = false;
  for (const o of owners) {
    if (o.decision?.status !== 'REJECTED') continue;
    labels.push(...o.decision.rejectLabels.filter((l) => !labels.includes(l)));
    comments.push(`owner ${o.externalId ?? o.entityId} was not verified (${o.decision.moderationComment})`);
    if (o.decision.reviewRejectType === 'FINAL') final = true;
  }
  const rejectedOwners = owners.filter((o) => o.decision?.status === 'REJECTED').length;
  const undecided = owners.filter((o) => o.decision === null);
  if (rejectedOwners > 0) labels.unshift('UBO_REJECTED');
  if (undecided.length > 0) {
    labels.push('UBO_VERIFICATION_INCOMPLETE');
    const within =
      deadlineSeconds === undefined
        ? ''
        : ` within ${Number.isInteger(deadlineSeconds / 86_400) ? `${deadlineSeconds / 86_400} days` : `${deadlineSeconds} seconds`}`;
    comments.push(
      `${undecided.length} owner${undecided.length === 1 ? ' was' : 's were'} not verified` +
        `${within} (${undecided.map((o) => o.externalId ?? o.entityId).join(', ')})`,
    );
  }
  if (documentsMissing.length > 0) {
    labels.push('DOCUMENTS_INCOMPLETE');
    comments.push(`documents are missing: ${documentsMissing.join(', ')}`);
  }
  if (labels.length === 0) return { status: 'APPROVED', owners: statuses };
  return {
    status: 'REJECTED',
    rejectLabels: labels,
    reviewRejectType: final ? 'FINAL' : 'RETRY',
    moderationComment: `The business could not be verified: ${comments.join('; ')}.`,
    owners: statuses,
  };
}

export const KYB_EVENT = { eventName: 'kyb_status_updated', eventType: 'kyb_status_change' } as const;

const KYB_MESSAGES: Record<Decision['status'], string> = {
  APPROVED: 'The business was verified: its documents are complete and every declared owner is verified. It may proceed to the business card program.',
  REJECTED: 'The business could not be verified.',
};

/** The kyb_status_change event (shaped like 2.10): data.entityId is the business entity; data.ubos each owner's status. */
export function kybEvent(input: { eventId: string; entityId: string; submissionId: string; timestamp: string; decision: KybDecision }) {
  const d = input.decision;
  const data = decisionData(
    {
      eventId: input.eventId,
      message: KYB_MESSAGES[d.status],
      entityId: input.entityId,
      submissionId: input.submissionId,
      timestamp: input.timestamp,
      status: d.status,
      ubos: d.owners,
    },
    d,
  );
  return { ...KYB_EVENT, data };
}
