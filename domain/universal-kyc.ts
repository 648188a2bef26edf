// Universal KYC (interface 2.7, 4.5): the canonical KYC payload a client submits as the JSON string
// value of `ukyc-canonical-kyc-data`, every rule of 2.7 with the failing field's path, and what the
// decision reads of it. The decision itself is the reliance rule set (reliance.ts), the same as for
// token sharing, with the client's provider result and liveness as two more inputs.
import { z } from 'zod';
import { addYears, dayOf, isCalendarDate, isCountryAlpha3 } from './calendar.ts';
import type { Decision, SharedIdentity, VerificationChecks } from './reliance.ts';
import { CARD_PROCESSOR_TOKEN, CARD_PROCESSOR_TOKEN_RULE, CONTROL_CHARACTER_RULE, NO_CONTROL_CHARACTERS } from './share-fields.ts';
import type { PersonData } from './verified-person.ts';

export const CANONICAL_KYC_SLUG = 'ukyc-canonical-kyc-data';
export const ID_DOCUMENT_SLUG = 'ukyc-id-document';
export const PROOF_OF_ADDRESS_SLUG = 'ukyc-proof-of-address-document';
/** The file requirements of universal KYC, uploaded with POST /entity/{id}/requirement-slug/{slug}/upload. */
export const UKYC_FILE_SLUGS = [ID_DOCUMENT_SLUG, PROOF_OF_ADDRESS_SLUG] as const;
export type UkycFileSlug = (typeof UKYC_FILE_SLUGS)[number];

/** The identity-provider identifiers `provider.name` accepts (DESIGN.md section 4). */
export const UKYC_PROVIDERS = ['sumsub', 'onfido', 'veriff'] as const;
export const CHECK_RESULTS = ['APPROVED', 'REJECTED', 'WARNING', 'NOT_EXECUTED'] as const;
export const UKYC_DOCUMENT_TYPES = ['PASSPORT', 'ID_CARD', 'DRIVERS_LICENCE', 'RESIDENCE_PERMIT', 'UTILITY_BILL', 'UTILITY_BILL2'] as const;
export const MAX_AGE = 150;

/**
 * Latin script only: letters of the Latin script (with their accents), and the spaces, hyphens,
 * apostrophes and full stops names carry; at least one letter, starting with one.
 */
