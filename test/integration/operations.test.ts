// What an operator finds in Temporal: every run carries BusinessId / BatchId / EntityId / VouchStatus
// search attributes (queried here with the real `temporal` CLI, as docs/operations.md does),
// a readable summary and details, and no personal data in any of them.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { batchWorkflowId } from '../../contract/batch-import.ts';
import { personVerificationWorkflowId } from '../../contract/person-verification.ts';
import { requireTemporalCli } from '../../dev/temporal-cli.ts';
import { bulkEntities, bulkTokens } from '../helpers/bulk.ts';
import { csvOf, upload, waitForBatch } from '../helpers/imports.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, testEnv, type Stack } from '../helpers/stack.ts';
import { entity, eventually } from '../helpers/world.ts';

const run = promisify(execFile);

describe('runs as an operator finds them', () => {
  let stack: Stack;
  let receiver: Receiver;
  before(async () => {
    stack = await startStack({ workers: true, providerCallbacks: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true' } });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await stack.close();
  });

  /** `temporal workflow list --query …` as JSON lines, waiting for visibility to catch up to `count` runs. */
  async function list(
    query: string,
    count: number,
  ): Promise<{ execution: { workflowId: string }; type: { name: string }; searchAttributes?: { indexedFields?: Record<string, { data: string }> } }[]> {
    const cli = requireTemporalCli();
    let runs: any[] = [];
    try {
      return await eventually(
        `${count} runs for ${query}`,
        async () => {
          const { stdout } = await run(cli, ['workflow', 'list', '--address', testEnv('TEMPORAL_ADDRESS'), '--query', query, '--output', 'jsonl']);
          runs = stdout
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l));
          return runs.length >= count && runs;
        },
        { timeoutMs: 10_000, everyMs: 100 },
      );
    } catch {
      return runs; // fewer: the caller's assertion says how many
    }
  }

  it("finds a batch by BatchId, a business's failed runs by BusinessId and VouchStatus, and a person's runs by EntityId", async () => {
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'Operators' });
    await stack.request('POST', '/notification', {
      key,
      json: { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: receiver.url },
    });
    await bulkEntities(stack.db, businessId, ['op-1', 'op-2']);
    const tokens = bulkTokens(stack.sim!, 'op-donor', stack.recipient!.clientId, ['complete', 'complete']);
    const res = await upload(stack, key, csvOf('externalId,shareToken', [['op-1', tokens[0]!]]));
    assert.equal(res.status, 201, res.text);
    const batchId = res.body.batchId as string;
    await waitForBatch(stack, key, batchId);

    const byBatch = await list(`BatchId='${batchId}' AND VouchStatus='completed'`, 1);
    assert.deepEqual(
      byBatch.map((r) => r.execution.workflowId),
      [batchWorkflowId(batchId)],
    );

    // a sync import refused by the provider: its run is found among the business's failed runs
    const refused = await stack.request('POST', '/entity/kyc/import/sync', { key, json: { externalId: 'op-2', shareToken: 'not-a-token' } });
    assert.equal(refused.status, 400, refused.text);
    const failed = await list(`BusinessId='${businessId}' AND VouchStatus='failed'`, 1);
    assert.deepEqual(
      failed.map((r) => r.type.name),
      ['syncImportWorkflow'],
    );

    // a person verified through the sandbox: found by EntityId, with the decision as VouchStatus
    const person = await entity(stack, key, 'op-person');
    const played = { firstName: 'Evangelina', lastName: 'Thistlewood', dob: '1979-06-21' };
    assert.equal((await stack.request('POST', `/sandbox/entity/${person}/kyc/complete`, { key, json: { reviewAnswer: 'GREEN', person: played } })).status, 202);
    const approved = await list(`EntityId='${person}' AND VouchStatus='approved'`, 1);
    assert.deepEqual(
      approved.map((r) => r.execution.workflowId),
      [personVerificationWorkflowId(person)],
    );
    const all = await list(`EntityId='${person}'`, 2);
    assert.deepEqual(all.map((r) => r.type.name).sort(), ['personVerificationWorkflow', 'sandboxReviewWorkflow']);

    // summaries and details say what a run is about, by ids only
    const described = await stack.temporal.workflow.getHandle(personVerificationWorkflowId(person)).describe();
    assert.equal(await described.staticSummary(), `Hosted-SDK verification of person ${person}`);
    assert.match((await described.staticDetails()) ?? '', new RegExp(`business ${businessId}`));
    const runs = [];
    for await (const w of stack.temporal.workflow.list({ query: `WorkflowId = '${batchWorkflowId(batchId)}'` })) runs.push(w);
    runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
    const batch = await stack.temporal.workflow.getHandle(batchWorkflowId(batchId), runs[0]!.runId).describe();
    assert.equal(await batch.staticSummary(), `Batch import ${batchId}`); // the first run's (continue-as-new carries none)
    assert.deepEqual(batch.typedSearchAttributes.get({ name: 'BusinessId', type: 'KEYWORD' }), businessId);
    // each step of a record says which record it is (an activity summary: a payload, encrypted like the rest)
    const lastRun = stack.temporal.workflow.getHandle(batchWorkflowId(batchId), runs.at(-1)!.runId);
    const firstPageRun = stack.temporal.workflow.getHandle(batchWorkflowId(batchId), runs[0]!.runId);
    const codec = stack.temporal.options.loadedDataConverter.payloadCodecs[0]!;
    const summaries: string[] = [];
    for (const h of [firstPageRun, lastRun]) {
      for (const e of (await h.fetchHistory()).events ?? []) {
        const summary = e.activityTaskScheduledEventAttributes ? e.userMetadata?.summary : undefined;
        if (summary) summaries.push(JSON.parse(new TextDecoder().decode((await codec.decode([summary as never]))[0]!.data!)));
      }
    }
    assert.ok(summaries.includes(`Import and decide row 2 of batch ${batchId}`), summaries.join(' | '));

    // no personal data: the person's names and date of birth went through Vouch (the signed payload has them)…
    const signed = await stack.request('GET', `/entity/${person}/signed-payload`, { key });
    assert.deepEqual([signed.body.firstName, signed.body.lastName, signed.body.dob], [played.firstName, played.lastName, played.dob]);
    // …and appear in no attribute, summary, details or memo of any run
    for (const r of [...all, ...byBatch, ...failed]) {
      const d = await stack.temporal.workflow.getHandle(r.execution.workflowId).describe();
      const shown = JSON.stringify([d.searchAttributes, d.memo, await d.staticSummary(), await d.staticDetails()]);
      for (const secret of Object.values(played)) assert.equal(shown.includes(secret), false, `${secret} in ${shown}`);
    }
  });
});
