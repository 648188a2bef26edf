// `npm run histories:record`: runs every workflow type on a real stack (Temporal dev server, a fresh
// PostgreSQL database, the simulator, a local receiver) and saves their event histories under
// test/fixtures/histories/. test/integration/replay.test.ts replays them against the current workflow code
// on every `npm test`, so a change that would break runs already in flight fails the build.
// Record again only when a workflow changes in a way that is meant to be replay-compatible (a
// patch), after copying the old fixture to `<name>-before-<patch id>.json`, which stays until the
// patch is deprecated (contract/patches.ts; docs/architecture.md, "Changing a workflow").
// Names given as arguments (`npm run histories:record -- universal-kyc-decided`) record only those,
// leaving the other fixtures as they were recorded.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { requireTemporalCli } from '../dev/temporal-cli.ts';
import { createStarters } from '../temporal/starters.ts';
import { recordTestEvent } from '../test/helpers/events.ts';
import { createSubscription } from '../store/subscriptions.ts';
import { batchWorkflowId } from '../contract/batch-import.ts';
import { requirementBatchWorkflowId } from '../contract/requirement-batch.ts';
import { canonicalRecords, jsonLines, uploadRecords, waitForRequirementBatch } from '../test/helpers/requirement-batches.ts';
import { personVerificationWorkflowId } from '../contract/person-verification.ts';
import { retentionWorkflowId } from '../contract/retention.ts';
import { addHold } from '../store/retention.ts';
import { sandboxReviewWorkflowId } from '../contract/sandbox-review.ts';
import { universalKybWorkflowId } from '../contract/universal-kyb.ts';
import { universalKycWorkflowId } from '../contract/universal-kyc.ts';
import { webhookDispatcherWorkflowId } from '../contract/webhook-dispatcher.ts';
import { webhookRetryWorkflowId } from '../contract/webhook-retry.ts';
import { canonicalPayload, documentsForm, FILES, filesForm } from '../test/helpers/ukyc.ts';
import { personFillsInSdk, providerAccount } from '../test/helpers/sdk.ts';
import { auditCheckpointWorkflow, housekeepingWorkflow, webhookRetryWorkflow } from '../workflows/index.ts';
import { bulkEntities, bulkIdDocuments, bulkTokens } from '../test/helpers/bulk.ts';
import { csvOf, upload, waitForBatch } from '../test/helpers/imports.ts';
import { createDatabase, DEFAULT_POSTGRES_URL, startTemporal } from '../test/helpers/infra.ts';
import { startReceiver } from '../test/helpers/receiver.ts';
import { startStack } from '../test/helpers/stack.ts';

const dir = path.resolve(import.meta.dirname, '..', 'test', 'fixtures', 'histories');
const say = (s: string) => process.stdout.write(`[histories] ${s}\n`);
const execFileAsync = promisify(execFile);

const database = await createDatabase(process.env.TEST_POSTGRES_URL ?? DEFAULT_POSTGRES_URL, 'vouch_histories');
const temporal = await startTemporal();
process.env.TEST_DATABASE_URL = database.url;
process.env.TEMPORAL_ADDRESS = temporal.address;
const stack = await startStack({
  workers: true,
  providerCallbacks: true,
  env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', LOG_LEVEL: 'warn', BATCH_PAGE_SIZE: '3', BATCH_CONCURRENCY: '2', UKYC_SUBMISSION_DEADLINE_SECONDS: '3' },
});
const receiver = await startReceiver();
const saved: string[] = [];
const only = new Set(process.argv.slice(2));

/** Saves a run's history in the Temporal CLI's JSON form (what `temporal workflow show --output json` prints). */
async function save(name: string, handle: WorkflowHandle, runId?: string) {
  if (only.size > 0 && !only.has(name)) return;
  // decoded through our codec endpoint: the fixtures must replay without the sandbox's payload key
  const args = [
    'workflow',
    'show',
    '--address',
    temporal.address,
    '--workflow-id',
    handle.workflowId,
    '--output',
    'json',
    '--codec-endpoint',
    `${stack.url}/codec`,
  ];
  if (runId) args.push('--run-id', runId);
  // not execFileSync: the CLI calls this process's own API (/codec), which must keep answering
  const { stdout: json } = await execFileAsync(requireTemporalCli(), args, { maxBuffer: 64 * 1024 * 1024 });
  await writeFile(path.join(dir, `${name}.json`), JSON.stringify(JSON.parse(json), null, 1) + '\n');
  saved.push(name);
}

