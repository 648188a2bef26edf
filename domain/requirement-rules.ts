// What a requirement submission may carry, in one place: whether a slug can be submitted on an entity
// of a type by a given path, and whether its value is of the requirement's form. POST /entity
// (requirements at creation, domain/entity.ts) and the batch of requirement submissions
// (domain/requirement-lines.ts) both ask these, so a record of a batch fails for exactly the reasons
// its single request would.
import { z } from 'zod';
import { findRequirement, type EntityType, type Requirement } from './feature-catalog.ts';
import { MEMBER_DECLARATION_SLUG } from './members.ts';
import { CANONICAL_KYC_SLUG } from './universal-kyc.ts';

export const MAX_STRING_VALUE = 1000;
export const MAX_JSON_VALUE_BYTES = 64 * 1024;

/**
 * The rule for one requirement's value, from its catalog entry: validation parses with it and the
 * OpenAPI document shows it (z.toJSONSchema), so the two cannot say different things.
 */
export function requirementValueSchema(requirement: Requirement): z.ZodType {
  switch (requirement.valueType) {
    case 'BOOLEAN':
      return z.boolean({ message: 'must be a boolean' });
    case 'NUMERIC':
      return z.number({ message: 'must be a finite number' });
    case 'STRING': {
      const text = z.string({ message: 'must be a non-empty string' }).max(MAX_STRING_VALUE, `must be at most ${MAX_STRING_VALUE} characters`);
      return requirement.pattern
        ? text.regex(requirement.pattern.regex, `must be ${requirement.pattern.description}`)
        : text.regex(/\S/, 'must be a non-empty string');
    }
    case 'JSON':
      if (requirement.schema) return requirement.schema;
      return z
        .union([z.record(z.string(), z.unknown()), z.array(z.unknown())], { message: 'must be a JSON object or array' })
        .refine((v) => JSON.stringify(v).length <= MAX_JSON_VALUE_BYTES, `must be at most ${MAX_JSON_VALUE_BYTES} bytes of JSON`)
        .meta({ description: `at most ${MAX_JSON_VALUE_BYTES} bytes of JSON` });
    case 'FILE':
      return z.never({ message: 'is a file; upload it with POST /entity/{entityId}/requirement-slug/{requirementSlug}/upload' });
  }
}

/** The canonical KYC data's value as POST /entity/{entityId}/requirement takes it: the payload of 2.7 as a JSON string. */
export const canonicalKycValue = z
  .string({ message: 'must be a string: the canonical KYC payload, JSON-stringified' })
  .min(2, 'must be the canonical KYC payload, JSON-stringified')
  .max(MAX_JSON_VALUE_BYTES, `must be at most ${MAX_JSON_VALUE_BYTES} characters`);

/** Where a requirement value is being submitted. */
export type SubmissionPath = 'entity-create' | 'requirement-batch';

/** Why `slug` cannot be submitted on an entity of `type` by `path` (a message naming the slug), or null when it can. */
export function requirementSlugProblem(slug: string, type: EntityType, path: SubmissionPath): string | null {
  const requirement = findRequirement(slug);
  if (!requirement) return `unknown requirement slug "${slug}"; GET /feature/{featureId}/requirement lists the slugs`;
  if (requirement.associatedEntity !== type)
    return (
      `requirement "${slug}" applies to ${requirement.associatedEntity} entities, not ${type}; ` +
      `leave it out, or check ${path === 'entity-create' ? 'type' : 'the entity'}`
    );
  const via = requirement.submittedVia;
  if (via === 'ukyb')
    return (
      `requirement "${slug}" cannot be given ${path === 'entity-create' ? 'when the entity is created' : 'in a batch'}: submit ` +
      `it with POST /ukyb (the profile) or POST /ukyb/documents (files)${path === 'entity-create' ? ' afterwards' : ''}`
    );
  // at creation a file's value says so itself (requirementValueSchema: value is a file); a batch has no such value to check
  if (via === 'file-upload' && path === 'requirement-batch')
    return `requirement "${slug}" is a file: upload it with POST /entity/{entityId}/requirement-slug/${slug}/upload`;
  if (path === 'entity-create' && via === 'requirement-endpoint')
    return `requirement "${slug}" cannot be given when the entity is created: submit it with POST /entity/{entityId}/requirement afterwards`;
  if (path === 'requirement-batch' && slug === MEMBER_DECLARATION_SLUG)
    return (
      `requirement "${slug}" cannot be given in a batch: a business entity's owners are declared when it is created, and changed ` +
      `with its KYB profile (POST /ukyb)`
    );
  return null;
}

/** The first problem of a value for its requirement: the path inside the value and a message, or null when it is of its form. */
export function requirementValueIssue(slug: string, value: unknown): { path: (string | number)[]; message: string } | null {
  const requirement = findRequirement(slug);
  if (!requirement) return null; // requirementSlugProblem says so first
  const schema = slug === CANONICAL_KYC_SLUG ? canonicalKycValue : requirementValueSchema(requirement);
  const result = schema.safeParse(value);
  if (result.success) return null;
  const issue = result.error.issues[0]!;
  return { path: issue.path.filter((k): k is string | number => typeof k !== 'symbol'), message: issue.message };
}
