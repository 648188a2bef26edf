// What a worker process polls (WORKER_ROLES): each role is one task queue. A fleet runs them apart so
// each is sized on its own — provider-bound work, webhook deliveries and the rest (docs/operations.md, "Running
// a fleet"); one process may run all four (`npm start`, `npm run start:worker` by default).
import { z } from 'zod';
import type { Config } from './config.ts';

export const WORKER_ROLE_NAMES = ['general', 'sync', 'provider', 'webhooks'] as const;
export type WorkerRole = (typeof WORKER_ROLE_NAMES)[number];

/** `general,sync` → ['general', 'sync']: known names only, each once, at least one. */
export const workerRoles = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((r) => r.trim())
      .filter(Boolean),
  )
  .pipe(
    z
      .array(z.enum(WORKER_ROLE_NAMES, { message: `each role one of ${WORKER_ROLE_NAMES.join(', ')}` }))
      .min(1, 'at least one role')
      .refine((roles) => new Set(roles).size === roles.length, 'each role once'),
  );

/** Every role but the provider's polls workflow tasks (and so loads the workflow code). */
export const runsWorkflows = (role: WorkerRole): boolean => role !== 'provider';

/** The task queue a role polls, by the process's settings: the one place that pairs them. */
export function taskQueueOf(config: Config, role: WorkerRole): string {
  const t = config.temporal;
  return { general: t.taskQueue, sync: t.syncTaskQueue, provider: t.providerTaskQueue, webhooks: config.webhooks.taskQueue }[role];
}
