// Entity rules (interface 2.1): what a client may send to create one, and the shapes it reads back.
import { z } from 'zod';
import { requirements, type Requirement } from './feature-catalog.ts';
import { pageMetaSchema } from './pagination.ts';
import { requirementSlugProblem, requirementValueIssue, requirementValueSchema } from './requirement-rules.ts';
import { CONTROL_CHARACTER_RULE, NO_CONTROL_CHARACTERS } from './share-fields.ts';

export const ENTITY_TYPES = ['INDIVIDUAL', 'BUSINESS'] as const;
export const REQUIREMENT_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'SUPERSEDED'] as const;
export const MAX_EXTERNAL_ID = 255;
export const MAX_REQUIREMENTS_AT_CREATE = 50;

export const externalIdSchema = z
  .string()
  .min(1, 'externalId must not be empty')
  .max(MAX_EXTERNAL_ID, `externalId is at most ${MAX_EXTERNAL_ID} characters`)
  .refine((s) => s.trim().length > 0, 'externalId must not be blank')
  .refine((s) => NO_CONTROL_CHARACTERS.test(s), `externalId ${CONTROL_CHARACTER_RULE}`)
  .meta({ pattern: '^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$' });

/** Checks one requirement value against its catalog entry; returns a message or null. */
export function requirementValueProblem(requirement: Requirement, value: unknown): string | null {
  const result = requirementValueSchema(requirement).safeParse(value);
  return result.success ? null : result.error.issues[0]!.message;
}

const requirementInput = z
  .object({
    requirementSlug: z.string().min(1).max(100),
    value: z.unknown(),
  })
  .strict();

/**
 * What the document says of `requirements`, per entity type: the slugs submitted at creation that
 * apply to that type, each at most once, each with its value's form (the superRefine below checks
 * the same, from the same catalog).
 */
const documented = (schema: z.ZodType) => {
  const { $schema: _drop, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return json;
};

const requirementsByType = ENTITY_TYPES.map((type) => {
  const creatable = requirements.filter((r) => r.associatedEntity === type && r.submittedVia === 'entity-create');
  return {
    properties: {
      type: { const: type },
      requirements: {
        maxItems: creatable.length,
        items: {
          oneOf: creatable.map((r) => ({
            type: 'object',
            required: ['requirementSlug', 'value'],
            additionalProperties: false,
            properties: { requirementSlug: { const: r.slug }, value: documented(requirementValueSchema(r)) },
          })),
        },
        allOf: creatable.map((r) => ({ contains: { properties: { requirementSlug: { const: r.slug } } }, minContains: 0, maxContains: 1 })),
      },
    },
  };
});

export const createEntityBody = z
  .object({
    externalId: externalIdSchema,
    type: z.enum(ENTITY_TYPES),
    requirements: z.array(requirementInput).max(MAX_REQUIREMENTS_AT_CREATE).optional(),
  })
  .strict()
  .meta({ oneOf: requirementsByType })
  .superRefine((body, ctx) => {
    const seen = new Set<string>();
    body.requirements?.forEach((item, i) => {
      const at = (field: string) => ['requirements', i, field];
      const slugProblem = seen.has(item.requirementSlug)
        ? `requirement "${item.requirementSlug}" is given twice; give each requirement once`
        : requirementSlugProblem(item.requirementSlug, body.type, 'entity-create');
      seen.add(item.requirementSlug);
      if (slugProblem) {
        ctx.addIssue({ code: 'custom', path: at('requirementSlug'), message: slugProblem });
        return;
      }
      const issue = requirementValueIssue(item.requirementSlug, item.value);
      if (issue) ctx.addIssue({ code: 'custom', path: [...at('value'), ...issue.path], message: `value of "${item.requirementSlug}" ${issue.message}` });
    });
  });

export type CreateEntityInput = z.infer<typeof createEntityBody>;

export const entityIdParams = z.object({ entityId: z.uuid({ message: 'entityId must be a UUID' }) }).strict();

export const submittedRequirementSchema = z.object({
  requirementSlug: z.string(),
  value: z.unknown(),
  status: z.enum(REQUIREMENT_STATUSES),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const entitySchema = z.object({
  id: z.uuid(),
  externalId: z.string(),
  type: z.enum(ENTITY_TYPES),
  businessId: z.uuid(),
  verifiedBy: z.string().nullable(),
  enabledFeatures: z.array(z.object({ id: z.uuid(), slug: z.string(), name: z.string(), enabledAt: z.string() })),
  submittedRequirements: z.array(submittedRequirementSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const entityListItemSchema = entitySchema.pick({
  id: true,
  externalId: true,
  type: true,
  businessId: true,
  createdAt: true,
  updatedAt: true,
});

export const entityListSchema = z.object({ items: z.array(entityListItemSchema), meta: pageMetaSchema() });

/** POST /entity's answer: the new entity's id. */
export const entityCreatedSchema = z.object({ id: z.uuid() });

export type Entity = z.input<typeof entitySchema>;
export type EntityListItem = z.input<typeof entityListItemSchema>;
export type EntityList = z.input<typeof entityListSchema>;
export type EntityCreated = z.input<typeof entityCreatedSchema>;