const LATIN_NAME = /^\p{Script=Latin}[\p{Script=Latin}\p{M} '’.-]*$/u;
const latin = (max: number) =>
  z
    .string()
    .max(max, `at most ${max} characters`)
    .regex(LATIN_NAME, 'Latin characters only (letters of the Latin script, spaces, hyphens, apostrophes, full stops), starting with a letter');
const text = (max: number) => z.string().max(max, `at most ${max} characters`).regex(NO_CONTROL_CHARACTERS, CONTROL_CHARACTER_RULE);
const filled = (max: number) => text(max).refine((s) => s.trim() !== '', 'must not be empty or whitespace only');
const country = z.string().refine(isCountryAlpha3, 'must be an ISO 3166-1 alpha-3 country code (GBR, DEU, …)');
const day = z.string().refine(isCalendarDate, 'must be a calendar date, YYYY-MM-DD');
const result = z.enum(CHECK_RESULTS, { message: `must be one of ${CHECK_RESULTS.join(', ')}` });

/**
 * The payload's schema on a given day: dates are checked against `today` (nothing issued in the
 * future, no expired document, the applicant's age). `null` leaves those out, for data already
 * checked on the day it arrived (storedCanonicalKyc): on a later day they would refuse what was
 * accepted, and the decision applies age and document validity to its own day (reliance.ts).
 */
export function canonicalKycSchema(today: string | null) {
  const document = z
    .object({
      type: z.enum(UKYC_DOCUMENT_TYPES, { message: `must be one of ${UKYC_DOCUMENT_TYPES.join(', ')}` }),
      number: filled(50),
      country,
      issuingDate: day.refine((d) => today === null || d <= today, 'must not be in the future'),
      expiryDate: day.refine((d) => today === null || d >= today, 'the document has expired; submit a document that is still valid').optional(),
    })
    .strict()
    .superRefine((d, ctx) => {
      if (d.expiryDate && d.expiryDate <= d.issuingDate) ctx.addIssue({ code: 'custom', path: ['expiryDate'], message: 'must be after issuingDate' });
    });
  return z
    .object({
      externalUserId: filled(255),
      cardProcessorPublicToken: z.string().regex(CARD_PROCESSOR_TOKEN, CARD_PROCESSOR_TOKEN_RULE).optional(),
      provider: z
        .object({
          name: z.enum(UKYC_PROVIDERS, { message: `must be one of ${UKYC_PROVIDERS.join(', ')}` }),
          status: result,
          data: z.array(z.record(z.string(), z.unknown()), { message: 'must be an array of objects' }),
        })
        .strict(),
      identity: z
        .object({
          firstName: latin(100),
          middleName: latin(100).optional(),
          lastName: latin(100).optional(),
          fullName: latin(200),
          dob: day.superRefine((dob, ctx) => {
            if (today === null) return;
            if (dob > addYears(today, -18)) ctx.addIssue({ code: 'custom', message: 'the applicant must be at least 18 years old' });
            else if (dob <= addYears(today, -(MAX_AGE + 1))) ctx.addIssue({ code: 'custom', message: `the applicant must be at most ${MAX_AGE} years old` });
          }),
          nationality: country,
        })
        .strict(),
      document: z.array(document).min(1, 'must list at least one document'),
      address: z
        .object({
          country,
          postCode: filled(20),
          street: filled(200),
          town: text(100).optional(),
          subStreet: text(200).optional(),
          state: text(100).optional(),
          buildingName: text(100).optional(),
          flatNumber: text(20).optional(),
          buildingNumber: text(20).optional(),
          formattedAddress: text(500).optional(),
        })
        .strict(),
      liveness: z
        .object({ result, checkedAt: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).optional() })
        .strict()
        .superRefine((l, ctx) => {
          if (l.result !== 'NOT_EXECUTED' && l.checkedAt === undefined)
            ctx.addIssue({ code: 'custom', path: ['checkedAt'], message: 'is required unless result is NOT_EXECUTED' });
        }),
    })
    .strict();
}

export type CanonicalKyc = z.infer<ReturnType<typeof canonicalKycSchema>>;

export type CanonicalKycCheck = { ok: true; payload: CanonicalKyc } | { ok: false; parameter: string; message: string };

/** `document[0].expiryDate` from ['document', 0, 'expiryDate']. */
function pathName(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)), '');
}

/** Reads the requirement's value (a JSON string) and checks every rule of 2.7; a failure names the first failing field. */
export function checkCanonicalKyc(value: string, now: Date): CanonicalKycCheck {
  return readCanonicalKyc(value, dayOf(now));
}

/**
 * A submission's data read back from PostgreSQL (kept as the client sent it, once checkCanonicalKyc
 * accepted it): a stored row is input too, so it is parsed with the same schema, not cast, and the
 * decision reads the checked payload; the rules of the day it arrived are left out (canonicalKycSchema).
 * A row that fails was not written by the API: it throws (its message names the field, never a value).
 */
export function storedCanonicalKyc(value: string): CanonicalKyc {
  const read = readCanonicalKyc(value, null);
  if (!read.ok) throw new Error(`the stored canonical KYC data fails its schema: ${read.message}`);
  return read.payload;
}

/**
 * The schema of a day, built once per day (building one costs about a millisecond, as much as
 * parsing a payload with it): the day's and the stored data's schemas are kept.
 */
const schemas = new Map<string | null, ReturnType<typeof canonicalKycSchema>>();
function schemaOf(today: string | null) {
  let schema = schemas.get(today);
  if (!schema) {
    if (schemas.size > 2) for (const k of schemas.keys()) if (k !== null) schemas.delete(k);
    schema = canonicalKycSchema(today);
    schemas.set(today, schema);
  }
  return schema;
}

