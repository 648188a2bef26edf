// Retention and legal holds from the admin CLI (issue 21):
//   vouch retention set --business ID --years N|none    the business's policy (admin)
//   vouch retention report [--business ID]               every sealed record and when it will be purged
//   vouch hold add --entity ID --reason TEXT [--until DATE] | hold list [--entity ID] [--business ID] [--all] | hold release --hold ID
// A hold placed or released on a sealed record wakes its retention workflow to look again; if
// Temporal does not answer, the workflow looks again within RETENTION_RECHECK_MS anyway.
import { MAX_RETENTION_YEARS } from '../../domain/retention.ts';
import type { Config } from '../../runtime/config.ts';
import { actingNow } from '../../store/audit-actor.ts';
import { recordAudit } from '../../store/audit-log.ts';
import type { Db } from '../../store/db.ts';
import { addHold, listHolds, recordBusiness, releaseHold, sealedRecords, setRetentionPolicy } from '../../store/retention.ts';
import { connectClient } from '../../temporal/connection.ts';
import { createStarters } from '../../temporal/starters.ts';
import { operatorSeat, UsageError, withDatabase, type CliCommand } from '../command.ts';
import { UUID } from '../../domain/ids.ts';

const uuidOption = (values: Record<string, unknown>, name: string, required: boolean): string | undefined => {
  const v = values[name];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || !UUID.test(v)) throw new UsageError(`--${name} must be an id (UUID)`);
  return v;
};

/** Wakes the record's retention workflow, when it is sealed; says whether Temporal took it. */
async function wake(config: Config, db: Db, entityId: string): Promise<'woken' | 'not sealed' | string> {
  const record = await recordBusiness(db, entityId);
  if (!record?.sealed) return 'not sealed';
  try {
    const client = await connectClient(config);
    try {
      await createStarters(client, config).retentionHoldChanged(entityId, record.businessId);
      return 'woken';
    } finally {
      await client.connection.close();
    }
  } catch (err) {
    return `not woken (${(err as Error).message}); it looks again on its own within 30 days`;
  }
}

export const retentionSet: CliCommand = {
  name: 'retention set',
  usage: `  vouch retention set --business ID --years N|none   the business's retention policy for deletions from now on: none (the spec's
                                                        irreversible delete, the default) or N years (1-${MAX_RETENTION_YEARS}) after the relationship ends`,
  options: { years: { type: 'string' } },
  actsAs: 'admin_cli',
  async run({ values, config }) {
    const businessId = uuidOption(values, 'business', true)!;
    const years = values.years;
    if (years !== 'none' && !(typeof years === 'string' && /^\d{1,3}$/.test(years) && Number(years) >= 1 && Number(years) <= MAX_RETENTION_YEARS))
      throw new UsageError(`--years must be none or a whole number of years from 1 to ${MAX_RETENTION_YEARS}`);
    const policy = years === 'none' ? null : { years: Number(years) };
    return withDatabase(config, async (db) => {
      if (!(await setRetentionPolicy(db, businessId, policy))) throw new UsageError(`no business ${businessId}`);
      return { businessId, retention: policy ? { years: policy.years } : 'none' };
    });
  },
};

export const retentionReport: CliCommand = {
  name: 'retention report',
  usage: `  vouch retention report [--business ID]              every sealed record, soonest purge first: sealed at, purge after, holds,
                                                        and when it will be purged (null while an open-ended hold binds it)`,
  actsAs: 'operator',
  async run({ values, config }) {
    const businessId = uuidOption(values, 'business', false);
    return withDatabase(config, async (db) => ({ at: new Date().toISOString(), sealed: await sealedRecords(db, new Date(), businessId) }));
  },
};

export const holdAdd: CliCommand = {
  name: 'hold add',
  usage: `  vouch hold add --entity ID --reason TEXT [--until ISO_DATE]
                                                        a legal hold: the record is kept (sealed, not purged) while it binds`,
  options: { entity: { type: 'string' }, reason: { type: 'string' }, until: { type: 'string' } },
  actsAs: 'operator',
  async run({ values, config }) {
    const entityId = uuidOption(values, 'entity', true)!;
    const reason = typeof values.reason === 'string' ? values.reason.trim() : '';
    if (!reason || reason.length > 2000) throw new UsageError('--reason is required (1 to 2000 characters): why the record must be kept');
    let until: Date | null = null;
    if (values.until !== undefined) {
      until = new Date(String(values.until));
      if (Number.isNaN(until.getTime()) || until.getTime() <= Date.now()) throw new UsageError('--until must be an ISO 8601 date in the future');
    }
    return withDatabase(config, async (db) => {
      const hold = await addHold(db, { entityId, reason, until, by: actingNow().actor.id });
      if (!hold) throw new UsageError(`no record of entity ${entityId} (never, or purged)`);
      return { hold, retentionWorkflow: await wake(config, db, entityId) };
    });
  },
};

export const holdList: CliCommand = {
  name: 'hold list',
  usage: '  vouch hold list [--entity ID] [--business ID] [--all]  holds that bind (with --all, released ones too)',
  options: { all: { type: 'boolean' } },
  actsAs: 'operator',
  async run({ values, config }) {
    const entityId = uuidOption(values, 'entity', false);
    const businessId = uuidOption(values, 'business', false);
    return withDatabase(config, async (db) => {
      const holds = await listHolds(db, { ...(entityId ? { entityId } : {}), ...(businessId ? { businessId } : {}), all: values.all === true });
      // a hold's reason is an operator's text about a person: each one read is in the record before it is printed (issue 37)
      const details = { command: 'hold list' };
      await db.tx(async (tx) => {
        for (const h of holds)
          recordAudit(tx, {
            businessId: h.businessId,
            action: 'operator.read',
            entityId: h.entityId,
            subject: { type: 'legal_hold', id: h.id },
            details,
            keyed: operatorSeat(),
          });
      });
      return { holds };
    });
  },
};

export const holdRelease: CliCommand = {
  name: 'hold release',
  usage: '  vouch hold release --hold ID                        releases a hold; the record is purged when nothing else keeps it',
  options: { hold: { type: 'string' } },
  actsAs: 'operator',
  async run({ values, config }) {
    const holdId = uuidOption(values, 'hold', true)!;
    return withDatabase(config, async (db) => {
      const hold = await releaseHold(db, holdId, actingNow().actor.id);
      if (!hold) throw new UsageError(`no binding hold ${holdId}`);
      return { hold, retentionWorkflow: await wake(config, db, hold.entityId) };
    });
  },
};
