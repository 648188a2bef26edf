// What a worker process loads of the deployment's secrets: what its roles use (runtime/secrets-by-role.ts)
// and nothing else, each ring kept current as a rotation reaches it (refreshRings).
import type { SigningKey } from '../domain/webhook-signature.ts';
import type { IdentityProvider } from '../provider/types.ts';
import { loadCodecKeys, type CodecKey } from './codec-keys.ts';
import type { Config } from './config.ts';
import { createProvider, noProvider } from './provider.ts';
import { workerUses } from './secrets-by-role.ts';
import { loadSigningRing, refreshRings, ringVariable, type RingKind } from './signing-keys.ts';

export type WorkerSecrets = {
  provider: IdentityProvider;
  /** The delivery rings (empty without the webhooks role) and the payload codec ring, which opens subscriptions' secrets. */
  webhookKeys: { signature: SigningKey[]; standard: SigningKey[]; sealing: CodecKey[] };
  /** The ring that signs audit checkpoints (empty without the general role). */
  checkpointKeys: SigningKey[];
  rings: { stop(): void };
};

export async function loadWorkerSecrets(config: Config, log: NonNullable<Parameters<typeof refreshRings>[2]>['log']): Promise<WorkerSecrets> {
  const roles = config.temporal.workerRoles;
  const uses = (name: string) => workerUses(roles, name);
  /** A ring this worker's roles sign with (by its variable's name in the table), else none. */
  const ring = async (kind: RingKind) => (uses(ringVariable(kind)) ? await loadSigningRing(config, kind) : []);
  const webhookKeys = { signature: await ring('webhook'), standard: await ring('standard-webhook'), sealing: await loadCodecKeys(config) };
  const checkpointKeys = await ring('audit-checkpoint');
  const provider = uses('PROVIDER_SECRET_KEY') ? createProvider(config) : noProvider();
  // a rotation reaches this worker within a minute, and a ring rolling over never stops it signing
  const loaded = { webhook: webhookKeys.signature, 'standard-webhook': webhookKeys.standard, 'audit-checkpoint': checkpointKeys };
  const rings = refreshRings(config, Object.fromEntries(Object.entries(loaded).filter(([, r]) => r.length > 0)), { log });
  return { provider, webhookKeys, checkpointKeys, rings };
}
