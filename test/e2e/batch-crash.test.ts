// A batch whose worker process is killed with SIGKILL mid-run and restarted: every record is
// imported exactly once at the provider, and the batch completes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { verifyChain, type AuditEntry } from '../../domain/audit-chain.ts';
import type { Scenario } from '../../provider-sim/scenarios.ts';
import { chainHead, chainOf } from '../../store/audit-log.ts';
import { bulkEntities, bulkTokens } from '../helpers/bulk.ts';
import { csvOf, upload, waitForBatch } from '../helpers/imports.ts';
import { crashRig } from '../helpers/crash-rig.ts';
import { eventually } from '../helpers/eventually.ts';

describe('a worker killed in the middle of a batch', () => {
  const rig = crashRig({ workerEnv: { PROVIDER_RATE_LIMIT_PER_SECOND: '100' }, account: () => ({ limits: { postPer5s: 1_000_000, getPer5s: 1_000_000 } }) });

  it('resumes after SIGKILL and a restart, and imports every record exactly once', async () => {
    const { stack, sim, us } = rig;
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'Crash' });
    const externalIds = Array.from({ length: 300 }, (_, i) => `crash-${i}`);
    await bulkEntities(stack.db, businessId, externalIds);
    const tokens = bulkTokens(
      sim,
      'crash-donor',
      us.clientId,
      externalIds.map((): Scenario => 'complete'),
    );
    // slow answers keep many imports in flight, so the kill loses answers the provider already acted on
    sim.state.faults = { ...sim.state.faults, latencyMs: 400, pathPattern: 'reusableIdentity' };
    let worker = rig.startWorker();
    await worker.waitFor(/"msg":"worker polling"/);
    const res = await upload(
      stack,
      key,
      csvOf(
        'externalId,shareToken',
        externalIds.map((e, i) => [e, tokens[i]!]),
      ),
    );
    assert.equal(res.status, 201, res.text);
    // kill once 60 are done and while the provider holds imports it will carry out after the kill:
    // their answers are lost, so the new worker must recover them without importing twice
    await eventually(
      '60 records processed, imports held by the provider',
      async () =>
        (await stack.request('GET', `/entity/kyc/import/batch/${res.body.batchId}`, { key })).body.processedRecords >= 60 && sim.state.stats.delayed > 0,
      { timeoutMs: 120_000, everyMs: 10 },
    );
    await worker.stop('SIGKILL');
    const inFlightAtKill = Object.values(sim.state.stats.imports).filter((s) => s.attempts > 0).length;
    await new Promise((r) => setTimeout(r, 1000)); // let the simulator finish the requests it had
    worker = rig.startWorker();
    const status = await waitForBatch(stack, key, res.body.batchId, 180_000);
    await worker.stop('SIGTERM');

    assert.equal(status.status, 'completed', JSON.stringify(status).slice(0, 500));
    assert.equal(status.summary.successfulRecords, 300, JSON.stringify(status.summary.errors.slice(0, 3)));
    assert.equal(status.failedRecords, 0);
    for (const token of tokens) assert.equal(sim.state.stats.imports[token]?.succeeded, 1, 'each share token imported exactly once');
    const recovered = tokens.filter((t) => sim.state.stats.imports[t]!.attempts > 1).length;
    assert.ok(recovered > 0, `answers lost in the crash were recovered (${recovered}; ${inFlightAtKill} had been attempted at the kill)`);
    const [accounts] = await stack.db.query<{ n: string; distinct_entities: string }>(
      'SELECT count(*) AS n, count(DISTINCT k.entity_id) AS distinct_entities FROM kyc_accounts k' +
        ' JOIN entities e ON e.id = k.entity_id WHERE e.business_id = $1',
      [businessId],
    );
    assert.deepEqual([Number(accounts!.n), Number(accounts!.distinct_entities)], [300, 300]);
    const [events] = await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE business_id = $1', [businessId]);
    assert.equal(Number(events!.n), 300);
    // the audit log: each decision recorded once, and the chain whole — entries the killed worker
    // committed but had not linked yet are linked by the processes that live on (their sweep)
    const unlinked = async () =>
      Number((await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM audit_pending WHERE business_id = $1', [businessId]))[0]!.n);
    await eventually('every entry linked without a reader asking', async () => (await unlinked()) === 0, { everyMs: 100, state: unlinked });
    const [decided] = await stack.db.query<{ n: string; entities: string }>(
      "SELECT count(*) AS n, count(DISTINCT entity_id) AS entities FROM audit_log WHERE business_id = $1 AND action = 'decision.recorded'",
      [businessId],
    );
    assert.deepEqual([Number(decided!.n), Number(decided!.entities)], [300, 300]);
    const entries: AuditEntry[] = [];
    for await (const e of chainOf(stack.db, businessId)) entries.push(e);
    assert.equal(verifyChain(entries, await chainHead(stack.db, businessId)), null, 'the chain is whole');
  });
});
