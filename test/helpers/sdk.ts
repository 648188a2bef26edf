// The person's side of the hosted-SDK path, played against the simulator: what the provider's SDK
// leaves behind (an applicant under our user id, not yet reviewed), and the sandbox reviewer.
import { sdkUserId } from '../../contract/person-verification.ts';
import { createSumsubClient, type SumsubClient } from '../../provider/sumsub/client.ts';
import { scenarioApplicant } from '../../provider-sim/scenarios.ts';
import type { Stack } from './stack.ts';

/** The applicant the person creates by going through the SDK: complete data, no review yet. */
export function personFillsInSdk(stack: Stack, entityId: string) {
  const { info } = scenarioApplicant('complete', Date.now());
  return stack.sim!.state.addApplicant({
    clientId: stack.recipient!.clientId,
    externalUserId: sdkUserId(entityId),
    levelName: stack.recipient!.defaultLevel,
    info,
    fixedInfo: {},
    review: null,
  });
}

/** Our provider account's API client (the reviewer's testCompleted, among others). */
export function providerAccount(stack: Stack): SumsubClient {
  const r = stack.recipient!;
  return createSumsubClient({ baseUrl: stack.sim!.url, appToken: r.appToken, secretKey: r.secretKey });
}
