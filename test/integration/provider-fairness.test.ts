// A business's small batch is not queued behind another business's large one on the rate-limited
// provider queue (issue 18). Every provider call carries its business as its Temporal fairness key
// (contract/provider-queue.ts providerPriority), and the task queue hands out the calls of the
// businesses with calls waiting in turn. Business A's batch keeps 50 calls queued at the spec's 10
// a second; business B's 10 rows, uploaded while A's runs, reach the provider interleaved with A's,
// one for one — first come, first served, they came as one block after all of A's queued calls.
// And waiting callers do not starve batches: while business A's sync imports keep the provider at
// its cap, business C's batch gets its turns (its lane and A's sync lane in turn); with a strict
// priority for sync calls it got none until A's stopped.
// The order of the calls at the provider is what is checked, not their timing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bulkEntities, bulkTokens } from '../helpers/bulk.ts';
import { csvOf, upload, waitForBatch } from '../helpers/imports.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

describe('the provider queue shared fairly between businesses', () => {
  let stack: Stack;
  before(async () => {
    // at the spec's cap the queue, not this machine, is what holds calls back, however busy the
    // machine is (at 40/s a loaded run fell behind the cap: no backlog, nothing to be fair about)
    stack = await startStack({
      workers: true,
      env: {
        PROVIDER_RATE_LIMIT_PER_SECOND: '10',
        BATCH_CONCURRENCY: '50',
        BATCH_PAGE_SIZE: '20',
        API_RATE_LIMIT_PER_SECOND: '100000',
        SYNC_IMPORT_RATE_LIMIT_PER_SECOND: '100000', // one business's sync imports alone fill the provider
      },
    });
    stack.sim!.state.updateClient(stack.recipient!.clientId, { limits: { postPer5s: 1e9, getPer5s: 1e9 } });
  });
  after(() => stack.close());

  async function fixture(label: string, rows: number) {
    const { apiKey, businessId } = await stack.newBusiness({ name: label });
    const ids = Array.from({ length: rows }, (_, i) => `${label}-${i}`);
    await bulkEntities(stack.db, businessId, ids);
    const tokens = bulkTokens(
      stack.sim!,
      `${label}-donor`,
      stack.recipient!.clientId,
      ids.map(() => 'complete'),
    );
    return {
      apiKey,
      rows: ids.map((e, i) => ({ externalId: e, shareToken: tokens[i]! })),
      csv: csvOf(
        'externalId,shareToken',
        ids.map((e, i) => [e, tokens[i]!]),
      ),
    };
  }
  const doneOf = async (batchId: string) =>
    Number((await stack.db.query<{ n: string }>("SELECT count(*) AS n FROM import_records WHERE batch_id = $1 AND status <> 'pending'", [batchId]))[0]!.n);

  it("interleaves B's 10 calls with A's, one for one, instead of queueing them behind A's", async () => {
    const a = await fixture('fair-a', 200);
    const b = await fixture('fair-b', 10);
    const bTokens = new Set(
      b.csv
        .split('\n')
        .slice(1)
        .map((l) => l.split(',')[1])
        .filter(Boolean),
    );
    // the order in which the provider receives the imports, by business
    const calls: ('A' | 'B')[] = [];
    const state = stack.sim!.state;
    const importStats = state.importStats.bind(state);
    state.importStats = (token: string) => {
      calls.push(bTokens.has(token) ? 'B' : 'A');
      return importStats(token);
    };
    const big = await upload(stack, a.apiKey, a.csv);
    assert.equal(big.status, 201, big.text);
    // A's queue is full and past a continue-as-new
    await eventually("30 of A's records done", async () => (await doneOf(big.body.batchId)) >= 30, { timeoutMs: 60_000 });
    const from = calls.length;
    const small = await upload(stack, b.apiKey, b.csv);
    assert.equal(small.status, 201, small.text);
    assert.equal((await waitForBatch(stack, b.apiKey, small.body.batchId)).summary.successfulRecords, 10);
    const after = calls.slice(from).join('');
    const [first, last] = [after.indexOf('B'), after.lastIndexOf('B')];
    const aBetween = after.slice(first, last + 1).replaceAll('B', '').length;
    process.stdout.write(`# calls after B's upload: ${after.slice(0, last + 10)}\n`);
    assert.equal(after.split('B').length - 1, 10, "each of B's rows called the provider once");
    assert.ok(aBetween >= 3, `B's calls came as a block behind A's (${aBetween} of A's among them): ${after.slice(0, last + 1)}`);
    assert.equal((await stack.request('POST', `/entity/kyc/import/batch/${big.body.batchId}/cancel`, { key: a.apiKey })).status, 200);
  });

  it("gives a batch its turns while another business's sync imports keep the provider at its cap", async () => {
    const a = await fixture('flood-a', 300);
    const c = await fixture('flood-c', 10);
    const cTokens = new Set(c.rows.map((r) => r.shareToken));
    const calls: ('A' | 'C')[] = [];
    const state = stack.sim!.state;
    const importStats = state.importStats.bind(state);
    state.importStats = (token: string) => {
      calls.push(cTokens.has(token) ? 'C' : 'A');
      return importStats(token);
    };
    // A keeps 15 sync imports waiting until C's batch is done: the provider at its cap, all of it waiting callers
    let flooding = true;
    const answers: number[] = [];
    const rows = [...a.rows];
    const caller = async () => {
      while (flooding && rows.length) {
        const res = await stack.request('POST', '/entity/kyc/import/sync', { key: a.apiKey, json: rows.shift() });
        answers.push(res.status);
      }
    };
    const flood = Promise.all(Array.from({ length: 15 }, caller));
    try {
      await eventually('the flood under way (ten calls)', () => calls.length >= 10, { everyMs: 20 });
      const batch = await upload(stack, c.apiKey, c.csv);
      assert.equal(batch.status, 201, batch.text);
      assert.equal((await waitForBatch(stack, c.apiKey, batch.body.batchId)).summary.successfulRecords, 10);
    } finally {
      flooding = false;
      await flood;
    }
    assert.ok(rows.length > 0, 'the flood lasted until the batch was done');
    assert.deepEqual(
      answers.filter((x) => x !== 200),
      [],
      'every sync import answered 200',
    );
    const order = calls.join('');
    process.stdout.write(`# calls: ${order}\n`);
    assert.equal(order.split('C').length - 1, 10, "each of C's rows called the provider once");
    const [first, last] = [order.indexOf('C'), order.lastIndexOf('C')];
    assert.ok(last < order.lastIndexOf('A'), `A's sync imports went on after C's last call: ${order}`);
    // in turn: between C's first and last calls, about one of A's for each of C's (and the few a worker held already)
    const aBetween = order.slice(first, last + 1).replaceAll('C', '').length;
    assert.ok(aBetween <= 20, `C's calls came in turn with A's (${aBetween} of A's among them): ${order}`);
  });
});
