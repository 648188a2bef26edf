// Members of a BUSINESS entity beyond its declared owners, and feature assignments (interface v1.1.0).
import {
  assignedSchema,
  assignFeatureBody,
  assignmentPageSchema,
  assignmentParams,
  declaredMembersSchema,
  declareMembersBody,
  featureOfEntityParams,
  MAX_MEMBERS_PER_CALL,
  memberPageSchema,
  memberParams,
} from '../../domain/business-members.ts';
import { entityIdParams } from '../../domain/entity.ts';
import { paginationQuery } from '../../domain/pagination.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import { assignFeature, declareMembers, listAssignments, listMembers, removeMember, unassignFeature } from '../../usecases/business-members.ts';
import { route } from '../route.ts';

const BODY_ERRORS = ['invalidRequest', 'malformedJson', 'unsupportedMediaType', 'bodyTooLarge'] as const;

export function businessMemberRoutes(context: UseCaseContext) {
  return [
    route({
      method: 'post',
      path: '/entity/:entityId/members',
      operationId: 'declareBusinessMembers',
      summary: 'Declare members of a business entity',
      description:
        `Declares up to ${MAX_MEMBERS_PER_CALL} people at once as members of the BUSINESS entity beyond its owners (for example the ` +
        'employees who hold cards of its business card program), each an INDIVIDUAL entity of your business with a role. A person ' +
        'already declared takes the role given; repeating a call changes nothing. Owners stay in the KYB declaration (kyb-ubo-declaration, ' +
        'POST /ukyb) and are not counted here. A declared member is a `memberId` of the person endpoints. All or nothing: one bad ' +
        'person refuses the call, naming its field.',
      tag: 'Entities',
      params: entityIdParams,
      body: declareMembersBody,
      responses: { 201: { description: 'The listed members, in the order given', schema: declaredMembersSchema } },
      errors: [...BODY_ERRORS, 'entityNotFound', 'membersNeedBusiness', 'memberEntityNotFound', 'memberNotIndividual', 'memberListedTwice'],
      handler: ({ params, body, business }) => declareMembers(context, business, params.entityId, body),
    }),
    route({
      method: 'get',
      path: '/entity/:entityId/members',
      operationId: 'listBusinessMembers',
      summary: 'List the members of a business entity',
      tag: 'Entities',
      params: entityIdParams,
      query: paginationQuery,
      responses: { 200: { description: "A page of members in declaration order (a call's people in the order given)", schema: memberPageSchema } },
      errors: ['invalidRequest', 'entityNotFound', 'membersNeedBusiness'],
      handler: ({ params, query, business }) => listMembers(context, business, params.entityId, query),
    }),
    route({
      method: 'delete',
      path: '/entity/:entityId/members/:memberId',
      operationId: 'removeBusinessMember',
      summary: 'Remove a member of a business entity',
      description: 'The member and its feature assignments go; each feature it held through them is removed (feature_access_change).',
      tag: 'Entities',
      params: memberParams,
      responses: { 204: { description: 'Removed' } },
      errors: ['invalidRequest', 'entityNotFound', 'membersNeedBusiness', 'businessMemberNotFound'],
      handler: ({ params, business }) => removeMember(context, business, params.entityId, params.memberId),
    }),
    route({
      method: 'post',
      path: '/entity/:entityId/feature/:featureId/assignments',
      operationId: 'assignFeatureToMembers',
      summary: 'Assign a feature to members of a business entity',
      description:
        `Assigns an assignable feature (business-cardholder) to up to ${MAX_MEMBERS_PER_CALL} declared members at once; already ` +
        "assigned ones stay as they are. Answers each member's state: what the feature still requires of the person, where its " +
        'verification stands (never its outcome: that is in its webhook), and whether the feature is enabled. It is enabled for a member ' +
        "once the person's own KYC decision is APPROVED (any path) and the business entity's KYB is (business-card-program), and then " +
        'feature_access_change is sent. All or nothing: one bad member refuses the call, naming its field.',
      tag: 'Entities',
      params: featureOfEntityParams,
      body: assignFeatureBody,
      responses: { 201: { description: 'Each listed member, in the order given', schema: assignedSchema } },
      errors: [
        ...BODY_ERRORS,
        'entityNotFound',
        'membersNeedBusiness',
        'featureNotFound',
        'featureNotAssignable',
        'businessMemberNotFound',
        'memberListedTwice',
      ],
      handler: ({ params, body, business }) => assignFeature(context, business, params, body.memberIds),
    }),
    route({
      method: 'get',
      path: '/entity/:entityId/feature/:featureId/assignments',
      operationId: 'listFeatureAssignments',
      summary: "List a feature's assignments in a business entity",
      tag: 'Entities',
      params: featureOfEntityParams,
      query: paginationQuery,
      responses: { 200: { description: "A page of assignments in assignment order (a call's members in the order given)", schema: assignmentPageSchema } },
      errors: ['invalidRequest', 'entityNotFound', 'membersNeedBusiness', 'featureNotFound', 'featureNotAssignable'],
      handler: ({ params, query, business }) => listAssignments(context, business, params, query),
    }),
    route({
      method: 'delete',
      path: '/entity/:entityId/feature/:featureId/assignments/:memberId',
      operationId: 'unassignFeature',
      summary: "Remove a feature's assignment from a member",
      description: 'The assignment goes; if the feature was enabled through it, it is removed (feature_access_change).',
      tag: 'Entities',
      params: assignmentParams,
      responses: { 204: { description: 'Removed' } },
      errors: ['invalidRequest', 'entityNotFound', 'membersNeedBusiness', 'featureNotFound', 'featureNotAssignable', 'assignmentNotFound'],
      handler: ({ params, business }) => unassignFeature(context, business, params),
    }),
  ];
}
