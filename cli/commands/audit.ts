// `vouch audit verify [--business ID]`: walks every business's audit chain (or one) and reports the
// first entry that was changed, removed, reordered or cut off (domain/audit-chain.ts). Exit code 1
// when a chain is broken. It prints each chain's head (seq and hash): kept somewhere else (a ticket,
// a notary, the evidence bundles), a head also proves that no one rewrote the whole chain after it.
import { linkAll, linkNow } from '../../store/audit-chainer.ts';
import { chainedBusinesses } from '../../store/audit-log.ts';
import { verifyChainOf } from '../../store/audit-verify.ts';
import { UsageError, withDatabase, type CliCommand } from '../command.ts';
import { UUID } from '../../domain/ids.ts';

export const auditVerify: CliCommand = {
  name: 'audit verify',
  usage: `  vouch audit verify [--business BUSINESS_ID]         check every business's audit chain (or one's); names the first entry
                                                        changed, removed, reordered or cut off; exit code 1 if any`,
  actsAs: 'admin_cli',
  async run({ values, config }) {
    const only = values.business as string | undefined;
    if (only !== undefined && !UUID.test(only)) throw new UsageError('--business must be a business id (UUID)');
    return withDatabase(config, async (db) => {
      // entries committed but not linked yet (a moment's work of the chainer) are linked before the walk
      await (only ? linkNow(db, only) : linkAll(db));
      const businesses = only ? [only] : await chainedBusinesses(db);
      const chains = [];
      for (const businessId of businesses) chains.push(await verifyChainOf(db, businessId));
      if (chains.some((c) => !c.intact)) process.exitCode = 1;
      return { intact: chains.every((c) => c.intact), chains };
    });
  },
};
