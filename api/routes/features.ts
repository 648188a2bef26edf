// The feature catalog (interface 2.2 and 4.6).
import { z } from 'zod';
import { pageMetaSchema, paginationQuery } from '../../domain/pagination.ts';
import { listFeatureRequirements, listFeatures } from '../../usecases/features.ts';
import { route } from '../route.ts';

const featureSchema = z.object({ id: z.uuid(), name: z.string(), slug: z.string(), description: z.string() });
const requirementSchema = z.object({
  requirementId: z.uuid(),
  requirementLevel: z.enum(['REQUIRED', 'OPTIONAL', 'PREFERED']),
  requirementSlug: z.string(),
  associatedEntity: z.enum(['INDIVIDUAL', 'BUSINESS']),
  valueType: z.enum(['BOOLEAN', 'NUMERIC', 'STRING', 'FILE', 'JSON']),
});

export function featureRoutes() {
  return [
    route({
      method: 'get',
      path: '/features',
      operationId: 'listFeatures',
      summary: 'List features',
      tag: 'Features',
      versioned: true,
      query: paginationQuery,
      responses: { 200: { description: 'A page of features', schema: z.object({ items: z.array(featureSchema), meta: pageMetaSchema() }) } },
      errors: ['invalidRequest', 'acceptVersionMissing', 'acceptVersionUnsupported'],
      handler: ({ query }) => listFeatures(query),
    }),
    route({
      method: 'get',
      path: '/feature/:featureId/requirement',
      operationId: 'listFeatureRequirements',
      summary: "List a feature's requirements",
      tag: 'Features',
      params: z.object({ featureId: z.uuid({ message: 'featureId must be a UUID' }) }).strict(),
      responses: { 200: { description: 'Every requirement of the feature', schema: z.object({ items: z.array(requirementSchema) }) } },
      errors: ['invalidRequest', 'featureNotFound'],
      handler: ({ params }) => listFeatureRequirements(params.featureId),
    }),
  ];
}
