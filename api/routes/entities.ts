// Entities (interface 2.1 and 4.3), scoped to the business behind the API key.
import { z } from 'zod';
import { createEntityBody, entityIdParams, entityListSchema, entitySchema } from '../../domain/entity.ts';
import { ApiError } from '../../domain/errors.ts';
import { pageMeta, paginationQuery } from '../../domain/pagination.ts';
import type { Db } from '../../store/db.ts';
import { createEntity, deleteEntity, ExternalIdTaken, getEntity, listEntities } from '../../store/entities.ts';
import { route } from '../route.ts';

const notFound = (id: string) => new ApiError('entityNotFound', `Entity ${id} not found.`, { parameter: 'entityId' });

export function entityRoutes(db: Db) {
  return [
    route({
      method: 'post',
      path: '/entity',
      operationId: 'createEntity',
      summary: 'Create an entity',
      description: 'Creates an INDIVIDUAL or BUSINESS entity of your business, optionally with requirement values (see GET /features).',
      tag: 'Entities',
      body: createEntityBody,
      responses: { 201: { description: 'Created', schema: z.object({ id: z.uuid() }) } },
      errors: ['invalidRequest', 'malformedJson', 'unsupportedMediaType', 'bodyTooLarge', 'entityExternalIdTaken'],
      async handler({ body, business }) {
        try {
          return { status: 201, body: { id: await createEntity(db, business.id, body) } };
        } catch (err) {
          if (err instanceof ExternalIdTaken) {
            throw new ApiError('entityExternalIdTaken', `An entity with externalId "${body.externalId}" already exists.`, { parameter: 'externalId' });
          }
          throw err;
        }
      },
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
      async handler({ query, business }) {
        const { items, totalItems } = await listEntities(db, business.id, query);
        return { status: 200, body: { items, meta: pageMeta(query, totalItems) } };
      },
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
      async handler({ params, business }) {
        const entity = await getEntity(db, business.id, params.entityId);
        if (!entity) throw notFound(params.entityId);
        return { status: 200, body: entity };
      },
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
      async handler({ params, business }) {
        if (!(await deleteEntity(db, business.id, params.entityId))) throw notFound(params.entityId);
        return { status: 204 };
      },
    }),
  ];
}
