// A worker killed with SIGKILL in the middle of a purge (issue 21). The purge is one transaction:
// here it has locked the record, queued its files' bytes and begun deleting it when the worker
// dies; PostgreSQL rolls it back, the record is still whole, and the worker started again finishes
// the purge — the record gone, exactly one entity.purged audit entry, nothing done twice.
// The moment is made certain, not guessed: the test holds a lock on a row the purge's delete must
// reach (one of the entity's requirements), so the purge waits there until the worker is dead.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addHold } from '../../store/retention.ts';
import { crashRig } from '../helpers/crash-rig.ts';
import { eventually } from '../helpers/eventually.ts';

const waitFor = (what: string, check: () => Promise<boolean>, ms = 60_000) => eventually(what, check, { timeoutMs: ms });

describe('a worker killed during a purge', () => {
  const rig = crashRig({ env: { API_RATE_LIMIT_PER_SECOND: '10000' } });

  it('leaves the record whole, and the restarted worker purges it once', async () => {
    const { stack } = rig;
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'Purge crash' });
    let worker = rig.startWorker();
    const created = await stack.request('POST', '/entity', {
      key,
      json: { externalId: 'purge-crash', type: 'BUSINESS', requirements: [{ requirementSlug: 'kyb-legal-name', value: 'Purge Crash Ltd' }] },
    });
    assert.equal(created.status, 201, created.text);
    const entityId = created.body.id as string;
    // no retention policy: a hold that ends in four seconds seals the delete and sets the purge then
    assert.ok(await addHold(stack.db, { entityId, reason: 'crash test', until: new Date(Date.now() + 4000), by: 'test' }));
    assert.equal((await stack.request('DELETE', `/entity/${entityId}`, { key })).status, 204);

    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const holding = stack.db.tx(async (q) => {
      await q.query('SELECT 1 FROM record_entity_requirements WHERE entity_id = $1 FOR UPDATE', [entityId]);
      await released;
    });
    // the purge has begun: its delete waits on our lock, its earlier statements done
    await waitFor('the purge to wait on the lock', async () => {
      const rows = await stack.db.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM entity_records%'");
      return rows.length > 0;
    });
    await worker.stop('SIGKILL');
    release();
    await holding;
    // the dead worker's transaction ends without its COMMIT: rolled back
    await waitFor(
      'the killed purge to end',
      async () => (await stack.db.query(`SELECT 1 FROM pg_stat_activity WHERE state <> 'idle' AND query LIKE 'DELETE FROM entity_records%'`)).length === 0,
    );
    const kept = await stack.db.query('SELECT 1 FROM entity_records WHERE id = $1', [entityId]);
    assert.equal(kept.length, 1, 'the record is whole after the kill');
    const purgedEntries = async () =>
      // linked or still waiting for its link (one statement: an entry is in exactly one of the two)
      (
        await stack.db.query(
          `SELECT 1 FROM audit_log WHERE business_id = $1 AND entity_id = $2 AND action = 'entity.purged'
            UNION ALL SELECT 1 FROM audit_pending WHERE business_id = $1 AND entity_id = $2 AND action = 'entity.purged'`,
          [businessId, entityId],
        )
      ).length;
    assert.equal(await purgedEntries(), 0, 'no purge recorded for the rolled-back attempt');

    worker = rig.startWorker();
    await waitFor(
      'the purge after the restart',
      async () => (await stack.db.query('SELECT 1 FROM entity_records WHERE id = $1', [entityId])).length === 0,
      120_000,
    );
    assert.equal(await purgedEntries(), 1, 'exactly one entity.purged entry');
    const left = await stack.db.query('SELECT 1 FROM record_entity_requirements WHERE entity_id = $1', [entityId]);
    assert.equal(left.length, 0, 'every piece of the record went with it');
    await worker.stop('SIGTERM');
  });
});
