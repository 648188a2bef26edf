// Entities (interface 2.1 and 4.3), scoped to the calling business.
import type { CreateEntityInput, Entity, EntityCreated, EntityList } from '../domain/entity.ts';
import { MEMBER_DECLARATION_SLUG, type MemberDeclaration } from '../domain/members.ts';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import { pageMeta, type Page } from '../domain/pagination.ts';
import { deleteEntity as removeEntity } from '../onboarding/entities.ts';
import {
  createEntity as insertEntity,
  entityTypes,
  ExternalIdTaken,
  getEntity as findEntity,
  listEntities as pageOfEntities,
  type MemberRow,
} from '../store/entities.ts';
import type { Caller, UseCaseContext } from './context.ts';
import { removeBytes } from './stored-files.ts';

const notFound = (id: string) =>
  refuse('entityNotFound', `Entity ${id} not found in your business; check the id (GET /entity lists your entities).`, { parameter: 'entityId' });

/** The members a business entity declares, each an INDIVIDUAL entity of the caller's business. */
async function declaredMembers({ db }: UseCaseContext, caller: Caller, input: CreateEntityInput): Promise<Outcome<MemberRow[]>> {
  const at = input.requirements?.findIndex((r) => r.requirementSlug === MEMBER_DECLARATION_SLUG) ?? -1;
  if (at < 0) return done([]);
  const { members } = input.requirements![at]!.value as MemberDeclaration;
  const types = await entityTypes(
    db,
    caller.id,
    members.map((m) => m.entityId),
  );
  for (const [j, m] of members.entries()) {
    const type = types.get(m.entityId);
    if (type === 'INDIVIDUAL') continue;
    const parameter = `requirements[${at}].value.members[${j}].entityId`;
    return refuse(
      'invalidRequest',
      `${parameter}: ${type ? 'is a BUSINESS entity; members are INDIVIDUAL entities' : `no entity ${m.entityId} in your business; create the person first`}`,
      { parameter },
    );
  }
  return done(members.map((m) => ({ entityId: m.entityId, role: m.role, ownershipPercent: m.ownershipPercent })));
}

export async function createEntity(context: UseCaseContext, caller: Caller, input: CreateEntityInput): Promise<Outcome<EntityCreated>> {
  const members = await declaredMembers(context, caller, input);
  if (!members.ok) return members;
  try {
    return done({ id: await insertEntity(context.db, caller.id, input, members.value) });
  } catch (err) {
    if (!(err instanceof ExternalIdTaken)) throw err;
    return refuse(
      'entityExternalIdTaken',
      `Your business already has an entity with externalId "${input.externalId}"; use that entity, or choose another externalId.`,
      { parameter: 'externalId' },
    );
  }
}

export async function listEntities({ db }: UseCaseContext, caller: Caller, page: Page): Promise<Outcome<EntityList>> {
  const { items, totalItems } = await pageOfEntities(db, caller.id, page);
  return done({ items, meta: pageMeta(page, totalItems) });
}

export async function getEntity({ db }: UseCaseContext, caller: Caller, entityId: string): Promise<Outcome<Entity>> {
  const entity = await findEntity(db, caller.id, entityId);
  return entity ? done(entity) : notFound(entityId);
}

/**
 * Deletes the entity with every piece of the person at once (one transaction), then its files'
 * bytes; bytes the store does not remove now stay due, and housekeeping removes them. Under the
 * business's retention policy (or a legal hold) the entity is sealed instead — gone from every read
 * all the same — and its retention workflow purges it when the period ends; if that start is lost,
 * housekeeping starts it once the date has passed (activities/retention.ts).
 */
export async function deleteEntity(context: UseCaseContext, caller: Caller, entityId: string): Promise<Outcome<undefined>> {
  const ended = await removeEntity(context.db, caller.id, entityId);
  if (!ended) return notFound(entityId);
  if ('removed' in ended) await removeBytes(context, ended.removed, { alreadyDue: true });
  else
    await context.start
      .retention(entityId, caller.id)
      .catch((err: unknown) => context.log.warn({ err }, 'retention workflow not started; housekeeping starts it when due'));
  return done(undefined);
}
