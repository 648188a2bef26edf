// The steps of onboarding one shared applicant, for batch rows and sync requests alike. Each step
// is idempotent (store/share-records.ts), so Temporal may retry any of them. The workflow passes
// only a reference to the record: share tokens and identity data stay in PostgreSQL, out of
// workflow histories.
import { decide } from '../domain/reliance.ts';
import { recordError, type ImportErrorCategory } from '../domain/import-errors.ts';
import type { IdentityProvider } from '../provider/types.ts';
import type { Db } from '../store/db.ts';
import { cardProcessorTokenHolder, resolveEntityRef } from '../store/entities.ts';
import { completeRecord, failRecord, loadShareRecord, setRecordEntity, setRecordImported, shareRefKey, type CompleteResult, type ShareRef } from '../store/share-records.ts';
import { once } from './provider.ts';

export type ShareDeps = { db: Db; provider: IdentityProvider; defaultLevel: string };

export type Prepared = { outcome: 'ready' } | { outcome: 'done' } | { outcome: 'failed'; category: ImportErrorCategory };

/** General queue: resolve the entity and check the card processor token before spending the share token. */
export function createShareActivities(deps: ShareDeps) {
  const { db } = deps;
  return {
    async prepareShare(ref: ShareRef): Promise<Prepared> {
      const rec = await loadShareRecord(db, ref);
      if (rec.status !== 'pending') return { outcome: 'done' };
      const entityId = rec.entityId ?? (await resolveEntityRef(db, rec.businessId, rec.externalId));
      if (!entityId) {
        await failRecord(db, ref, recordError('ENTITY_NOT_FOUND'));
        return { outcome: 'failed', category: 'ENTITY_NOT_FOUND' };
      }
      if (rec.cardProcessorPublicToken) {
        const holder = await cardProcessorTokenHolder(db, rec.businessId, rec.cardProcessorPublicToken);
        if (holder && holder !== entityId) {
          await failRecord(db, ref, recordError('CARD_PROCESSOR_TOKEN_INVALID'));
          return { outcome: 'failed', category: 'CARD_PROCESSOR_TOKEN_INVALID' };
        }
      }
      if (!rec.entityId) await setRecordEntity(db, ref, entityId);
      return { outcome: 'ready' };
    },

    async completeShare(ref: ShareRef): Promise<CompleteResult> {
      return completeRecord(db, ref, deps.provider.name, new Date());
    },

    async failShare(ref: ShareRef, category: ImportErrorCategory): Promise<void> {
      await failRecord(db, ref, recordError(category));
    },
  };
}

/**
 * Provider queue: one provider request per attempt. importShared spends the share token and takes
 * the reliance decision on the data that came back; findImportedApplicant recovers an import whose
 * answer was lost (the worker died, or the answer timed out) by the externalUserId we gave it.
 */
export function createShareProviderActivities(deps: ShareDeps) {
  const { db, provider } = deps;
  const keep = async (ref: ShareRef, applicant: Awaited<ReturnType<IdentityProvider['getApplicant']>>) => {
    await setRecordImported(db, ref, applicant.id, decide(applicant, new Date()));
  };
  return {
    async importShared(ref: ShareRef): Promise<void> {
      const rec = await loadShareRecord(db, ref);
      if (rec.status !== 'pending' || rec.applicantId) return;
      const applicant = await once(() =>
        provider.importApplicant({ shareToken: rec.shareToken, levelName: rec.applicantLevel ?? deps.defaultLevel, externalUserId: shareRefKey(ref) }),
      );
      await keep(ref, applicant);
    },

    async findImportedApplicant(ref: ShareRef): Promise<boolean> {
      const rec = await loadShareRecord(db, ref);
      if (rec.applicantId) return true;
      const applicant = await once(() => provider.findApplicantByExternalUserId(shareRefKey(ref)));
      if (!applicant) return false;
      await keep(ref, applicant);
      return true;
    },
  };
}
