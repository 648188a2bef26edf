// The sandbox control (DESIGN.md: `/sandbox/...`, sandbox environment only): a client plays its end
// user and the provider's reviewer, so the real callback → workflow → webhook path runs. Without
// `person` the applicant is a complete adult, so a GREEN review leaves an entity whose signed
// payload has every field; `person` changes or removes parts of it to reach each decision rule.
import { z } from 'zod';
import { addYears, dayOf, isCalendarDate, isCountryAlpha3 } from './calendar.ts';

const day = z.string().refine(isCalendarDate, 'must be a calendar date, YYYY-MM-DD');
const country = z.string().refine(isCountryAlpha3, 'must be an ISO 3166-1 alpha-3 code (GBR, DEU, …)');
const text = (max: number) => z.string().trim().min(1).max(max);

export const SANDBOX_DOCUMENT_TYPES = ['PASSPORT', 'ID_CARD', 'DRIVERS', 'RESIDENCE_PERMIT'] as const;

export const sandboxPersonSchema = z
  .object({
    firstName: text(100).optional(),
    lastName: text(100).optional(),
    dob: day.optional(),
    nationality: country.optional(),
    address: z
      .object({
        country,
        postCode: text(20),
        street: text(200),
        town: text(100).optional(),
        buildingNumber: text(20).optional(),
        flatNumber: text(20).optional(),
      })
      .strict()
      .nullable()
      .optional()
      .meta({ description: 'The residential address; null for none' }),
    idDocument: z
      .object({ type: z.enum(SANDBOX_DOCUMENT_TYPES), country, number: text(50), issuedDate: day.optional(), validUntil: day.optional() })
      .strict()
      .nullable()
      .optional()
      .meta({ description: 'The identity document; null for none' }),
  })
  .strict()
  .meta({ description: 'Changes to the default complete adult: a field given replaces it, null removes it' });

export const sandboxReviewBody = z
  .object({
    reviewAnswer: z.enum(['GREEN', 'RED']),
    rejectLabels: z.array(text(100)).max(20).optional(),
    reviewRejectType: z.enum(['RETRY', 'FINAL']).optional(),
    moderationComment: text(1000).optional(),
    person: sandboxPersonSchema.optional(),
  })
  .strict()
  .refine((b) => b.reviewAnswer === 'RED' || (b.rejectLabels === undefined && b.reviewRejectType === undefined), {
    message: 'rejectLabels and reviewRejectType are only allowed with reviewAnswer RED; leave them out or set reviewAnswer to RED',
    path: ['reviewAnswer'],
  });

export type SandboxReviewRequest = z.infer<typeof sandboxReviewBody>;
export type SandboxPerson = z.infer<typeof sandboxPersonSchema>;

/** The applicant the sandbox creates: the default complete adult with the request's changes. */
export function sandboxApplicant(person: SandboxPerson | undefined, entityId: string, now: Date) {
  const today = dayOf(now);
  const p = person ?? {};
  const number = `SBX${entityId.replace(/-/g, '').slice(0, 6).toUpperCase()}`;
  return {
    person: {
      firstName: p.firstName ?? 'Alex',
      lastName: p.lastName ?? 'Sandbox',
      dob: p.dob ?? addYears(today, -30),
      nationality: p.nationality ?? 'GBR',
      address:
        p.address === null ? null : (p.address ?? { country: 'GBR', postCode: 'EC1A 1BB', street: 'Aldersgate Street', town: 'London', buildingNumber: '1' }),
    },
    idDocument:
      p.idDocument === null
        ? null
        : (p.idDocument ?? { type: 'PASSPORT', country: 'GBR', number, issuedDate: addYears(today, -2), validUntil: addYears(today, 8) }),
  };
}
