// Who is acting, for the audit log: set once where work enters a process (an API request after its
// key is checked, a provider callback, a download link, an activity of a workflow run, a CLI
// command) and read by every audit entry written below it, however deep. AsyncLocalStorage carries
// it across awaits, so no store function takes it as a parameter.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AuditActor } from '../domain/audit-chain.ts';

export type ActingAs = { actor: AuditActor; requestId: string | null };

const acting = new AsyncLocalStorage<ActingAs>();
let fallback: ActingAs = { actor: { type: 'system', id: 'unattributed' }, requestId: null };

/** Runs fn with actor as the one acting (and the request id, when there is one). */
export function actAs<T>(actor: AuditActor, requestId: string | null, fn: () => T): T {
  return acting.run({ actor, requestId }, fn);
}

/** Who acts outside any actAs in this process (its role: `system:worker`, `system:api`, …). */
export function setProcessActor(actor: AuditActor): void {
  fallback = { actor, requestId: null };
}

export const actingNow = (): ActingAs => acting.getStore() ?? fallback;
