// The universal-KYC workflow (workflows/universal-kyc.ts) and its messages.
import { defineQuery, defineSignal } from '@temporalio/workflow';

/**
 * One workflow per universal KYC submission: it waits, durably, until the submission has its KYC
 * data and an identity document file (signal `ukycPartReceived` wakes it to look) or until its
 * deadline, then settles it — decided, or decided as incomplete.
 */
export const universalKycWorkflowId = (submissionId: string) => `universal-kyc-${submissionId}`;
export type UniversalKycInput = { submissionId: string; entityId: string; deadlineAt: string };
export type UniversalKycResult = { outcome: string; status?: string };

/** Which part arrived (the workflow reads the submission itself; no personal data here). */
export type UkycPartReceived = { part: 'data' | 'file' };
export type UkycProgress = { stage: 'waiting' | 'settling' | 'settled'; deadlineAt: string; wakeUps: number };

/** Signal `ukycPartReceived`: the KYC data or a document file arrived; look again. */
export const ukycPartReceivedSignal = defineSignal<[UkycPartReceived]>('ukycPartReceived');
/** Query `progress`. */
export const ukycProgressQuery = defineQuery<UkycProgress>('progress');

/** What starting or waking a submission's workflow needs: its input, and its business for the run's tags. */
export type UkycSubmissionRun = UniversalKycInput & { businessId: string };
