// Onboarding one shared applicant, for batch rows and sync requests alike. processShare does a
// record's whole way in one activity — resolve the entity, check the card processor token, import
// with the share token (the one provider request), decide, onboard — and every part of it is
// idempotent (store/share-records.ts), so Temporal may retry it at any point. The workflow passes
// only a reference to the record: share tokens and identity data stay in PostgreSQL, out of
// workflow histories. The decision's webhook deliveries are created with it (store/events.ts) and
// sent by the dispatcher, so no webhook work happens inside the rate-limited provider activity.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { recordError, categoryOfProviderKind, type ImportErrorCategory } from '../domain/import-errors.ts';
import { decide } from '../domain/reliance.ts';
import { cardProcessorTokenTaken } from '../domain/share-fields.ts';
import { verifiedPersonOf } from '../domain/verified-person.ts';
import { ProviderError } from '../provider/errors.ts';
import type { IdentityProvider, ProviderApplicant } from '../provider/types.ts';
import type { Db } from '../store/db.ts';
import { cardProcessorTokenHolder, resolveEntityRef } from '../store/entities.ts';
import { keepPersonData } from '../store/verified-persons.ts';
import { loadShareRecord, setRecordEntity, setRecordImported, shareRefKey, type ShareRecord } from '../store/share-records.ts';
import { beforeImport, completeRecord, failRecord } from '../onboarding/share-records.ts';
import type { ShareRef } from '../contract/share-record.ts';
import { LOOKUP_PENDING_FAILURE, RECOVER_LOOKUP_MAX_ATTEMPTS } from '../contract/share-record.ts';
import { providerCall, toActivityFailure } from './provider.ts';
import { countRecord } from './activity-metrics.ts';

export type ShareDeps = {
  db: Db;
  provider: IdentityProvider;
  defaultLevel: string;
  /** Called once a person's decision is committed (wakes KYB submissions naming the person). */
  personDecided?: (entityId: string) => Promise<void>;
};

export type ShareOutcome =
  /** Onboarded — now, or by an earlier attempt whose answer was lost (the stored outcome). */
  | { outcome: 'succeeded' }
  | { outcome: 'failed'; category: ImportErrorCategory }
  /** The batch was canceled (or failed) before this row started: left unprocessed. */
  | { outcome: 'skipped' }
  /** The provider says the token was used; recoverShare finds out whether by us. */
  | { outcome: 'token_used' };

/** The outcome a finished record stored, so a retried or repeated attempt answers the same. */
function storedOutcome(rec: ShareRecord): ShareOutcome {
  if (rec.status === 'succeeded') return { outcome: 'succeeded' };
  return { outcome: 'failed', category: rec.errorCategory ?? 'PROVIDER_REJECTED_REQUEST' };
}

const stopped = (rec: ShareRecord) => rec.batchStatus === 'canceled' || rec.batchStatus === 'failed';

