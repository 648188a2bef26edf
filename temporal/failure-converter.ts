// Failures' messages and stack traces go through the payload codec too (issue 40): the failure
// converter moves them into `encodedAttributes`, which the codec encrypts, so Temporal stores
// "Encoded failure" in clear and nothing a failure said (a provider's answer, a person's field in
// an error) can be read from its history without the ring. The workflow bundle carries this module
// (worker.ts, temporal/replay.ts) and every client and worker names it in its data converter
// (temporal/payload-codec.ts); the Temporal UI shows the message through the codec endpoint.
// Failures recorded before keep their message in clear and read as before.
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
