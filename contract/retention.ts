// The retention workflow (workflows/retention.ts): one per sealed record, a durable timer to the end
// of its retention period, then the purge (issue 21).
import { defineSignal } from '@temporalio/workflow';

export const retentionWorkflowId = (entityId: string) => `retention-${entityId}`;
export type RetentionInput = { entityId: string };

/** What the purge step found: the record purged now, gone already, or when to look again (null: not before a hold is released). */
export type RetentionStep = { done: true; purged: boolean } | { done: false; at: string | null };

export type RetentionResult = { purged: boolean };

/** A legal hold on the record was placed or released: look again now. */
export const retentionHoldChangedSignal = defineSignal('retentionHoldChanged');

/** The longest a retention workflow sleeps before it looks again (a lost hold signal costs no more). */
export const RETENTION_RECHECK_MS = 30 * 86_400_000;
