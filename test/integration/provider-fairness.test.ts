// A business's small batch is not queued behind another business's large one on the rate-limited
// provider queue (issue 18). Every run of a business carries the business as its Temporal fairness
// key (runtime/starters.ts; its activities inherit it, across continue-as-new), and the task queue
// hands out tasks to the keys with work waiting in turn. Business A's batch keeps 100 imports
// queued; business B's 10 rows, uploaded while A's runs, are done after a couple of dozen more of
// A's — first come, first served, they waited for A's queued work before them (about 50 rows at
// these settings). Counted in rows, not seconds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bulkEntities, bulkTokens } from '../helpers/bulk.ts';
import { csvOf, upload, waitForBatch } from '../helpers/imports.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

describe('the provider queue shared fairly between businesses', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ workers: true, env: { PROVIDER_RATE_LIMIT_PER_SECOND: '40', BATCH_CONCURRENCY: '100', BATCH_PAGE_SIZE: '200', API_RATE_LIMIT_PER_SECOND: '100000' } });
    stack.sim!.state.updateClient(stack.recipient!.clientId, { limits: { postPer5s: 1e9, getPer5s: 1e9 } });
  });
  after(() => stack.close());

  async function fixture(label: string, rows: number) {
    const { apiKey, businessId } = await stack.newBusiness({ name: label });
    const ids = Array.from({ length: rows }, (_, i) => `${label}-${i}`);
    await bulkEntities(stack.db, businessId, ids);
    const tokens = bulkTokens(stack.sim!, `${label}-donor`, stack.recipient!.clientId, ids.map(() => 'complete'));
    return { apiKey, csv: csvOf('externalId,shareToken', ids.map((e, i) => [e, tokens[i]!])) };
  }
  const doneOf = async (batchId: string) =>
    Number((await stack.db.query<{ n: string }>("SELECT count(*) AS n FROM import_records WHERE batch_id = $1 AND status <> 'pending'", [batchId]))[0]!.n);

  it("does B's 10 rows after a couple of dozen of A's, not behind all of A's queued work", async () => {
    const a = await fixture('fair-a', 600);
    const b = await fixture('fair-b', 10);
    const big = await upload(stack, a.apiKey, a.csv);
    assert.equal(big.status, 201, big.text);
    while ((await doneOf(big.body.batchId)) < 120) await new Promise((r) => setTimeout(r, 50)); // A's queue is full and past a continue-as-new
    const small = await upload(stack, b.apiKey, b.csv);
    assert.equal(small.status, 201, small.text);
    const aAtUpload = await doneOf(big.body.batchId);
    while ((await doneOf(small.body.batchId)) < 10) await new Promise((r) => setTimeout(r, 20));
    const aMeanwhile = (await doneOf(big.body.batchId)) - aAtUpload;
    process.stdout.write(`# A finished ${aMeanwhile} rows while B's 10 rows were done\n`);
    assert.ok(aMeanwhile < 35, `A finished ${aMeanwhile} rows while B's 10 waited (first come, first served: about 50)`);
    assert.equal((await waitForBatch(stack, b.apiKey, small.body.batchId)).summary.successfulRecords, 10);
    await waitForBatch(stack, a.apiKey, big.body.batchId, 120_000);
  });
});
