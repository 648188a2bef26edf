// Members of a BUSINESS entity beyond its declared owners (interface v1.1.0, multi-member feature
// assignments): people of the same business (for example the employees who hold cards of its
// business card program), declared many at once with a role, and catalog features assigned to many
// of them at once. A feature assigned to a member is enabled for the person while the person meets
// the feature's own part (its verification approved, by any path) and the business entity meets its
// part (its KYB approved). The rules here are pure; the store applies them in SQL.
import { z } from 'zod';
import { features, findRequirement, type Feature } from './feature-catalog.ts';
import type { FeatureRef } from './lifecycle-events.ts';
import { pageMetaSchema } from './pagination.ts';

export const BUSINESS_MEMBER_ROLES = ['EMPLOYEE', 'CONTRACTOR', 'DIRECTOR', 'REPRESENTATIVE', 'AUTHORISED_USER'] as const;
export type BusinessMemberRole = (typeof BUSINESS_MEMBER_ROLES)[number];

/** People per call: declaring members, assigning a feature. */
export const MAX_MEMBERS_PER_CALL = 500;

/** The first index whose id (case-insensitive) was already listed, or -1. */
export function firstRepeat(ids: readonly string[]): number {
  const seen = new Set<string>();
  for (const [i, id] of ids.entries()) {
    const k = id.toLowerCase();
    if (seen.has(k)) return i;
    seen.add(k);
  }
  return -1;
}

const uuid = (name: string) => z.uuid({ message: `${name} must be a UUID` });

export const declareMembersBody = z
  .object({
    members: z
      .array(
        z
          .object({
            entityId: uuid('entityId').meta({ description: 'An INDIVIDUAL entity of your business (create it first with POST /entity)' }),
            role: z.enum(BUSINESS_MEMBER_ROLES, { message: `role must be one of ${BUSINESS_MEMBER_ROLES.join(', ')}` }),
          })
          .strict(),
      )
      .min(1, 'members must list at least one person')
      .max(MAX_MEMBERS_PER_CALL, `members must list at most ${MAX_MEMBERS_PER_CALL} people per call`)
      .meta({ description: `People to declare (or re-declare under another role), each once, at most ${MAX_MEMBERS_PER_CALL} per call` }),
  })
  .strict();
export type DeclareMembers = z.infer<typeof declareMembersBody>;

export const assignFeatureBody = z
  .object({
    memberIds: z
      .array(uuid('memberId'))
      .min(1, 'memberIds must list at least one member')
      .max(MAX_MEMBERS_PER_CALL, `memberIds must list at most ${MAX_MEMBERS_PER_CALL} members per call`)
      .meta({
        uniqueItems: true,
        description: `Declared members (POST /entity/{entityId}/members) to assign the feature to, each once, at most ${MAX_MEMBERS_PER_CALL}`,
      }),
  })
  .strict();

export const memberParams = z.object({ entityId: uuid('entityId'), memberId: uuid('memberId') }).strict();
export const featureOfEntityParams = z.object({ entityId: uuid('entityId'), featureId: uuid('featureId') }).strict();
export const assignmentParams = z.object({ entityId: uuid('entityId'), featureId: uuid('featureId'), memberId: uuid('memberId') }).strict();

const memberSchema = z.object({
  memberId: z.uuid(),
  externalId: z.string(),
  role: z.enum(BUSINESS_MEMBER_ROLES),
  declaredAt: z.string(),
  updatedAt: z.string(),
});
export type BusinessMember = z.input<typeof memberSchema>;

export const declaredMembersSchema = z.object({
  businessEntityId: z.uuid(),
  /** How many of the listed people were newly declared or changed role (0 when the call repeats an earlier one). */
  changed: z.number().int(),
  items: z.array(memberSchema),
});
export const memberPageSchema = z.object({ items: z.array(memberSchema), meta: pageMetaSchema() });

// --- assignments -----------------------------------------------------------------------------

/**
 * Where the person's verification stands, never its outcome (interface 1.4: only the webhook carries
 * it): NONE (no decision, nothing open), IN_PROGRESS (a universal KYC submission is open), DECIDED
 * (a decision by any path: its account_status_change event is decisionEventId). An open submission
 * after an earlier decision is IN_PROGRESS.
 */
