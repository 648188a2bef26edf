// Reviews arriving for people verified through the hosted SDK while the worker process is killed
// with SIGKILL and restarted: every person gets exactly one decision and one event, and the client
// receives each decision.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { sdkUserId } from '../../contract/person-verification.ts';
import { createSumsubClient } from '../../provider/sumsub/client.ts';
import { scenarioApplicant } from '../../provider-sim/scenarios.ts';
import { crashRig } from '../helpers/crash-rig.ts';
import { eventually, subscribe } from '../helpers/world.ts';

const PEOPLE = 60;

describe('a worker killed while reviews arrive (hosted SDK)', () => {
  const secret = `crash-${randomUUID()}`;
  const rig = crashRig({
    env: { PROVIDER_WEBHOOK_SECRET: secret, API_RATE_LIMIT_PER_SECOND: '1000' },
    workerEnv: { PROVIDER_RATE_LIMIT_PER_SECOND: '100' },
    account: (stack) => ({ webhookSecret: secret, webhookUrl: `${stack.url}/provider-webhooks/sumsub`, limits: { postPer5s: 1_000_000, getPer5s: 1_000_000 } }),
  });

  it('decides every review exactly once across SIGKILL and a restart', async () => {
    const { stack, sim, us, receiver } = rig;
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'SDK crash' });
    await subscribe(stack, key, receiver.url);
    let worker = rig.startWorker();
    const people: string[] = [];
    for (let i = 0; i < PEOPLE; i++) {
      people.push((await stack.request('POST', '/entity', { key, json: { externalId: `crash-person-${i}`, type: 'INDIVIDUAL' } })).body.id);
    }
    const tokens = await Promise.all(people.map((id) => stack.request('POST', `/entity/${id}/kyc`, { key })));
    assert.deepEqual([...new Set(tokens.map((t) => t.status))], [200]);

    // slow applicant reads keep decisions in flight when the worker dies
    sim.state.faults = { ...sim.state.faults, latencyMs: 400, pathPattern: '/resources/applicants/[^/]+/one' };
    const reviewer = createSumsubClient({ baseUrl: sim.url, appToken: us.appToken, secretKey: us.secretKey });
    const eventCount = async () => (await stack.db.query('SELECT 1 FROM events WHERE business_id = $1', [businessId])).length;
    for (const id of people) {
      const { info } = scenarioApplicant('complete', Date.now());
      const applicant = sim.state.addApplicant({
        clientId: us.clientId,
        externalUserId: sdkUserId(id),
        levelName: us.defaultLevel,
        info,
        fixedInfo: {},
        review: null,
      });
      await reviewer.completeSandboxReview(applicant.id, { reviewAnswer: 'GREEN' });
    }
    await eventually('ten decided', async () => (await eventCount()) >= 10, { everyMs: 20 });
    await worker.stop('SIGKILL');
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
    const heard = () => new Set(receiver.received.map((r) => JSON.parse(r.body.toString()).data.entityId)).size;
    await eventually('the client heard of every decision', () => heard() >= PEOPLE, { everyMs: 100, state: heard });
    assert.equal(heard(), PEOPLE, 'the client heard of every decision, each person once');
    await worker.stop('SIGTERM');
  });
});
