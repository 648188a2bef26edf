// What the crash tests share: the API in the test process, the provider simulator with our account,
// a webhook receiver, and a worker in a process of its own that the test kills and starts again.
// `crashRig()` registers the suite's before/after hooks; read the parts inside a test.
import { after, before } from 'node:test';
import { startProviderSim, type ProviderSim } from '../../provider-sim/server.ts';
import type { SimClient } from '../../provider-sim/state.ts';
import { start, type Running } from './processes.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { startStack, workerEnvFor, type Stack } from './stack.ts';

export type CrashRig = {
  stack: Stack;
  sim: ProviderSim;
  /** Our account at the simulator. */
  us: SimClient;
  receiver: Receiver;
  /** Starts the worker process (the last one started is SIGKILLed after the suite). */
  startWorker(): Running;
};

export function crashRig(
  options: {
    /** The API's settings, over WEBHOOK_ALLOW_INSECURE_URLS=true. */
    env?: Record<string, string>;
    /** The worker's settings, over WEBHOOK_ALLOW_INSECURE_URLS=true. */
    workerEnv?: Record<string, string>;
    /** Our account's settings at the simulator (callbacks, limits), given the API. */
    account?: (stack: Stack) => Partial<SimClient>;
  } = {},
): CrashRig {
  const parts: Partial<CrashRig> = {};
  let worker: Running | undefined;
  const rig = {
    get stack() {
      return parts.stack!;
    },
    get sim() {
      return parts.sim!;
    },
    get us() {
      return parts.us!;
    },
    get receiver() {
      return parts.receiver!;
    },
    startWorker() {
      const { stack, sim, us } = rig;
      worker = start(
        'worker.ts',
        [],
        // info: its "worker polling" line says when it is ready (waitFor)
        workerEnvFor(
          stack,
          { url: sim.url, appToken: us.appToken, secretKey: us.secretKey },
          { WEBHOOK_ALLOW_INSECURE_URLS: 'true', LOG_LEVEL: 'info', ...options.workerEnv },
        ),
      );
      return worker;
    },
  };
  before(async () => {
    parts.stack = await startStack({ env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', ...options.env } });
    parts.sim = await startProviderSim();
    parts.us = parts.sim.state.addClient({ ...options.account?.(parts.stack), clientId: 'vouch' });
    parts.receiver = await startReceiver();
  });
  after(async () => {
    await worker?.stop('SIGKILL');
    await parts.receiver?.close();
    await parts.sim?.close();
    await parts.stack?.close();
  });
  return rig;
}
