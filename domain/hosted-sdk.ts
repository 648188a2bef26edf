// The hosted-SDK path's rules: how long an SDK token lives, and the decision on a person the
// identity provider reviewed — its RED answer stands as given; a GREEN one still needs the data a
// card needs, by the same rules as token sharing (reliance.ts), so every path asks the same of a person.
import { decide, type Decision, type SharedIdentity } from './reliance.ts';

/** How long an SDK token lets the person's browser or app talk to the provider. */
export const SDK_TOKEN_TTL_SECONDS = 1800;

export type ReviewedPerson = SharedIdentity & {
  review: { answer: 'GREEN' | 'RED' | null; rejectLabels: string[]; reviewRejectType: string | null; moderationComment: string | null };
};

/** The decision, or null while the provider has not finished its review. */
export function decideProviderReview(person: ReviewedPerson, now: Date): Decision | null {
  const { review } = person;
  if (review.answer === null) return null;
  if (review.answer === 'GREEN') return decide(person, now);
  return {
    status: 'REJECTED',
    rejectLabels: review.rejectLabels,
    reviewRejectType: review.reviewRejectType === 'FINAL' ? 'FINAL' : 'RETRY',
    moderationComment: review.moderationComment ?? 'The identity provider did not approve the verification.',
  };
}
