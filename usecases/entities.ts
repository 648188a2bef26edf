// Entities (interface 2.1 and 4.3), scoped to the calling business.
import type { CreateEntityInput } from '../domain/entity.ts';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import { pageMeta, type Page } from '../domain/pagination.ts';
import { createEntity as insertEntity, deleteEntity as removeEntity, ExternalIdTaken, getEntity as findEntity, listEntities as pageOfEntities } from '../store/entities.ts';
import type { Caller, UseCaseContext } from './context.ts';

const notFound = (id: string) => refuse('entityNotFound', `Entity ${id} not found.`, { parameter: 'entityId' });

export async function createEntity({ db }: UseCaseContext, caller: Caller, input: CreateEntityInput) {
  try {
    return done({ id: await insertEntity(db, caller.id, input) });
  } catch (err) {
    if (!(err instanceof ExternalIdTaken)) throw err;
    return refuse('entityExternalIdTaken', `An entity with externalId "${input.externalId}" already exists.`, { parameter: 'externalId' });
  }
}

export async function listEntities({ db }: UseCaseContext, caller: Caller, page: Page) {
  const { items, totalItems } = await pageOfEntities(db, caller.id, page);
  return done({ items, meta: pageMeta(page, totalItems) });
}

export async function getEntity({ db }: UseCaseContext, caller: Caller, entityId: string) {
  const entity = await findEntity(db, caller.id, entityId);
  return entity ? done(entity) : notFound(entityId);
}

export async function deleteEntity({ db }: UseCaseContext, caller: Caller, entityId: string): Promise<Outcome<undefined>> {
  return (await removeEntity(db, caller.id, entityId)) ? done(undefined) : notFound(entityId);
}
