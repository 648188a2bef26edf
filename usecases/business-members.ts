// Members of a BUSINESS entity beyond its declared owners, and feature assignments (interface
// v1.1.0; domain/business-members.ts): declare many, list, remove one; assign a feature to many,
// list its assignments, remove one. Every refusal names the field at fault and changes nothing.
import type { z } from 'zod';
import {
  assignableFeature,
  firstRepeat,
  stillRequired,
  verificationStanding,
  type AssignableFeature,
  type Assignment,
  type AssignmentHead,
  type assignedSchema,
  type assignmentPageSchema,
  type DeclareMembers,
  type declaredMembersSchema,
  type memberPageSchema,
} from '../domain/business-members.ts';
import { findFeature } from '../domain/feature-catalog.ts';
import { done, refuse, type Outcome, type Refusal } from '../domain/outcome.ts';
import { pageMeta, type Page } from '../domain/pagination.ts';
import * as members from '../onboarding/business-members.ts';
import {
  declareMembers as storeDeclare,
  listAssignments as pageOfAssignments,
  listMembers as pageOfMembers,
  type AssignmentRow,
  type AssignmentState,
  type MemberProblem,
} from '../store/business-members.ts';
import { entityType } from '../store/entities.ts';
import type { Caller, UseCaseContext } from './context.ts';

const entityNotFound = (id: string) =>
  refuse('entityNotFound', `Entity ${id} not found in your business; check the id (GET /entity lists your entities).`, { parameter: 'entityId' });
const notBusiness = (id: string) =>
  refuse('membersNeedBusiness', `Entity ${id} is an INDIVIDUAL: members and feature assignments belong to a BUSINESS entity.`, { parameter: 'entityId' });

function problemRefusal<P extends Refusal>(entityId: string, p: MemberProblem<P>): Refusal {
  if (p.problem === 'entity-missing') return entityNotFound(entityId);
  if (p.problem === 'not-business') return notBusiness(entityId);
  return p.detail;
}

/** The business entity of the path, for reads: found in the caller's business and a BUSINESS. */
async function businessEntity({ db }: UseCaseContext, caller: Caller, entityId: string): Promise<Refusal | null> {
  const type = await entityType(db, caller.id, entityId);
  if (!type) return entityNotFound(entityId);
  return type === 'BUSINESS' ? null : notBusiness(entityId);
}

/** The feature of the path: in the catalog, and assignable to members. */
function featureToAssign(featureId: string): Outcome<AssignableFeature> {
  const assignable = assignableFeature(featureId);
  if (assignable) return done(assignable);
  if (!findFeature(featureId)) return refuse('featureNotFound', `No feature ${featureId}; GET /features lists the features.`, { parameter: 'featureId' });
  return refuse(
    'featureNotAssignable',
    `Feature ${featureId} is not assigned to members: its access follows the entity's own verification. Assignable: business-cardholder.`,
    { parameter: 'featureId' },
  );
}

/** POST /entity/{entityId}/members: declares up to 500 people, each an INDIVIDUAL entity of the business, listed once. */
export async function declareMembers(
  context: UseCaseContext,
  caller: Caller,
  entityId: string,
  body: DeclareMembers,
): Promise<Outcome<z.input<typeof declaredMembersSchema>>> {
  const ids = body.members.map((m) => m.entityId.toLowerCase());
  const repeat = firstRepeat(ids);
  if (repeat >= 0) {
    const parameter = `members[${repeat}].entityId`;
    return refuse('memberListedTwice', `${parameter}: ${ids[repeat]} is listed twice; list each person once.`, { parameter });
  }
  const saved = await storeDeclare(context.db, {
    businessId: caller.id,
    entityId,
    members: body.members.map((m, i) => ({ entityId: ids[i]!, role: m.role })),
    check: (types) => {
      for (const [i, id] of ids.entries()) {
        const parameter = `members[${i}].entityId`;
        const type = types.get(id);
        if (!type)
          return refuse('memberEntityNotFound', `${parameter}: no entity ${id} in your business; create the person first (POST /entity).`, { parameter });
        if (type !== 'INDIVIDUAL')
          return refuse('memberNotIndividual', `${parameter}: ${id} is a BUSINESS entity; members are INDIVIDUAL entities.`, { parameter });
      }
      return null;
    },
  });
  if ('problem' in saved) return problemRefusal(entityId, saved);
  return done({ businessEntityId: entityId, changed: saved.changed, items: saved.items });
}

export async function listMembers(context: UseCaseContext, caller: Caller, entityId: string, page: Page): Promise<Outcome<z.input<typeof memberPageSchema>>> {
  const refused = await businessEntity(context, caller, entityId);
  if (refused) return refused;
  const { items, totalItems } = await pageOfMembers(context.db, entityId, page);
  return done({ items, meta: pageMeta(page, totalItems) });
}

