// Entities (interface 2.1 and 4.3), scoped to the business behind the API key.
import { createEntityBody, entityCreatedSchema, entityIdParams, entityListSchema, entitySchema } from '../../domain/entity.ts';
import { paginationQuery } from '../../domain/pagination.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import { createEntity, deleteEntity, getEntity, listEntities } from '../../usecases/entities.ts';
import { route } from '../route.ts';

export function entityRoutes(context: UseCaseContext) {
  return [
    route({
      method: 'post',
      path: '/entity',
      operationId: 'createEntity',
      summary: 'Create an entity',
      description: 'Creates an INDIVIDUAL or BUSINESS entity of your business, optionally with requirement values (see GET /features).',
      tag: 'Entities',
      body: createEntityBody,
      responses: { 201: { description: 'Created', schema: entityCreatedSchema } },
      errors: ['invalidRequest', 'malformedJson', 'unsupportedMediaType', 'bodyTooLarge', 'entityExternalIdTaken'],
      handler: ({ body, business }) => createEntity(context, business, body),
    }),
    route({
      method: 'get',
      path: '/entity',
      operationId: 'listEntities',
      summary: 'List entities',
      tag: 'Entities',
      versioned: true,
      query: paginationQuery,
      responses: { 200: { description: 'A page of entities, oldest first', schema: entityListSchema } },
      errors: ['invalidRequest', 'acceptVersionMissing', 'acceptVersionUnsupported'],
      handler: ({ query, business }) => listEntities(context, business, query),
    }),
    route({
      method: 'get',
      path: '/entity/:entityId',
      operationId: 'getEntity',
      summary: 'Read one entity',
      tag: 'Entities',
      params: entityIdParams,
      responses: { 200: { description: 'The entity', schema: entitySchema } },
      errors: ['invalidRequest', 'entityNotFound'],
      handler: ({ params, business }) => getEntity(context, business, params.entityId),
    }),
    route({
      method: 'delete',
      path: '/entity/:entityId',
      operationId: 'deleteEntity',
      summary: 'Delete an entity permanently',
      description: 'Irreversible: the entity and its requirements and features are removed; later reads answer 404.',
      tag: 'Entities',
      params: entityIdParams,
      responses: { 204: { description: 'Deleted' } },
      errors: ['invalidRequest', 'entityNotFound'],
      handler: ({ params, business }) => deleteEntity(context, business, params.entityId),
    }),
  ];
}
