// Keeps the run's VouchStatus search attribute current, so operators filter runs by stage in the
// Temporal UI and CLI. Only for runs that started with one (our starters always give one): a run
// started otherwise — before this, by hand, or on a server without the attribute registered — is
// left as it began, since upserting an attribute the namespace does not know fails every workflow
// task. Behind a patch (contract/patches.ts: vouchStatus, deprecated since 1.0.3).
import { deprecatePatch, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { PATCHES } from '../contract/patches.ts';
import { SEARCH_ATTRIBUTE_KEYS, type VouchStatus } from '../contract/run-tags.ts';

export function setVouchStatus(status: VouchStatus): void {
  if (workflowInfo().typedSearchAttributes.get(SEARCH_ATTRIBUTE_KEYS.vouchStatus) === undefined) return;
  deprecatePatch(PATCHES.vouchStatus.id);
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTE_KEYS.vouchStatus, value: status }]);
}
