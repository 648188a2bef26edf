// The moment a provider request leaves. The fleet-wide pace (activities/provider-pace.ts) counts a
// call against the provider's cap from just after its request was handed to the operating system;
// the client that makes the request is the only one that sees that moment, so the pace runs the call
// under a notice and the client gives it. A client that gives none is counted from when its call
// ends, later than it left: never too early.
import { AsyncLocalStorage } from 'node:async_hooks';

const notice = new AsyncLocalStorage<() => void>();

/** Runs `call` so that the provider client can say, through sentNotice(), when its request left. */
export function withSendNotice<T>(onSent: () => void, call: () => Promise<T>): Promise<T> {
  return notice.run(onSent, call);
}

/** Read when a request starts (in the call's own context): what to call once the request has left. */
export function sentNotice(): () => void {
  return notice.getStore() ?? (() => {});
}
