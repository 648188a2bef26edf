// Keeps the run's VouchStatus search attribute current, so operators filter runs by stage in the
// Temporal UI and CLI. Only for runs that started with one (our starters always give one): a run
// started otherwise — before this, by hand, or on a server without the attribute registered — is
// left as it began, since upserting an attribute the namespace does not know fails every workflow
// task. Behind a patch: histories recorded before workflows did this replay as they were.
import { patched, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { SEARCH_ATTRIBUTE_KEYS, VOUCH_STATUS_PATCH, type VouchStatus } from '../contract/workflows.ts';

export function setVouchStatus(status: VouchStatus): void {
  if (workflowInfo().typedSearchAttributes.get(SEARCH_ATTRIBUTE_KEYS.vouchStatus) === undefined) return;
  if (patched(VOUCH_STATUS_PATCH)) upsertSearchAttributes([{ key: SEARCH_ATTRIBUTE_KEYS.vouchStatus, value: status }]);
}
