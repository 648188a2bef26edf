// The feature catalog (interface 2.2 and 4.6).
import { z } from 'zod';
import { ApiError } from '../../domain/errors.ts';
import { featureRequirements, features, findFeature } from '../../domain/feature-catalog.ts';
import { offsetOf, pageMeta, pageMetaSchema, paginationQuery } from '../../domain/pagination.ts';
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
      handler({ query }) {
        const start = offsetOf(query);
        const items = features.slice(start, start + query.limit).map(({ id, name, slug, description }) => ({ id, name, slug, description }));
        return { status: 200, body: { items, meta: pageMeta(query, features.length) } };
      },
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
      handler({ params }) {
        const feature = findFeature(params.featureId);
        if (!feature) throw new ApiError('featureNotFound', `Feature ${params.featureId} not found.`, { parameter: 'featureId' });
        return { status: 200, body: { items: featureRequirements(feature) } };
      },
    }),
  ];
}
