// The feature catalog (interface 2.2 and 4.6).
import { z } from 'zod';
import { featurePageSchema, featureRequirementsSchema } from '../../domain/feature-catalog.ts';
import { paginationQuery } from '../../domain/pagination.ts';
import { listFeatureRequirements, listFeatures } from '../../usecases/features.ts';
import { route } from '../route.ts';

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
      responses: { 200: { description: 'A page of features', schema: featurePageSchema } },
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
      responses: { 200: { description: 'Every requirement of the feature', schema: featureRequirementsSchema } },
      errors: ['invalidRequest', 'featureNotFound'],
      handler: ({ params }) => listFeatureRequirements(params.featureId),
    }),
  ];
}