export const VERIFICATION_STANDINGS = ['NONE', 'IN_PROGRESS', 'DECIDED'] as const;
export type VerificationStanding = (typeof VERIFICATION_STANDINGS)[number];

export function verificationStanding(p: { open: boolean; decided: boolean }): VerificationStanding {
  return p.open ? 'IN_PROGRESS' : p.decided ? 'DECIDED' : 'NONE';
}

const featureRefSchema = z.object({ id: z.uuid(), slug: z.string(), name: z.string() });
const requirementRefSchema = z.object({ requirementId: z.uuid(), requirementSlug: z.string(), valueType: z.string() });

const assignmentSchema = z.object({
  memberId: z.uuid(),
  externalId: z.string(),
  role: z.enum(BUSINESS_MEMBER_ROLES),
  assignedAt: z.string(),
  enabled: z.boolean(),
  enabledAt: z.string().nullable(),
  verification: z.object({ status: z.enum(VERIFICATION_STANDINGS), decisionEventId: z.uuid().nullable() }),
  stillRequired: z
    .array(requirementRefSchema)
    .meta({ description: "The feature's REQUIRED requirements of the person with nothing submitted yet; empty once the person has a decision (any path)" }),
});
export type Assignment = z.input<typeof assignmentSchema>;

const assignmentHead = {
  businessEntityId: z.uuid(),
  feature: featureRefSchema,
  business: z
    .object({ requiredFeature: featureRefSchema, enabled: z.boolean() })
    .meta({ description: "The business entity's part: the feature it must have enabled (its KYB approved), and whether it has" }),
};
export const assignedSchema = z.object({ ...assignmentHead, assigned: z.number().int(), items: z.array(assignmentSchema) });
export const assignmentPageSchema = z.object({ ...assignmentHead, items: z.array(assignmentSchema), meta: pageMetaSchema() });
export type AssignmentHead = Omit<z.input<typeof assignedSchema>, 'assigned' | 'items'>;

/** An assignable feature with its two parts resolved. */
export type AssignableFeature = { feature: FeatureRef; personFeature: FeatureRef; businessFeature: FeatureRef; personRequires: RequirementRef[] };
export type RequirementRef = z.input<typeof requirementRefSchema>;

const ref = (f: Feature): FeatureRef => ({ id: f.id, slug: f.slug, name: f.name });

function resolve(f: Feature): AssignableFeature | null {
  if (!f.assignment) return null;
  const person = features.find((x) => x.slug === f.assignment!.personFeature);
  const business = features.find((x) => x.slug === f.assignment!.businessFeature);
  if (!person || !business) throw new Error(`catalog: assignable feature ${f.slug} names an unknown feature`);
  const personRequires = f.requirements.flatMap(({ requirementSlug, requirementLevel }) => {
    const r = findRequirement(requirementSlug);
    if (!r) throw new Error(`catalog: feature ${f.slug} names unknown requirement ${requirementSlug}`);
    return requirementLevel === 'REQUIRED' && r.associatedEntity === 'INDIVIDUAL'
      ? [{ requirementId: r.id, requirementSlug: r.slug, valueType: r.valueType }]
      : [];
  });
  return { feature: ref(f), personFeature: ref(person), businessFeature: ref(business), personRequires };
}

/** Every assignable feature of the catalog (today: business-cardholder). */
export const ASSIGNABLE_FEATURES: readonly AssignableFeature[] = features.flatMap((f) => resolve(f) ?? []);

export const assignableFeature = (featureId: string): AssignableFeature | undefined => ASSIGNABLE_FEATURES.find((a) => a.feature.id === featureId);

/**
 * What the feature still requires of the person: its REQUIRED requirements with nothing submitted
 * (a value, or a live file for a FILE requirement). Nothing once the person has a decision by any
 * path (a token-shared or hosted-SDK verification submits no universal KYC data; the decision is the
 * verification, and its outcome stays in its webhook).
 */
export function stillRequired(a: AssignableFeature, person: { decided: boolean; submitted: ReadonlySet<string> }): RequirementRef[] {
  if (person.decided) return [];
  return a.personRequires.filter((r) => !person.submitted.has(r.requirementSlug));
}
