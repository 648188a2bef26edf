// Signs and stores the audit chain head of every business that moved since its last checkpoint
// (store/audit-checkpoints.ts), once per schedule interval. One step: a failure is retried, and the
// next run signs whatever this one did not.
import { proxyActivities } from '@temporalio/workflow';
import type { AuditCheckpointResult } from '../contract/audit-checkpoint.ts';
import type { GeneralActivities } from '../activities/index.ts';

const a = proxyActivities<GeneralActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 5, initialInterval: '10 seconds' },
});

export async function auditCheckpointWorkflow(): Promise<AuditCheckpointResult> {
  return { checkpoints: await a.writeAuditCheckpoints() };
}