export function createShareActivities(deps: ShareDeps) {
  const { db, provider } = deps;

  const fail = async (ref: ShareRef, category: ImportErrorCategory): Promise<ShareOutcome> => {
    if (await failRecord(db, ref, recordError(category))) countRecord(ref, 'failed', category);
    return { outcome: 'failed', category };
  };

  /**
   * Keeps the applicant's data and decides; an entity deleted while its applicant was imported
   * (the token is spent by then) fails the record as ENTITY_NOT_FOUND, for good: nothing of the
   * person is kept, and a retry could only spend another token on an entity that is gone.
   */
  const onboard = async (ref: ShareRef, entityId: string, applicant: ProviderApplicant | null): Promise<ShareOutcome> => {
    if (applicant) {
      if (!(await keepPersonData(db, entityId, provider.name, applicant.id, verifiedPersonOf(applicant)))) return fail(ref, 'ENTITY_NOT_FOUND');
      await setRecordImported(db, ref, applicant.id, decide(applicant, new Date()));
    }
    const done = await completeRecord(db, ref, provider.name, new Date());
    if (done.outcome === 'failed') {
      countRecord(ref, 'failed', done.error.category);
      return { outcome: 'failed', category: done.error.category };
    }
    if (done.outcome === 'already-done') return storedOutcome(await loadShareRecord(db, ref));
    countRecord(ref, 'succeeded');
    await deps.personDecided?.(done.entityId);
    return { outcome: 'succeeded' };
  };

  return {
    /** Provider queue: at most one provider request per attempt. */
    async processShare(ref: ShareRef): Promise<ShareOutcome> {
      const rec = await loadShareRecord(db, ref);
      if (rec.status !== 'pending') return storedOutcome(rec);
      // A canceled batch starts no more rows, even if the cancel never reached its workflow.
      if (stopped(rec) && !rec.applicantId) return { outcome: 'skipped' };
      const entityId = rec.entityId ?? (await resolveEntityRef(db, rec.businessId, rec.externalId));
      if (!entityId) return fail(ref, 'ENTITY_NOT_FOUND');
      if (rec.cardProcessorPublicToken) {
        // checked before the share token is spent; completeRecord checks again under a unique index
        const taken = cardProcessorTokenTaken(entityId, await cardProcessorTokenHolder(db, rec.businessId, rec.cardProcessorPublicToken));
        if (taken) return fail(ref, taken.category);
      }
      if (rec.applicantId) {
        if (!rec.entityId) await setRecordEntity(db, ref, entityId);
        return onboard(ref, entityId, null); // imported by an earlier attempt
      }
      // one statement: the entity, and the import request about to be sent; an entity deleted since
      // it was resolved (or by an earlier attempt) spends no share token on a person to be forgotten
      if (!(await beforeImport(db, ref, rec.businessId, entityId))) {
        const now = await loadShareRecord(db, ref);
        return now.status === 'pending' ? fail(ref, 'ENTITY_NOT_FOUND') : storedOutcome(now);
      }
      let applicant: ProviderApplicant;
      try {
        applicant = await provider.importApplicant({
          shareToken: rec.shareToken,
          levelName: rec.applicantLevel ?? deps.defaultLevel,
          externalUserId: shareRefKey(ref),
        });
      } catch (err) {
        if (err instanceof ProviderError) {
          if (err.kind === 'token_used') return { outcome: 'token_used' };
          const category = categoryOfProviderKind(err.kind);
          if (!err.retryable && category !== 'RUN_LEVEL') return fail(ref, category);
        }
        throw toActivityFailure(err); // retryable: Temporal retries; our credentials refused: the run stops
      }
      return onboard(ref, entityId, applicant);
    },

    /**
     * Provider queue: after "token already used". If an earlier attempt of ours used the token and
     * its answer was lost (worker killed, timeout), the applicant exists under our externalUserId:
     * then the record succeeds. The provider may not list a just-imported applicant at once, so
     * when an earlier import request of ours exists, a miss is retried (RECOVER_LOOKUP_MAX_ATTEMPTS
     * look-ups with backoff, about 30 s) before we conclude that someone else used the token; when
     * the request that heard "already used" was our first, one look-up decides.
     */
    async recoverShare(ref: ShareRef): Promise<ShareOutcome> {
      const rec = await loadShareRecord(db, ref);
      if (rec.status !== 'pending') return storedOutcome(rec);
      // an import request of ours was sent, so beforeImport recorded the entity
      const entityId = rec.entityId;
      if (!entityId) return fail(ref, 'ENTITY_NOT_FOUND');
      if (rec.applicantId) return onboard(ref, entityId, null);
      const applicant = await providerCall(() => provider.findApplicantByExternalUserId(shareRefKey(ref)));
      if (applicant) return onboard(ref, entityId, applicant);
      if (rec.importAttempts > 1 && Context.current().info.attempt < RECOVER_LOOKUP_MAX_ATTEMPTS) {
        throw ApplicationFailure.create({ type: LOOKUP_PENDING_FAILURE, message: 'the applicant imported with this token is not listed yet; looking again' });
      }
      return fail(ref, 'TOKEN_ALREADY_USED');
    },

    /** General queue: a record whose provider call kept failing until the retries ran out. */
    async failShare(ref: ShareRef, category: ImportErrorCategory): Promise<void> {
      await fail(ref, category);
    },
  };
}
