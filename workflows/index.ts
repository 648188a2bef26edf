// Every workflow the worker runs. The bundler starts here; keep this file to re-exports (and the versioning table).
export { batchImportWorkflow } from './batch-import.ts';
export { requirementBatchWorkflow } from './requirement-batch.ts';
export { housekeepingWorkflow } from './housekeeping.ts';
export { syncImportWorkflow } from './sync-import.ts';
export { webhookDispatcherWorkflow } from './webhook-dispatcher.ts';
export { webhookRetryWorkflow } from './webhook-retry.ts';
export { personVerificationWorkflow } from './person-verification.ts';
export { sandboxReviewWorkflow } from './sandbox-review.ts';
export { universalKycWorkflow } from './universal-kyc.ts';
export { universalKybWorkflow } from './universal-kyb.ts';
export { retentionWorkflow } from './retention.ts';
export { auditCheckpointWorkflow } from './audit-checkpoint.ts';
// each one's versioning behaviour (pinned or auto-upgrade), set where the worker loads them
import './versioning.ts';