/** Parses the value and checks it against the schema of `today` (canonicalKycSchema); a failure names the first failing field. */
function readCanonicalKyc(value: string, today: string | null): CanonicalKycCheck {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return { ok: false, parameter: 'value', message: 'value is not a JSON object; send the canonical KYC payload as a JSON string' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { ok: false, parameter: 'value', message: 'value must be a JSON object (as a string)' };
  const checked = schemaOf(today).safeParse(parsed);
  if (checked.success) return { ok: true, payload: checked.data };
  const issue = checked.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const parameter = pathName([...issue.path, issue.keys[0]!]);
    return { ok: false, parameter, message: `${parameter}: unknown field; remove it (the API reference lists the fields)` };
  }
  const parameter = pathName(issue.path);
  const missing = issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined;
  return { ok: false, parameter, message: `${parameter}: ${missing ? 'is required' : issue.message}` };
}

/**
 * What the reliance decision reads of the payload. A missing lastName is taken from fullName's last
 * word when fullName has more than one; the documents are the identity documents listed.
 */
export function identityOfCanonical(p: CanonicalKyc): PersonData & { checks: VerificationChecks } {
  const words = p.identity.fullName.trim().split(/\s+/);
  const lastName = p.identity.lastName ?? (words.length > 1 ? words[words.length - 1]! : null);
  const a = p.address;
  return {
    person: { firstName: p.identity.firstName, lastName, dob: p.identity.dob },
    addresses: [
      {
        country: a.country,
        postCode: a.postCode,
        street: a.street,
        town: a.town ?? null,
        state: a.state ?? null,
        subStreet: a.subStreet ?? null,
        buildingNumber: a.buildingNumber ?? null,
        flatNumber: a.flatNumber ?? null,
      },
    ],
    documents: p.document.map((d) => ({ type: d.type, number: d.number, validUntil: d.expiryDate ?? null })),
    checks: { provider: p.provider.status, liveness: p.liveness.result },
  };
}

/** The decision's input as SharedIdentity (for reliance.decide). */
export type CanonicalIdentity = SharedIdentity & { checks: VerificationChecks };

/** How long a universal KYC submission waits for its identity document by default (UKYC_SUBMISSION_DEADLINE_SECONDS). */
export const DEFAULT_UKYC_DEADLINE_SECONDS = 7 * 86_400;

/** The decision on a submission whose deadline passed before an identity document file arrived. */
export function incompleteSubmission(deadlineSeconds: number): Extract<Decision, { status: 'REJECTED' }> {
  const days = deadlineSeconds / 86_400;
  const within = Number.isInteger(days) ? `${days} day${days === 1 ? '' : 's'}` : `${deadlineSeconds} seconds`;
  return {
    status: 'REJECTED',
    rejectLabels: ['MISSING_IDENTITY_DOCUMENT_FILE'],
    reviewRejectType: 'RETRY',
    moderationComment:
      `No identity document file (${ID_DOCUMENT_SLUG}) was uploaded within ${within} of the KYC ` + `data; submit the data again and upload the document.`,
  };
}

/** The decision when the payload's card processor token already belongs to another entity of the business (share-fields.ts cardProcessorTokenTaken). */
export function cardProcessorTokenInUse(decision: Decision): Decision {
  const comment = 'the card processor public token belongs to another entity';
  if (decision.status === 'APPROVED') {
    return {
      status: 'REJECTED',
      rejectLabels: ['CARD_PROCESSOR_TOKEN_IN_USE'],
      reviewRejectType: 'RETRY',
      moderationComment: `The verification data cannot be used: ${comment}.`,
    };
  }
  return {
    ...decision,
    rejectLabels: [...decision.rejectLabels, 'CARD_PROCESSOR_TOKEN_IN_USE'],
    moderationComment: `${decision.moderationComment} Also, ${comment}.`,
  };
}