/** DELETE /entity/{entityId}/members/{memberId}: the member and its assignments go; the features they gave are removed. */
export async function removeMember(context: UseCaseContext, caller: Caller, entityId: string, memberId: string): Promise<Outcome<undefined>> {
  const removed = await members.removeMember(context.db, { businessId: caller.id, entityId, memberId: memberId.toLowerCase(), now: new Date() });
  if (removed === 'not-member')
    return refuse(
      'businessMemberNotFound',
      `${memberId} is not a declared member of business entity ${entityId}; GET /entity/${entityId}/members lists them.`,
      {
        parameter: 'memberId',
      },
    );
  if (removed !== 'removed') return problemRefusal(entityId, removed);
  return done(undefined);
}

function toAssignment(feature: AssignableFeature, r: AssignmentRow): Assignment {
  return {
    memberId: r.memberId,
    externalId: r.externalId,
    role: r.role,
    assignedAt: r.assignedAt,
    enabled: r.enabledAt !== null,
    enabledAt: r.enabledAt,
    verification: { status: verificationStanding(r), decisionEventId: r.decisionEventId },
    stillRequired: stillRequired(feature, { decided: r.decided, submitted: new Set(r.submitted) }),
  };
}

function head(entityId: string, feature: AssignableFeature, state: AssignmentState): AssignmentHead {
  return {
    businessEntityId: entityId,
    feature: feature.feature,
    business: { requiredFeature: feature.businessFeature, enabled: state.businessEnabled },
  };
}

/** POST /entity/{entityId}/feature/{featureId}/assignments: assigns the feature to up to 500 declared members; answers each one's state. */
export async function assignFeature(
  context: UseCaseContext,
  caller: Caller,
  p: { entityId: string; featureId: string },
  memberIds: readonly string[],
): Promise<Outcome<z.input<typeof assignedSchema>>> {
  const feature = featureToAssign(p.featureId);
  if (!feature.ok) return feature;
  const ids = memberIds.map((id) => id.toLowerCase());
  const repeat = firstRepeat(ids);
  if (repeat >= 0) {
    const parameter = `memberIds[${repeat}]`;
    return refuse('memberListedTwice', `${parameter}: ${ids[repeat]} is listed twice; list each member once.`, { parameter });
  }
  const state = await members.assignFeature(context.db, {
    businessId: caller.id,
    entityId: p.entityId,
    feature: feature.value,
    memberIds: ids,
    now: new Date(),
    check: (declared) => {
      const at = ids.findIndex((id) => !declared.has(id));
      if (at < 0) return null;
      const parameter = `memberIds[${at}]`;
      return refuse(
        'businessMemberNotFound',
        `${parameter}: ${ids[at]} is not a declared member of business entity ${p.entityId}; declare it first (POST /entity/${p.entityId}/members).`,
        { parameter },
      );
    },
  });
  if ('problem' in state) return problemRefusal(p.entityId, state);
  return done({ ...head(p.entityId, feature.value, state), assigned: state.assigned, items: state.items.map((r) => toAssignment(feature.value, r)) });
}

export async function listAssignments(
  context: UseCaseContext,
  caller: Caller,
  p: { entityId: string; featureId: string },
  page: Page,
): Promise<Outcome<z.input<typeof assignmentPageSchema>>> {
  const feature = featureToAssign(p.featureId);
  if (!feature.ok) return feature;
  const refused = await businessEntity(context, caller, p.entityId);
  if (refused) return refused;
  const state = await pageOfAssignments(context.db, { entityId: p.entityId, feature: feature.value, page });
  return done({
    ...head(p.entityId, feature.value, state),
    items: state.items.map((r) => toAssignment(feature.value, r)),
    meta: pageMeta(page, state.totalItems),
  });
}

/** DELETE /entity/{entityId}/feature/{featureId}/assignments/{memberId}: the assignment goes, and the access it gave. */
export async function unassignFeature(
  context: UseCaseContext,
  caller: Caller,
  p: { entityId: string; featureId: string; memberId: string },
): Promise<Outcome<undefined>> {
  const feature = featureToAssign(p.featureId);
  if (!feature.ok) return feature;
  const removed = await members.unassignFeature(context.db, {
    businessId: caller.id,
    entityId: p.entityId,
    feature: feature.value,
    memberId: p.memberId.toLowerCase(),
    now: new Date(),
  });
  if (removed === 'not-assigned')
    return refuse('assignmentNotFound', `Feature ${p.featureId} is not assigned to ${p.memberId} in business entity ${p.entityId}.`, { parameter: 'memberId' });
  if (removed !== 'removed') return problemRefusal(p.entityId, removed);
  return done(undefined);
}
