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
  addresses: { country: string | null; postCode: string | null; town: string | null; street: string | null; state: string | null; buildingNumber: string | null; flatNumber: string | null; subStreet: string | null }[];
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
  /** Checks a provider webhook's signature over its raw body. No request. */
  verifyWebhook(rawBody: Buffer | string, headers: Record<string, string | string[] | undefined>): boolean;
}
