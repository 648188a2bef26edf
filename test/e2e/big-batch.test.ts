// A big batch end to end against the simulator, with a mix of outcomes: 1,500 rows (three pages of 500,
// so the run continues as new twice); BIG_BATCH_ROWS=5000 for the interface's limit, which
// bench/token-sharing.ts measures at the provider's pace (a file of exactly 5,000 rows is accepted:
// test/integration/batch-upload.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Scenario } from '../../provider-sim/scenarios.ts';
import { bulkEntities, bulkTokens } from '../helpers/bulk.ts';
import { csvOf, upload, waitForBatch } from '../helpers/imports.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

const ROWS = Number(process.env.BIG_BATCH_ROWS ?? 1500);
const PAGE = 500;

describe(`a ${ROWS.toLocaleString('en')}-row batch with a mix of outcomes`, () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ workers: true, env: { PROVIDER_RATE_LIMIT_PER_SECOND: '2000', BATCH_CONCURRENCY: '100' } });
    stack.sim!.state.updateClient(stack.recipient!.clientId, { limits: { postPer5s: 1_000_000, getPer5s: 1_000_000 } });
  });
  after(() => stack.close());

  it('processes every row: each onboarded (some REJECTED by the reliance rules) or failed for good, counted once', async () => {
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'Big batch' });
    const externalIds = Array.from({ length: ROWS }, (_, i) => `big-${i}`);
    const withEntity = ROWS - 20;
    await bulkEntities(stack.db, businessId, externalIds.slice(0, withEntity)); // the last 20 have no entity
    const scenarios: Scenario[] = externalIds.map((_, i) => (i % 100 === 7 ? 'missing-address' : i % 250 === 3 ? 'donor-rejected' : 'complete'));
    const tokens = bulkTokens(stack.sim!, 'big-donor', stack.recipient!.clientId, scenarios);
    const res = await upload(
      stack,
      key,
      csvOf(
        'externalId,shareToken',
        externalIds.map((e, i) => [e, tokens[i]!]),
      ),
    );
    assert.equal(res.status, 201, res.text);
    const status = await waitForBatch(stack, key, res.body.batchId, 600_000);
    const refused = scenarios.filter((s, i) => s === 'donor-rejected' && i < withEntity).length;
    assert.equal(status.status, 'completed');
    assert.equal(status.processedRecords, ROWS);
    assert.equal(status.failedRecords, 20 + refused);
    assert.equal(status.summary.successfulRecords, withEntity - refused);
    const categories = status.summary.errors.reduce(
      (acc: Record<string, number>, e: any) => ({ ...acc, [e.errorDetail.category]: (acc[e.errorDetail.category] ?? 0) + 1 }),
      {},
    );
    assert.deepEqual(categories, { APPLICANT_DATA_REFUSED: refused, ENTITY_NOT_FOUND: 20 });
    const [decisions] = await stack.db.query<{ approved: string; rejected: string }>(
      "SELECT count(*) FILTER (WHERE decision = 'APPROVED') AS approved, count(*) FILTER (WHERE " +
        "decision = 'REJECTED') AS rejected FROM kyc_accounts k JOIN entities e ON e.id = " +
        'k.entity_id WHERE e.business_id = $1',
      [businessId],
    );
    const noAddress = scenarios.filter((s, i) => s === 'missing-address' && i < withEntity).length;
    assert.deepEqual([Number(decisions!.approved), Number(decisions!.rejected)], [withEntity - refused - noAddress, noAddress]);
    const [events] = await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE business_id = $1', [businessId]);
    assert.equal(Number(events!.n), withEntity - refused);
    // one workflow run per page: history stays small
    const runs = await stack.temporal.workflow.count(`WorkflowId = "batch-import-${res.body.batchId}"`);
    assert.ok(runs.count >= Math.ceil(ROWS / PAGE), `${runs.count} runs (continue-as-new per page of ${PAGE})`);
  });
});
