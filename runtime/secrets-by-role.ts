// Which secrets each process of a deployment holds: only what it uses (issue 40), so a leaked pod
// gives away its own keys and no others — the webhook workers, which dial tenants' URLs, hold no
// file-link secret, no provider credentials and no private key of the API's rings. One table:
// worker.ts loads by it (loadWorkerSecrets), deploy/kubernetes mounts exactly it
// (test/unit/kubernetes.test.ts), docs/operations.md prints it (`npm run docs:config`), and each
// process starts with its entries alone outside the sandbox (test/e2e/processes.test.ts).
import { WORKER_ROLE_NAMES, type WorkerRole } from './worker-roles.ts';

/** `required`: the process refuses to start without it (outside the sandbox); `optional`: it starts, and that part stays closed or unused. */
export type SecretNeeds = { required: readonly string[]; optional: readonly string[] };

/** Every process that works on the record: PostgreSQL as the service's role, the payload codec ring, Temporal Cloud's key, its /metrics token. */
const EVERY_PROCESS: SecretNeeds = { required: ['DATABASE_URL', 'PAYLOAD_CODEC_KEYS'], optional: ['TEMPORAL_API_KEY', 'METRICS_TOKEN'] };

/** Object storage's credentials, where no cloud role is bound to the pods: whoever reads or writes files. */
const S3_CREDENTIALS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];

/** What each worker role adds (runtime/worker-roles.ts). */
export const WORKER_ROLE_SECRETS: Record<WorkerRole, SecretNeeds> = {
  // housekeeping signs the audit chain's checkpoints and keeps them, purges files, reconciles
  general: { required: ['AUDIT_CHECKPOINT_KEYS'], optional: S3_CREDENTIALS },
  sync: { required: [], optional: [] },
  // every call to the identity provider runs on the provider queue
  provider: { required: ['PROVIDER_BASE_URL', 'PROVIDER_APP_TOKEN', 'PROVIDER_SECRET_KEY'], optional: [] },
  // deliveries are signed with both rings; subscriptions' secrets are opened with the payload codec ring
  webhooks: { required: ['WEBHOOK_SIGNING_KEYS', 'STANDARD_WEBHOOK_KEYS'], optional: [] },
};

/**
 * The API signs payloads and download links and decodes payloads for the Temporal UI; of the rings
 * the workers sign with it holds the public keys alone, which it publishes.
 */
export const API_SECRETS: SecretNeeds = {
  required: [
    ...EVERY_PROCESS.required,
    'SIGNED_PAYLOAD_KEYS',
    'FILE_LINK_SECRET',
    'WEBHOOK_SIGNING_PUBLIC_KEYS',
    'STANDARD_WEBHOOK_PUBLIC_KEYS',
    'AUDIT_CHECKPOINT_PUBLIC_KEYS',
  ],
  optional: [...EVERY_PROCESS.optional, 'CODEC_ACCESS_TOKEN', 'PROVIDER_WEBHOOK_SECRET', ...S3_CREDENTIALS],
};

/** `vouch temporal-setup` (the search attributes): Temporal alone. */
export const TEMPORAL_SETUP_SECRETS: SecretNeeds = { required: [], optional: ['TEMPORAL_API_KEY'] };

/** A worker process running these roles: every process's secrets and each role's, each once. */
export function workerSecrets(roles: readonly WorkerRole[]): SecretNeeds {
  const ordered = WORKER_ROLE_NAMES.filter((r) => roles.includes(r));
  const required = [...new Set([...EVERY_PROCESS.required, ...ordered.flatMap((r) => WORKER_ROLE_SECRETS[r].required)])];
  const optional = [...new Set([...EVERY_PROCESS.optional, ...ordered.flatMap((r) => WORKER_ROLE_SECRETS[r].optional)])].filter((n) => !required.includes(n));
  return { required, optional };
}

/** Whether a worker with these roles uses the secret (worker.ts loads nothing else). */
export const workerUses = (roles: readonly WorkerRole[], name: string): boolean => {
  const needs = workerSecrets(roles);
  return needs.required.includes(name) || needs.optional.includes(name);
};