try {
  await mkdir(dir, { recursive: true });
  const start = createStarters(stack.temporal, stack.config);
  const { apiKey, businessId } = await stack.newBusiness({ name: 'histories' });
  await createSubscription(stack.db, businessId, {
    notificationChannel: 'WEBHOOK',
    notificationTypes: ['account_status_change', 'kyb_status_change'],
    webhookUrl: receiver.url,
  });

  // a batch of mixed outcomes over two pages (continue-as-new), one token used by someone else
  const externalIds = ['h-1', 'h-2', 'h-3', 'h-4', 'h-5'];
  await bulkEntities(stack.db, businessId, externalIds);
  const tokens = bulkTokens(stack.sim!, 'histories-donor', stack.recipient!.clientId, [
    'complete',
    'missing-address',
    'donor-rejected',
    'complete',
    'complete',
  ]);
  stack.sim!.state.shareTokens.get(tokens[3]!)!.usedAt = Date.now();
  const rows = externalIds.map((e, i) => [e, tokens[i]!]);
  rows.push(['no-such-entity', 'x-token']);
  const res = await upload(stack, apiKey, csvOf('externalId,shareToken', rows));
  if (res.status !== 201) throw new Error(res.text);
  await waitForBatch(stack, apiKey, res.body.batchId);
  const runs = [];
  for await (const w of stack.temporal.workflow.list({ query: `WorkflowId = '${batchWorkflowId(res.body.batchId)}'` })) runs.push(w);
  runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  const batch = stack.temporal.workflow.getHandle(batchWorkflowId(res.body.batchId));
  await save('batch-import-first-page', batch, runs[0]!.runId);
  await save('batch-import-last-page', batch, runs.at(-1)!.runId);

  // a batch of requirement submissions: canonical KYC data of a person with a document (decided in
  // the record's step), of one without (left waiting), another requirement, and a record that failed at upload
  await bulkEntities(stack.db, businessId, ['r-1', 'r-2']);
  const [r1, r2] = (
    await stack.db.query<{ id: string }>("SELECT id FROM entities WHERE business_id = $1 AND external_id IN ('r-1', 'r-2') ORDER BY external_id", [businessId])
  ).map((r) => String(r.id));
  await bulkIdDocuments(stack.db, businessId, [r1!]);
  const records = jsonLines([
    ...canonicalRecords([r1!, r2!]),
    { entityId: r2, requirementSlug: 'card-processor-public-token', value: '246813579' },
    { externalId: 'no-such-entity', requirementSlug: 'card-processor-public-token', value: '135792468' },
  ]);
  const requirementBatch = await uploadRecords(stack, apiKey, records);
  if (requirementBatch.status !== 201) throw new Error(requirementBatch.text);
  await waitForRequirementBatch(stack, apiKey, requirementBatch.body.batchId);
  const requirementRuns = [];
  const requirementWorkflowId = requirementBatchWorkflowId(requirementBatch.body.batchId);
  for await (const w of stack.temporal.workflow.list({ query: `WorkflowId = '${requirementWorkflowId}'` })) requirementRuns.push(w);
  requirementRuns.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  const requirementHandle = stack.temporal.workflow.getHandle(requirementWorkflowId);
  await save('requirement-batch-first-page', requirementHandle, requirementRuns[0]!.runId);
  await save('requirement-batch-last-page', requirementHandle, requirementRuns.at(-1)!.runId);

  // sync imports: onboarded, and refused
  await bulkEntities(stack.db, businessId, ['s-1', 's-2']);
  const [ok, refused] = bulkTokens(stack.sim!, 'histories-donor', stack.recipient!.clientId, ['complete', 'donor-rejected']);
  for (const [name, externalId, shareToken] of [
    ['sync-import-onboarded', 's-1', ok],
    ['sync-import-refused', 's-2', refused],
  ] as const) {
    const r = await stack.request('POST', '/entity/kyc/import/sync', { key: apiKey, json: { externalId, shareToken } });
    const requestId = r.body.requestId as string;
    await save(name, stack.temporal.workflow.getHandle(`sync-import-${requestId}`));
  }

  // a person verified through the hosted SDK: a token, a RED (RETRY) review, then a GREEN one
  const person = (await stack.request('POST', '/entity', { key: apiKey, json: { externalId: 'p-1', type: 'INDIVIDUAL' } })).body.id as string;
  const token = await stack.request('POST', `/entity/${person}/kyc`, { key: apiKey });
  if (token.status !== 200) throw new Error(token.text);
  const applicant = personFillsInSdk(stack, person);
  const sumsub = providerAccount(stack);
  const eventsOf = async () => (await stack.db.query('SELECT 1 FROM events WHERE entity_id = $1', [person])).length;
  for (const [i, review] of [{ reviewAnswer: 'RED', rejectLabels: ['BAD_SELFIE'], reviewRejectType: 'RETRY' }, { reviewAnswer: 'GREEN' }].entries()) {
    await sumsub.completeSandboxReview(applicant.id, review as Parameters<typeof sumsub.completeSandboxReview>[1]);
    while ((await eventsOf()) < i + 1) await new Promise((r) => setTimeout(r, 100));
  }
  await save('person-verification-reviewed', stack.temporal.workflow.getHandle(personVerificationWorkflowId(person)));

  // the sandbox control playing a person and a GREEN review
  const played = (await stack.request('POST', '/entity', { key: apiKey, json: { externalId: 'p-2', type: 'INDIVIDUAL' } })).body.id as string;
  const sandbox = await stack.request('POST', `/sandbox/entity/${played}/kyc/complete`, { key: apiKey, json: { reviewAnswer: 'GREEN' } });
  if (sandbox.status !== 202) throw new Error(sandbox.text);
  const [request] = await stack.db.query<{ id: string }>('SELECT id FROM sandbox_reviews WHERE entity_id = $1', [played]);
  await save('sandbox-review-played', stack.temporal.workflow.getHandle(sandboxReviewWorkflowId(request!.id)));

  // universal KYC: data then an identity document (decided), and data alone (decided as incomplete at its 3 s deadline)
  for (const [name, withDocument] of [
    ['universal-kyc-decided', true],
    ['universal-kyc-expired', false],
  ] as const) {
    const id = (await stack.request('POST', '/entity', { key: apiKey, json: { externalId: name, type: 'INDIVIDUAL' } })).body.id as string;
    const submitted = await stack.request('POST', `/entity/${id}/requirement`, {
      key: apiKey,
      json: { requirementSlug: 'ukyc-canonical-kyc-data', value: JSON.stringify(canonicalPayload()) },
    });
    if (submitted.status !== 201) throw new Error(submitted.text);
    if (withDocument)
      await stack.request('POST', `/entity/${id}/requirement-slug/ukyc-id-document/upload`, {
        key: apiKey,
        form: filesForm([{ bytes: FILES.pdf, name: 'passport.pdf' }]),
      });
    const handle = stack.temporal.workflow.getHandle(universalKycWorkflowId(submitted.body.submissionId));
    await handle.result();
    await save(name, handle);
  }

  // the retired retry workflow (retries wait in PostgreSQL now): a run an earlier release started for a
  // delivery it owned (mode 'workflow', due in a second), which it then delivers; first, every
  // earlier decision's deliveries are done, so the receiver's answers are this one's
  for (let i = 0; i < 300 && (await stack.db.query("SELECT 1 FROM webhook_deliveries WHERE status = 'pending' LIMIT 1")).length > 0; i++)
    await new Promise((r) => setTimeout(r, 100));
  receiver.answer({ status: 200 });
  const eventId = await stack.db.tx(async (tx) => {
    const id = await recordTestEvent(tx, businessId, 'histories');
    await tx.query(
      "UPDATE webhook_deliveries SET mode = 'workflow', attempts = 1, run_attempts = 1, next_attempt_at = now() + interval '1 second' WHERE event_id = $1",
      [id],
    );
    return id;
  });
  const [delivery] = await stack.db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE event_id = $1', [eventId]);
  const retry = await stack.temporal.workflow.start(webhookRetryWorkflow, {
    taskQueue: stack.config.webhooks.taskQueue,
    workflowId: webhookRetryWorkflowId(delivery!.id, 1),
    args: [{ deliveryId: delivery!.id }],
  });
  await retry.result();
  await save('webhook-retry-delivered', retry);

  // universal KYB: a business with one owner, its documents, submitted, the owner verified through the sandbox (decided)
  {
    const company = (await stack.request('POST', '/entity', { key: apiKey, json: { externalId: 'universal-kyb-decided', type: 'BUSINESS' } })).body
      .id as string;
    const profile = await stack.request('POST', '/ukyb', {
      key: apiKey,
      json: {
        entityId: company,
        business: {
          legalName: 'Histories Ltd',
          registrationNumber: '1',
          country: 'GBR',
          address: { country: 'GBR', postCode: 'EC1A 1BB', street: 'King Street' },
        },
        ubos: [{ externalId: 'kyb-owner-1', firstName: 'Ada', lastName: 'Lovelace', dob: '1980-12-10', nationality: 'GBR', ownershipPercentage: 60 }],
      },
    });
    if (profile.status !== 201) throw new Error(profile.text);
    const ownerId = profile.body.ubos[0].entityId as string;
    const document = (fields: Record<string, string>) => {
      const form = documentsForm(fields);
      return stack.request('POST', '/ukyb/documents', { key: apiKey, form });
    };
    for (const requirementSlug of ['ukyb-certificate-of-incorporation', 'ukyb-proof-of-address', 'ukyb-register-of-shareholders'])
      await document({ entityId: company, requirementSlug });
    await document({ entityId: company, memberId: ownerId, documentType: 'PASSPORT' });
    const submitted = await stack.request('POST', '/ukyb/submit', { key: apiKey, json: { entityId: company } });
    if (submitted.status !== 202) throw new Error(submitted.text);
    const verified = await stack.request('POST', `/sandbox/entity/${company}/kyc/complete?memberId=${ownerId}`, {
      key: apiKey,
      json: { reviewAnswer: 'GREEN' },
    });
    if (verified.status !== 202) throw new Error(verified.text);
    const handle = stack.temporal.workflow.getHandle(universalKybWorkflowId(submitted.body.submissionId));
    await handle.result();
    await save('universal-kyb-decided', handle);
  }

  // retention: a record sealed while a hold binds it for two seconds (no policy), then purged
  {
    const id = (await stack.request('POST', '/entity', { key: apiKey, json: { externalId: 'retention-purged', type: 'INDIVIDUAL' } })).body.id as string;
    if (!(await addHold(stack.db, { entityId: id, reason: 'histories', until: new Date(Date.now() + 2000), by: 'histories' }))) throw new Error('no hold');
    const deleted = await stack.request('DELETE', `/entity/${id}`, { key: apiKey });
    if (deleted.status !== 204) throw new Error(deleted.text);
    const handle = stack.temporal.workflow.getHandle(retentionWorkflowId(id));
    await handle.result();
    await save('retention-purged', handle);
  }

  // the dispatcher, as it runs (its history so far)
  await start.webhookDispatcher();
  await save('webhook-dispatcher-running', stack.temporal.workflow.getHandle(webhookDispatcherWorkflowId(stack.config.webhooks.taskQueue)));

  const housekeeping = await stack.temporal.workflow.start(housekeepingWorkflow, {
    taskQueue: stack.config.temporal.taskQueue,
    workflowId: `histories-housekeeping-${Date.now()}`,
  });
  await housekeeping.result();
  await save('housekeeping', housekeeping);

  // the audit chain's checkpoints: every moved head signed and stored
  const checkpoints = await stack.temporal.workflow.start(auditCheckpointWorkflow, {
    taskQueue: stack.config.temporal.taskQueue,
    workflowId: `histories-audit-checkpoint-${Date.now()}`,
  });
  await checkpoints.result();
  await save('audit-checkpoint-signed', checkpoints);
  say(`saved ${saved.length} histories in ${path.relative(process.cwd(), dir)}: ${saved.join(', ')}`);
} finally {
  await receiver.close();
  await stack.close();
  await temporal.stop();
  await database.drop();
}
