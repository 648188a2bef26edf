// `vouch audit verify [--business ID]`: walks every business's audit chain (or one) and reports the
// first entry that was changed, removed, reordered or cut off (domain/audit-chain.ts), holding each
// chain against every signed checkpoint of it (from the file store and the database, each checked
// by its signature): a chain rewritten after a checkpoint by someone with the database's own
// credentials fails, naming the checkpoint. Exit code 1 when a chain is broken or a checkpoint
// cannot be trusted. It prints each chain's head (seq and hash).
// `vouch audit checkpoint [--business ID]`: signs and stores the head of every business (or one)
// that moved since its last checkpoint now, as the schedule does every AUDIT_CHECKPOINT_EVERY_MINUTES.
import { signingKeyAt } from '../../domain/webhook-signature.ts';
import { createFileStore } from '../../runtime/file-store.ts';
import { loadCheckpointPublicKeys, loadSigningRing } from '../../runtime/signing-keys.ts';
import { linkAll, linkNow } from '../../store/audit-chainer.ts';
import { checkpointsOf, writeCheckpoints } from '../../store/audit-checkpoints.ts';
import { chainedBusinesses } from '../../store/audit-log.ts';
import { verifyChainOf } from '../../store/audit-verify.ts';
import { UsageError, withDatabase, type CliCommand } from '../command.ts';
import { UUID } from '../../domain/ids.ts';

const businessOption = (values: Record<string, unknown>): string | undefined => {
  const only = values.business as string | undefined;
  if (only !== undefined && !UUID.test(only)) throw new UsageError('--business must be a business id (UUID)');
  return only;
};

export const auditVerify: CliCommand = {
  name: 'audit verify',
  usage: `  vouch audit verify [--business BUSINESS_ID]         check every business's audit chain (or one's) against itself and its signed
                                                        checkpoints; names the first entry changed, removed, reordered or cut off, or
                                                        the checkpoint a rewritten chain no longer matches; exit code 1 if any`,
  actsAs: 'admin_cli',
  async run({ values, config }) {
    const only = businessOption(values);
    // the checkpoints' public keys (AUDIT_CHECKPOINT_PUBLIC_KEYS, else the ring's halves); none here: no checkpoint can be trusted
    const ring = await loadCheckpointPublicKeys(config).catch(() => []);
    const documents = createFileStore(config);
    return withDatabase(config, async (db) => {
      // entries committed but not linked yet (a moment's work of the chainer) are linked before the walk
      await (only ? linkNow(db, only) : linkAll(db));
      const businesses = only ? [only] : await chainedBusinesses(db);
      const chains = [];
      for (const businessId of businesses) {
        const found = await checkpointsOf(db, documents, businessId, ring);
        const verdict = await verifyChainOf(db, businessId, found.attested);
        const intact = verdict.intact && found.problems.length === 0;
        chains.push({
          ...verdict,
          intact,
          checkpoints: { attested: found.attested.length, inFileStore: found.inStore, inDatabase: found.inDatabase },
          ...(found.problems.length ? { checkpointProblems: found.problems } : {}),
        });
      }
      if (chains.some((c) => !c.intact)) process.exitCode = 1;
      return { intact: chains.every((c) => c.intact), chains };
    });
  },
};

export const auditCheckpoint: CliCommand = {
  name: 'audit checkpoint',
  usage: `  vouch audit checkpoint [--business BUSINESS_ID]     sign and store now the audit chain head of every business (or one) that moved
                                                        since its last checkpoint (the schedule does it every AUDIT_CHECKPOINT_EVERY_MINUTES)`,
  actsAs: 'admin_cli',
  async run({ values, config }) {
    const only = businessOption(values);
    const now = new Date();
    const key = signingKeyAt(await loadSigningRing(config, 'audit-checkpoint', now), now); // refuses to start without a valid key
    const documents = createFileStore(config);
    return withDatabase(config, async (db) => ({ checkpoints: await writeCheckpoints(db, documents, key, now, only) }));
  },
};
