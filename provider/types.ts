// What the service needs from an identity provider, independent of which provider it is.
// Implementations: provider/sumsub (over HTTP). The simulator in provider-sim/ speaks Sumsub's API,
// so the same implementation runs in development, tests and production.

/** An applicant as the service reads it: identity data and the provider's review. */
export type ProviderApplicant = {
  id: string;
  externalUserId: string | null;
  levelName: string | null;
  createdAt: string | null;
  person: {
    firstName: string | null;
    lastName: string | null;
    dob: string | null;
    nationality: string | null;
    country: string | null;
  };
  addresses: {
    country: string | null;
    postCode: string | null;
    town: string | null;
    street: string | null;
    state: string | null;
    buildingNumber: string | null;
    flatNumber: string | null;
    subStreet: string | null;
  }[];
  documents: { type: string; country: string | null; number: string | null; issuedDate: string | null; validUntil: string | null }[];
  review: {
    /** The review round (Sumsub's review.reviewId): a new review of the same applicant has another. */
    id: string | null;
    status: string | null;
    answer: 'GREEN' | 'RED' | null;
    rejectLabels: string[];
    reviewRejectType: string | null;
    moderationComment: string | null;
  };
};

export type ImportApplicantInput = {
  shareToken: string;
  levelName?: string | undefined;
  /** Our own id for the imported applicant, so a lost answer can be found again (findApplicant). */
  externalUserId?: string | undefined;
};

/** A person as the end user enters them in the provider's flow (the sandbox plays that part). */
export type ApplicantPerson = {
  firstName?: string;
  lastName?: string;
  dob?: string;
  nationality?: string;
  address?: { country: string; postCode: string; street: string; town?: string; buildingNumber?: string; flatNumber?: string } | null;
};

/** An identity document's data (type PASSPORT, ID_CARD, DRIVERS, RESIDENCE_PERMIT). */
export type ApplicantDocument = { type: string; country: string; number: string; issuedDate?: string; validUntil?: string };

export type SandboxReview = { reviewAnswer: 'GREEN' | 'RED'; rejectLabels?: string[]; reviewRejectType?: 'RETRY' | 'FINAL'; moderationComment?: string };

/** The longest one provider request may take (the client's own timeout): what an activity keeps for it. */
export const PROVIDER_REQUEST_TIMEOUT_MS = 10_000;

/** The methods that send a request (all but verifyWebhook and name): what the fleet-wide pace spaces. */
export const PROVIDER_REQUEST_METHODS = [
  'importApplicant',
  'getApplicant',
  'findApplicantByExternalUserId',
  'createSdkToken',
  'createApplicant',
  'addIdDocument',
  'completeSandboxReview',
] as const;

export interface IdentityProvider {
  /** The provider's identifier, as in `X-Provider` and `provider.name`. */
  readonly name: string;
  /** Imports a donor's applicant into our account with a share token (reusable KYC). One request. */
  importApplicant(input: ImportApplicantInput): Promise<ProviderApplicant>;
  /** Reads one of our applicants. One request. */
  getApplicant(applicantId: string): Promise<ProviderApplicant>;
  /** Finds one of our applicants by the externalUserId we gave it; null when there is none. One request. */
  findApplicantByExternalUserId(externalUserId: string): Promise<ProviderApplicant | null>;
  /** Mints an access token for the provider's hosted SDK. One request. */
  createSdkToken(input: { userId: string; levelName: string; ttlInSecs?: number }): Promise<{ token: string; userId: string }>;
  /**
   * Creates an applicant with the person's data, as the provider's SDK does for the end user. One
   * request; an existing externalUserId fails with status 409.
   */
  createApplicant(input: { externalUserId: string; levelName: string; person: ApplicantPerson }): Promise<ProviderApplicant>;
  /** Adds an identity document's data to an applicant (merged by type and country). One request. */
  addIdDocument(applicantId: string, document: ApplicantDocument): Promise<void>;
  /** Sandbox only: finishes the applicant's review as the provider's reviewer would, which sends the review callback. One request. */
  completeSandboxReview(applicantId: string, review: SandboxReview): Promise<void>;
  /** Checks a provider webhook's signature over its raw body. No request. */
  verifyWebhook(rawBody: Buffer | string, headers: Record<string, string | string[] | undefined>): boolean;
}
