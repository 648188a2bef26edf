// The universal-KYB workflow (workflows/universal-kyb.ts) and its messages: one signal per reason
// to look again.
import { defineQuery, defineSignal } from '@temporalio/workflow';

/**
 * One workflow per universal KYB submission: it waits, durably, until every owner declared at
 * submission has a KYC decision (each decision signals it to look again; it also looks again every
 * KYB_RECHECK_MS in case a signal was lost) or until its deadline, then settles it once. A change
 * to the profile supersedes a waiting submission: its workflow ends without a decision.
 */
export const universalKybWorkflowId = (submissionId: string) => `universal-kyb-${submissionId}`;
export type UniversalKybInput = { submissionId: string; entityId: string; deadlineAt: string };
export type UniversalKybResult = { outcome: string; status?: string };
export type KybProgress = { stage: 'waiting' | 'settling' | 'settled' | 'ended'; deadlineAt: string; owners: number; ownersDecided: number; wakeUps: number };
/** How often a waiting KYB submission looks again without being woken. */
export const KYB_RECHECK_MS = 5 * 60_000;

/** An owner of the submission has a new KYC decision (ids only). */
export type KybOwnerDecided = { ownerEntityId: string };
/**
 * Signal `kybOwnerDecided`. Until release 1.0.3 every reason to look travelled on this one name as
 * `{ reason, … }`; such payloads still wake the workflow (it reads the state itself, never the payload).
 */
export const kybOwnerDecidedSignal = defineSignal<[KybOwnerDecided]>('kybOwnerDecided');
/** Signal `kybProfileChanged`: the business's profile changed; a waiting submission is superseded. */
export const kybProfileChangedSignal = defineSignal<[]>('kybProfileChanged');
/** Signal `kybRecheck`: the reconciler found the submission overdue for a look (a lost wake). */
export const kybRecheckSignal = defineSignal<[]>('kybRecheck');
/** Query `progress`. */
export const kybProgressQuery = defineQuery<KybProgress>('progress');

/** What starting or waking a submission's workflow needs: its input, and its business for the run's tags. */
export type KybSubmissionRun = UniversalKybInput & { businessId: string };
