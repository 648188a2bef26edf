// Reads Sumsub's applicant JSON into our ProviderApplicant. `info` holds what the provider extracted
// and verified; `fixedInfo` what the donor typed in. Verified data wins, typed data fills gaps.
import type { ProviderApplicant } from '../types.ts';

type Json = Record<string, any>;

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);

export function toProviderApplicant(raw: Json): ProviderApplicant {
  const info: Json = raw.info ?? {};
  const fixed: Json = raw.fixedInfo ?? {};
  const pick = (key: string) => str(info[key]) ?? str(fixed[key]);
  const addresses: Json[] = (Array.isArray(info.addresses) && info.addresses.length ? info.addresses : fixed.addresses) ?? [];
  const docs: Json[] = (Array.isArray(info.idDocs) && info.idDocs.length ? info.idDocs : fixed.idDocs) ?? [];
  const result: Json = raw.review?.reviewResult ?? {};
  const answer = result.reviewAnswer === 'GREEN' || result.reviewAnswer === 'RED' ? result.reviewAnswer : null;
  return {
    id: String(raw.id),
    externalUserId: str(raw.externalUserId),
    levelName: str(raw.levelName) ?? str(raw.review?.levelName),
    createdAt: str(raw.createdAt),
    person: {
      firstName: pick('firstNameEn') ?? pick('firstName'),
      lastName: pick('lastNameEn') ?? pick('lastName'),
      dob: pick('dob'),
      nationality: pick('nationality'),
      country: pick('country'),
    },
    addresses: addresses.map((a) => ({
      country: str(a.country),
      postCode: str(a.postCode),
      town: str(a.town),
      street: str(a.street),
      state: str(a.state),
      buildingNumber: str(a.buildingNumber),
      flatNumber: str(a.flatNumber),
      subStreet: str(a.subStreet),
    })),
    documents: docs.map((d) => ({
      type: String(d.idDocType ?? 'OTHER'),
      country: str(d.country),
      number: str(d.number),
      issuedDate: str(d.issuedDate),
      validUntil: str(d.validUntil),
    })),
    review: {
      id: str(raw.review?.reviewId) ?? (raw.review?.attemptCnt != null ? `attempt-${raw.review.attemptCnt}` : null),
      status: str(raw.review?.reviewStatus),
      answer,
      rejectLabels: Array.isArray(result.rejectLabels) ? result.rejectLabels.map(String) : [],
      reviewRejectType: str(result.reviewRejectType),
      moderationComment: str(result.moderationComment),
    },
  };
}
