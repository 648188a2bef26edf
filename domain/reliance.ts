// The reliance decision (DESIGN.md section 4): we do not re-run KYC and enforce no level. A person
// is REJECTED only when the data is insufficient to create a card, or when the verification we rely
// on refused the person or never ran; otherwise APPROVED. Every path that decides from data (token
// sharing, universal KYC, a GREEN hosted-SDK review) decides here.

/**
 * The checks another provider ran, where the data says (universal KYC: the client's provider result
 * and liveness). A shared applicant was approved by its donor, so token sharing has none.
 */
export type VerificationChecks = {
  provider: 'APPROVED' | 'REJECTED' | 'WARNING' | 'NOT_EXECUTED';
  liveness: 'APPROVED' | 'REJECTED' | 'WARNING' | 'NOT_EXECUTED';
};

/** What the decision reads of a shared applicant (the provider's applicant has at least this). */
export type SharedIdentity = {
  person: { firstName: string | null; lastName: string | null; dob: string | null };
  addresses: { country: string | null; street: string | null; postCode: string | null }[];
  documents: { type: string; number: string | null; validUntil: string | null }[];
  checks?: VerificationChecks;
};

export type Decision = { status: 'APPROVED' } | { status: 'REJECTED'; rejectLabels: string[]; reviewRejectType: 'RETRY' | 'FINAL'; moderationComment: string };

export const MINIMUM_AGE = 18;

/** Each rule: a label, whether a new share could fix it, and the sentence a client reads. */
const RULES: { label: string; fixable: boolean; comment: string; fails(a: SharedIdentity, today: string): boolean }[] = [
  // We rely on the other provider's verification: its refusal stands, and without one there is nothing to rely on.
  // A WARNING, or liveness not run, is the provider's and the client's call (no level is enforced).
  {
    label: 'PROVIDER_REJECTED',
    fixable: false,
    comment: "the client's identity provider rejected the person",
    fails: (a) => a.checks?.provider === 'REJECTED',
  },
  {
    label: 'PROVIDER_CHECK_NOT_EXECUTED',
    fixable: true,
    comment: "the client's identity provider did not run its check",
    fails: (a) => a.checks?.provider === 'NOT_EXECUTED',
  },
  { label: 'LIVENESS_REJECTED', fixable: false, comment: 'the liveness check failed', fails: (a) => a.checks?.liveness === 'REJECTED' },
  { label: 'MISSING_NAME', fixable: true, comment: 'first or last name is missing', fails: (a) => !a.person.firstName || !a.person.lastName },
  { label: 'MISSING_DATE_OF_BIRTH', fixable: true, comment: 'date of birth is missing', fails: (a) => !a.person.dob || Number.isNaN(Date.parse(a.person.dob)) },
  {
    label: 'MISSING_ADDRESS',
    fixable: true,
    comment: 'no residential address (country, street and post code)',
    fails: (a) => !a.addresses.some((x) => x.country && x.street && x.postCode),
  },
  { label: 'MISSING_IDENTITY_DOCUMENT', fixable: true, comment: 'no identity document', fails: (a) => !a.documents.some(isIdentityDocument) },
  {
    label: 'UNDERAGE',
    fixable: false,
    comment: `the applicant is under ${MINIMUM_AGE}`,
    fails: (a, today) => Boolean(a.person.dob) && ageOn(a.person.dob!, today) < MINIMUM_AGE,
  },
  {
    label: 'EXPIRED_DOCUMENT',
    fixable: true,
    comment: 'every identity document has expired',
    fails: (a, today) => a.documents.some(isIdentityDocument) && !a.documents.some((d) => isIdentityDocument(d) && (!d.validUntil || d.validUntil >= today)),
  },
];

const IDENTITY_DOCUMENT_TYPES = new Set(['PASSPORT', 'ID_CARD', 'DRIVERS', 'DRIVERS_LICENCE', 'RESIDENCE_PERMIT']);
export function isIdentityDocument(d: SharedIdentity['documents'][number]): boolean {
  return IDENTITY_DOCUMENT_TYPES.has(d.type) && Boolean(d.number);
}

/** Whole years between a YYYY-MM-DD birth date and a YYYY-MM-DD day. */
export function ageOn(dob: string, today: string): number {
  const [by, bm, bd] = dob.slice(0, 10).split('-').map(Number) as [number, number, number];
  const [ty, tm, td] = today.slice(0, 10).split('-').map(Number) as [number, number, number];
  return ty - by - (tm < bm || (tm === bm && td < bd) ? 1 : 0);
}

export function decide(applicant: SharedIdentity, now: Date): Decision {
  const today = now.toISOString().slice(0, 10);
  const failed = RULES.filter((r) => r.fails(applicant, today));
  if (failed.length === 0) return { status: 'APPROVED' };
  return {
    status: 'REJECTED',
    rejectLabels: failed.map((r) => r.label),
    reviewRejectType: failed.every((r) => r.fixable) ? 'RETRY' : 'FINAL',
    moderationComment: `The verification data is insufficient for card creation: ${failed.map((r) => r.comment).join('; ')}.`,
  };
}
