// Members of a BUSINESS entity (DESIGN.md, `memberId`): the INDIVIDUAL entities of the same
// business it declares as beneficial owners, directors or representatives, in the value of its
// `kyb-ubo-declaration` requirement. A member is addressed as `memberId` on the endpoints that
// verify a person on behalf of the business entity.
import { z } from 'zod';

export const MEMBER_ROLES = ['UBO', 'DIRECTOR', 'REPRESENTATIVE'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];
export const MAX_MEMBERS = 25;
export const MEMBER_DECLARATION_SLUG = 'kyb-ubo-declaration';

export const memberDeclaration = z
  .object({
    members: z
      .array(
        z
          .object({
            entityId: z.uuid({ message: 'entityId must be a UUID' }),
            role: z.enum(MEMBER_ROLES, { message: `role must be one of ${MEMBER_ROLES.join(', ')}` }),
            ownershipPercent: z.number().min(0, 'ownershipPercent must be from 0 to 100').max(100, 'ownershipPercent must be from 0 to 100').optional(),
          })
          .strict(),
      )
      .min(1, 'members must list at least one person')
      .max(MAX_MEMBERS, `members must list at most ${MAX_MEMBERS} people`)
      .refine((ms) => new Set(ms.map((m) => m.entityId.toLowerCase())).size === ms.length, 'members lists an entityId twice; list each person once')
      .meta({ description: `INDIVIDUAL entities of your business (create them first), each once, at most ${MAX_MEMBERS}` }),
  })
  .strict();

export type MemberDeclaration = z.infer<typeof memberDeclaration>;

/** The optional `memberId` query of the person endpoints (SDK token, signed payload, uploads). */
export const memberIdQuery = z
  .object({
    memberId: z
      .uuid({ message: 'memberId must be a UUID' })
      .optional()
      .meta({
        description:
          'A declared member of the BUSINESS entity in the path (an owner of its kyb-ubo-declaration or KYB profile, ' +
          'or a member of POST /entity/{entityId}/members): the person',
      }),
  })
  .strict();
