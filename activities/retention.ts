// The retention workflow's step (purge a sealed record when its time has come) and the reconciler's
// part: every sealed record past its date has its retention workflow, even if the start after its
// seal was lost (a process killed between the commit and the start).
import type { Logger } from 'pino';
import type { RetentionStep } from '../contract/retention.ts';
import { removeAll, type FileStore } from '../files/file-store.ts';
import type { Db } from '../store/db.ts';
import { forgetBytes } from '../store/files.ts';
import { purgeIfDue, sealedPastDue } from '../store/retention.ts';

export type RetentionDeps = {
  db: Db;
  log: Logger;
  files: FileStore;
  start: { retention(entityId: string, businessId: string): Promise<void> };
};

export function createRetentionActivities(deps: RetentionDeps) {
  return {
    /**
     * Purges the record if it may go at `at` — the workflow's time, so a purge is never earlier than
     * its timer says (one transaction; its bytes then, or by housekeeping) — else says when to look again.
     */
    async retentionStep(entityId: string, at: string): Promise<RetentionStep> {
      const step = await purgeIfDue(deps.db, entityId, new Date(at));
      if (step.purged) {
        const { removed, failed } = await removeAll(deps.files, step.keys);
        for (const { err } of failed) deps.log.warn({ err }, 'purged record: file bytes not removed yet; housekeeping removes them');
        await forgetBytes(deps.db, removed);
        return { done: true, purged: true };
      }
      if (step.gone) return { done: true, purged: false };
      return { done: false, at: step.at?.toISOString() ?? null };
    },

    /** Starts (or joins) the retention workflow of every sealed record past its date; returns how many. */
    async reconcileRetention(): Promise<number> {
      const due = await sealedPastDue(deps.db, new Date());
      for (const r of due) await deps.start.retention(r.entityId, r.businessId);
      return due.length;
    },
  };
}
