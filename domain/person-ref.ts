// The person a request names (DESIGN.md, `memberId`): the INDIVIDUAL entity itself, or with
// `memberId` a declared member of the BUSINESS entity. One rule for the single endpoints
// (usecases/person-verification.ts personNamed) and the records of a requirement batch.
import type { ErrorName } from './errors.ts';

export type PersonRefProblem = { error: Extract<ErrorName, 'personRequired' | 'memberNotFound'>; message: string; parameter: 'entityId' | 'memberId' };

/**
 * Why `entityId` (of `type`) with `memberId` does not name a person, or null when it does.
 * `takesMemberId` false (the canonical KYC submission, which has no memberId) points a BUSINESS at
 * the person's own entity; `isMember` says whether memberId is one of the business entity's members.
 */
export function personRefProblem(
  entityId: string,
  type: 'INDIVIDUAL' | 'BUSINESS',
  memberId: string | undefined,
  isMember: boolean,
  takesMemberId = true,
): PersonRefProblem | null {
  if (memberId === undefined) {
    if (type === 'INDIVIDUAL') return null;
    return takesMemberId
      ? {
          error: 'personRequired',
          message: `Entity ${entityId} is a BUSINESS: name the person with memberId (one of its declared members).`,
          parameter: 'memberId',
        }
      : {
          error: 'personRequired',
          message:
            `Entity ${entityId} is a BUSINESS: submit a person's data on the person's own INDIVIDUAL ` +
            `entity (a declared member's entityId), not on the business.`,
          parameter: 'entityId',
        };
  }
  if (type === 'INDIVIDUAL')
    return { error: 'personRequired', message: `Entity ${entityId} is an INDIVIDUAL: it is the person; leave out memberId.`, parameter: 'memberId' };
  if (!isMember)
    return {
      error: 'memberNotFound',
      message:
        `${memberId} is not a declared member of business entity ${entityId}; use one of its declared owners or members ` +
        '(GET /entity/{entityId}/members lists the members).',
      parameter: 'memberId',
    };
  return null;
}
