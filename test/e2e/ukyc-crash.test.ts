// Universal KYC submissions completing while the worker process is killed with SIGKILL and
// restarted: every person gets exactly one decision, one event and one KYC account, every
// submission is settled, and the client receives each decision.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crashRig } from '../helpers/crash-rig.ts';
import { canonicalPayload, FILES, filesForm } from '../helpers/ukyc.ts';
import { entity, eventually, subscribe } from '../helpers/world.ts';

const PEOPLE = 60;

describe('a worker killed while universal KYC submissions complete', () => {
  const rig = crashRig({ env: { API_RATE_LIMIT_PER_SECOND: '1000' } });

  it('settles every submission exactly once across SIGKILL and a restart', async () => {
    const { stack, receiver } = rig;
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'UKYC crash' });
    await subscribe(stack, key, receiver.url);
    let worker = rig.startWorker();
    const people: string[] = [];
    for (let i = 0; i < PEOPLE; i++) {
      const id = await entity(stack, key, `ukyc-crash-${i}`);
      const res = await stack.request('POST', `/entity/${id}/requirement`, {
        key,
        json: { requirementSlug: 'ukyc-canonical-kyc-data', value: JSON.stringify(canonicalPayload()) },
      });
      assert.equal(res.status, 201, res.text);
      people.push(id);
    }
    const eventCount = async () => (await stack.db.query('SELECT 1 FROM events WHERE business_id = $1', [businessId])).length;
    const uploads = people.map(async (id) => {
      const res = await stack.request('POST', `/entity/${id}/requirement-slug/ukyc-id-document/upload`, {
        key,
        form: filesForm([{ bytes: FILES.pdf, name: 'passport.pdf' }]),
      });
      assert.equal(res.status, 201, res.text);
    });
    await eventually('five decided', async () => (await eventCount()) >= 5, { everyMs: 10 });
    await worker.stop('SIGKILL');
    await Promise.all(uploads); // the API records and signals without the worker
    const atKill = await eventCount();
    assert.ok(atKill < PEOPLE, `work was left when the worker died (${atKill} of ${PEOPLE} decided)`);
    await new Promise((r) => setTimeout(r, 1000));
    worker = rig.startWorker();
    await eventually('every person decided', async () => (await eventCount()) >= PEOPLE, { timeoutMs: 120_000, everyMs: 100, state: eventCount });
    await new Promise((r) => setTimeout(r, 1000)); // room for a decision that would come twice

    const perEntity = await stack.db.query<{ entity_id: string; n: string }>(
      'SELECT entity_id, count(*) AS n FROM events WHERE business_id = $1 GROUP BY entity_id',
      [businessId],
    );
    assert.equal(perEntity.length, PEOPLE, 'every person decided');
    assert.deepEqual([...new Set(perEntity.map((r) => Number(r.n)))], [1], 'each exactly once');
    const accounts = await stack.db.query('SELECT k.decision FROM kyc_accounts k JOIN entities e ON e.id = k.entity_id WHERE e.business_id = $1', [businessId]);
    assert.deepEqual([accounts.length, [...new Set(accounts.map((a) => a.decision))]], [PEOPLE, ['APPROVED']]);
    const submissions = await stack.db.query<{ status: string }>('SELECT status FROM ukyc_submissions WHERE business_id = $1', [businessId]);
    assert.deepEqual([submissions.length, [...new Set(submissions.map((s) => s.status))]], [PEOPLE, ['decided']]);
    const heard = () => new Set(receiver.received.map((r) => JSON.parse(r.body.toString()).data.entityId)).size;
    await eventually('the client heard of every decision', () => heard() >= PEOPLE, { everyMs: 100, state: heard });
    assert.equal(heard(), PEOPLE, 'the client heard of every decision, each person once');
    await worker.stop('SIGTERM');
  });
});
