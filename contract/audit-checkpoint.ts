// The audit checkpoint workflow (workflows/audit-checkpoint.ts) and the Temporal Schedule that runs
// it every AUDIT_CHECKPOINT_EVERY_MINUTES (temporal/schedules.ts): each run signs the audit chain
// head of every business that moved since its last checkpoint and stores it outside the database.
export const AUDIT_CHECKPOINT_SCHEDULE_ID = 'vouch-audit-checkpoints';

export type AuditCheckpointResult = { checkpoints: number };
