// Every rule of the batch upload, each with a failing and a passing case, and nothing stored on a refusal.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { csvOf, upload } from '../helpers/imports.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

describe('POST /entity/kyc/import/batch: upload rules', () => {
  let stack: Stack;
  let key: string;
  let businessId: string;
  let binKey: string;
  let n = 0;
  const uniqueRows = (count: number, extra: (i: number) => string[] = () => []) =>
    Array.from({ length: count }, (_, i) => [`ext-${n}-${i}`, `tok-${n++}-${i}`, ...extra(i)]);
  const batchCount = async (id = businessId) =>
    Number((await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM import_batches WHERE business_id = $1', [id]))[0]!.n);

  before(async () => {
    // No workers: these tests are about what the upload accepts and stores, not the processing.
    stack = await startStack();
    ({ apiKey: key, businessId } = await stack.newBusiness());
    ({ apiKey: binKey } = await stack.newBusiness({ name: 'BIN', binSponsored: true }));
  });
  after(() => stack.close());

  async function refused(reply: Awaited<ReturnType<typeof upload>>, code: string, errorKey: string, parameter: string, message?: RegExp) {
    assert.equal(reply.status, 400, reply.text);
    assert.equal(reply.body.code, code);
    assert.equal(reply.body.errorKey, errorKey);
    assert.equal(reply.body.parameter, parameter);
    if (message) assert.match(reply.body.message, message);
  }

  it('accepts a valid file: 201 with the upload response, rows stored', async () => {
    const before = await batchCount();
    const rows = uniqueRows(3);
    const res = await upload(stack, key, csvOf('externalId,shareToken', rows));
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['batchId', 'businessUuid', 'createdAt', 'message', 'status', 'totalRecords']);
    assert.equal(res.body.status, 'pending');
    assert.equal(res.body.totalRecords, 3);
    assert.equal(res.body.businessUuid, businessId);
    assert.equal(await batchCount(), before + 1);
    const stored = await stack.db.query('SELECT row_number, external_id, share_token FROM import_records WHERE batch_id = $1 ORDER BY row_number', [
      res.body.batchId,
    ]);
    assert.deepEqual(
      stored.map((r) => [r.row_number, r.external_id, r.share_token]),
      rows.map((r, i) => [i + 2, r[0], r[1]]),
    );
  });

  it('requires X-Provider and accepts only sumsub (any case)', async () => {
    const before = await batchCount();
    await refused(
      await upload(stack, key, csvOf('externalId,shareToken', uniqueRows(1)), { 'X-Provider': undefined }),
      '0701010200',
      'kyc_batch.upload.invalid_data',
      'X-Provider',
    );
    await refused(
      await upload(stack, key, csvOf('externalId,shareToken', uniqueRows(1)), { 'X-Provider': 'onfido' }),
      '0701010200',
      'kyc_batch.upload.invalid_data',
      'X-Provider',
      /not supported/,
    );
    assert.equal(await batchCount(), before);
    assert.equal((await upload(stack, key, csvOf('externalId,shareToken', uniqueRows(1)), { 'X-Provider': 'SumSub' })).status, 201);
  });

  it('requires an Idempotency-Key of at most 255 characters', async () => {
    await refused(
      await upload(stack, key, csvOf('externalId,shareToken', uniqueRows(1)), { 'Idempotency-Key': undefined }),
      '0701010200',
      'kyc_batch.upload.invalid_data',
      'Idempotency-Key',
    );
    await refused(
      await upload(stack, key, csvOf('externalId,shareToken', uniqueRows(1)), { 'Idempotency-Key': 'k'.repeat(256) }),
      '0701010200',
      'kyc_batch.upload.invalid_data',
      'Idempotency-Key',
    );
    assert.equal((await upload(stack, key, csvOf('externalId,shareToken', uniqueRows(1)), { 'Idempotency-Key': 'k'.repeat(255) })).status, 201);
  });

  it('requires a file in the form field "file", sent as multipart/form-data', async () => {
    await refused(
      await upload(stack, key, csvOf('externalId,shareToken', uniqueRows(1)), {}, 'document'),
      '0701010200',
      'kyc_batch.upload.invalid_data',
      'file',
      /No file/,
    );
    const json = await stack.request('POST', '/entity/kyc/import/batch', {
      key,
      json: { file: 'x' },
      headers: { 'X-Provider': 'sumsub', 'Idempotency-Key': 'json-1' },
    });
    assert.equal(json.status, 400);
    assert.equal(json.body.code, '0701010200');
  });

  it('refuses a file over 10 MB while it streams (0701010100) and accepts one just under', async () => {
    const header = 'externalId,shareToken\n';
    const big = Buffer.alloc(10 * 1024 * 1024 + 1, 'a');
    big.write(header);
    const before = await batchCount();
    await refused(await upload(stack, key, big), '0701010100', 'kyc_batch.upload.file_too_large', 'file', /10 MB/);
    assert.equal(await batchCount(), before);
    // 5,000 long rows just under 10 MB
    const pad = 'p'.repeat(2000);
    const rows = Array.from({ length: 5000 }, (_, i) => [`big-${n}-${i}`, `tok-${n}-${i}-${pad}`]);
    n++;
    const file = csvOf('externalId,shareToken', rows);
    assert.ok(Buffer.byteLength(file) < 10 * 1024 * 1024 && Buffer.byteLength(file) > 9.5 * 1024 * 1024);
    const ok = await upload(stack, key, file);
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.totalRecords, 5000);
  });

  it('refuses more than 5,000 records (0701010100) and accepts exactly 5,000', async () => {
    await refused(
      await upload(stack, key, csvOf('externalId,shareToken', uniqueRows(5001))),
      '0701010100',
      'kyc_batch.upload.file_too_large',
      'file',
      /more than 5000 records/,
    );
    assert.equal((await upload(stack, key, csvOf('externalId,shareToken', uniqueRows(5000)))).status, 201);
  });

  it('refuses bytes that are not UTF-8, and accepts a BOM and non-ASCII text', async () => {
    const latin1 = Buffer.concat([Buffer.from('externalId,shareToken\nJos'), Buffer.from([0xe9]), Buffer.from(',tok-latin1\n')]);
    await refused(await upload(stack, key, latin1), '0701010200', 'kyc_batch.upload.invalid_data', 'file', /UTF-8/);
    const ok = await upload(stack, key, `\ufeff${csvOf('externalId,shareToken', [[`José-${n++}`, `tok-utf8-${n}`]])}`);
    assert.equal(ok.status, 201, ok.text);
    const [row] = await stack.db.query('SELECT external_id FROM import_records WHERE batch_id = $1', [ok.body.batchId]);
    assert.match(String(row!.external_id), /^José-/);
  });

  it('needs a header with the required columns, in any order; ignores and lists unknown or repeated columns', async () => {
    await refused(
      await upload(stack, key, csvOf('externalId,token', uniqueRows(1))),
      '0701010200',
      'kyc_batch.upload.invalid_data',
      'file',
      /lacks the required column shareToken/,
    );
    await refused(
      await upload(stack, key, csvOf('externalId', [['only-ext']])),
      '0701010200',
      'kyc_batch.upload.invalid_data',
      'file',
      /lacks the required column shareToken/,
    );
    const typo = await upload(
      stack,
      key,
      csvOf(
        'externalId,shareToken,aplicantLevel',
        uniqueRows(1).map(([e, t]) => [e!, t!, 'basic-kyc-level']),
      ),
    );
    assert.equal(typo.status, 201, typo.text);
    assert.deepEqual(typo.body.ignoredColumns, ['aplicantLevel (column 3)'], 'a typo in a column name is visible');
    assert.match(typo.body.message, /ignored the column aplicantLevel \(column 3\)/);
    const [stored] = await stack.db.query('SELECT applicant_level FROM import_records WHERE batch_id = $1', [typo.body.batchId]);
    assert.equal(stored!.applicant_level, null, 'an ignored column is not read');
    const [ext, tok] = uniqueRows(1)[0]!;
    const repeated = await upload(stack, key, csvOf('externalId,shareToken,externalId', [[ext!, tok!, 'other']]));
    assert.equal(repeated.status, 201, repeated.text);
    assert.deepEqual(repeated.body.ignoredColumns, ['externalId (column 3)'], 'the first of a repeated column counts');
    const [first] = await stack.db.query('SELECT external_id FROM import_records WHERE batch_id = $1', [repeated.body.batchId]);
    assert.equal(first!.external_id, ext);
    const plain = await upload(stack, key, csvOf('externalId,shareToken', uniqueRows(1)));
    assert.ok(!('ignoredColumns' in plain.body), "absent when nothing was ignored (the spec's answer)");
    await refused(await upload(stack, key, ''), '0701010200', 'kyc_batch.upload.invalid_data', 'file', /no header/i);
    await refused(await upload(stack, key, 'externalId,shareToken\n'), '0701010200', 'kyc_batch.upload.invalid_data', 'file', /no records/);
    const rows = uniqueRows(2).map(([e, t]) => ['basic-kyc-level', t!, e!]);
    assert.equal((await upload(stack, key, csvOf('applicantLevel,shareToken,externalId', rows))).status, 201);
  });

  it('names every bad row and field in the message and in details', async () => {
    const file = csvOf('externalId,shareToken,applicantLevel', [
      ['ok-1', 'tok-ok-1', ''],
      ['', 'tok-2', ''],
      ['ext-3', '', ''],
      ['ext-4', 'tok-4', 'bad/level!'],
      ['ext-5', 'tok-5', '', 'extra'],
      ['ext-6', '', 'bad/level!'],
    ]);
    const before = await batchCount();
    const res = await upload(stack, key, file);
    await refused(res, '0701010200', 'kyc_batch.upload.invalid_data', 'file');
    assert.match(res.body.message, /row 3 externalId is required/);
    assert.match(res.body.message, /row 4 shareToken is required/);
    assert.match(res.body.message, /row 6 has 4 values but the header has 3 columns/);
    assert.doesNotMatch(res.body.message, /applicantLevel/, "a record's own problem is not the file's");
    assert.deepEqual(
      res.body.details.map((d: any) => [d.row, d.field]),
      [
        [3, 'externalId'],
        [4, 'shareToken'],
        [6, ''],
        [7, 'shareToken'],
      ],
    );
    assert.equal(await batchCount(), before);
  });

  it('fails a record alone for its own problem, stored at once and not retryable, while the file and its valid records go on', async () => {
    const u = `own-${n++}`;
    const file = csvOf('externalId,shareToken,applicantLevel,cardProcessorPublicToken', [
      [`${u}-a`, `${u}-tok-a`, '', ''],
      [`${u}-b`, `${u}-tok-a`, '', ''], // the token of row 2 again
      [`${u}-a`, `${u}-tok-c`, '', ''], // the entity of row 2 again
      [`${u}-d`, `${u}-tok-d`, 'bad/level!', ''],
      [`${u}-e`, `${u}-tok-e`, '', '12345678'],
      [`${u}-f`, 'x'.repeat(2049), '', ''],
      [`${u}-g`, `${u}-tok-g`, 'basic-kyc-level', '123456789'],
    ]);
    const res = await upload(stack, key, file);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.totalRecords, 7);
    assert.match(res.body.message, /5 records failed on their own and are listed in summary\.errors/);
    const status = (await stack.request('GET', `/entity/kyc/import/batch/${res.body.batchId}`, { key })).body;
    assert.equal(status.failedRecords, 5);
    assert.equal(status.processedRecords, 5);
    assert.deepEqual(
      status.summary.errors.map((e: any) => [e.rowNumber, e.errorDetail.category, e.errorDetail.retryable]),
      [
        [3, 'TOKEN_ALREADY_USED', false],
        [4, 'DUPLICATE_EXTERNAL_ID', false],
        [5, 'APPLICANT_LEVEL_NOT_CONFIGURED', false],
        [6, 'CARD_PROCESSOR_TOKEN_INVALID', false],
        [7, 'TOKEN_EXPIRED_OR_INVALID', false],
      ],
    );
    assert.match(status.summary.errors[0].error, /Row 2 of this file has the same shareToken/);
    const pending = await stack.db.query<{ row_number: number }>(
      "SELECT row_number FROM import_records WHERE batch_id = $1 AND status = 'pending' ORDER BY row_number",
      [res.body.batchId],
    );
    assert.deepEqual(
      pending.map((r) => r.row_number),
      [2, 8],
      'the valid records wait for the run',
    );

    // v1.0.2: summary.errors pages with page/limit and the list endpoints' meta; without them, all and no meta (v1.0.1)
    assert.equal('meta' in status, false);
    const read = (query: string) => stack.request('GET', `/entity/kyc/import/batch/${res.body.batchId}${query}`, { key });
    const second = (await read('?page=2&limit=2')).body;
    assert.deepEqual(
      second.summary.errors.map((e: any) => e.rowNumber),
      [5, 6],
    );
    assert.deepEqual(second.meta, { page: 2, limit: 2, totalItems: 5, totalPages: 3 });
    assert.deepEqual([second.failedRecords, second.processedRecords], [5, 5], 'the counters are the whole batch');
    assert.deepEqual(
      (await read('?limit=4')).body.summary.errors.map((e: any) => e.rowNumber),
      [3, 4, 5, 6],
    );
    assert.deepEqual((await read('?page=2')).body.meta, { page: 2, limit: 20, totalItems: 5, totalPages: 1 });
    assert.deepEqual((await read('?page=9&limit=2')).body.summary.errors, [], 'past the end: empty, as the list endpoints');
    for (const [query, parameter] of [
      ['?limit=101', 'limit'],
      ['?page=0', 'page'],
      ['?pages=2', 'pages'],
    ] as const) {
      const bad = await read(query);
      assert.equal(bad.status, 400, query);
      assert.equal(bad.body.parameter, parameter, query);
    }
  });

  describe('cardProcessorPublicToken', () => {
    it('must be 9 digits when given (else its record fails alone); may be empty in the last column for programs that are not BIN-sponsored', async () => {
      for (const bad of ['12345678', '1234567890', '12345678a', '4111111111111111']) {
        const res = await upload(stack, key, csvOf('externalId,shareToken,cardProcessorPublicToken', [[`c-${n++}`, `t-${n}`, bad]]));
        assert.equal(res.status, 201, res.text);
        const [row] = await stack.db.query('SELECT status, error_category, error_message FROM import_records WHERE batch_id = $1', [res.body.batchId]);
        assert.deepEqual([row!.status, row!.error_category], ['failed', 'CARD_PROCESSOR_TOKEN_INVALID']);
        assert.match(String(row!.error_message), /must be exactly 9 digits/);
      }
      const ok = await upload(
        stack,
        key,
        csvOf('externalId,shareToken,cardProcessorPublicToken', [
          [`c-${n++}`, `t-${n}`, '123456789'],
          [`c-${n++}`, `t-${n}`, ''],
        ]),
      );
      assert.equal(ok.status, 201, ok.text);
    });

    it('must not repeat within the file', async () => {
      const res = await upload(
        stack,
        key,
        csvOf('externalId,shareToken,cardProcessorPublicToken', [
          [`c-${n++}`, `t-${n}`, '123456789'],
          [`c-${n++}`, `t-${n}`, '123456789'],
        ]),
      );
      await refused(res, '0701010200', 'kyc_batch.upload.invalid_data', 'file', /row 3 cardProcessorPublicToken repeats the value of row 2/);
    });

    it('is required on every row for a BIN-sponsored program', async () => {
      const missingColumn = await upload(stack, binKey, csvOf('externalId,shareToken', [[`b-${n++}`, `t-${n}`]]));
      await refused(
        missingColumn,
        '0701010200',
        'kyc_batch.upload.invalid_data',
        'file',
        /row 2 cardProcessorPublicToken is required for BIN-sponsored programs/,
      );
      const emptyValue = await upload(
        stack,
        binKey,
        csvOf('externalId,shareToken,cardProcessorPublicToken', [
          [`b-${n++}`, `t-${n}`, '987654321'],
          [`b-${n++}`, `t-${n}`, ''],
        ]),
      );
      await refused(emptyValue, '0701010200', 'kyc_batch.upload.invalid_data', 'file', /row 3 cardProcessorPublicToken is required/);
      const ok = await upload(stack, binKey, csvOf('externalId,shareToken,cardProcessorPublicToken', [[`b-${n++}`, `t-${n}`, '987654321']]));
      assert.equal(ok.status, 201, ok.text);
    });
  });

  describe('idempotency and duplicates', () => {
    it('answers a retried upload (same key, same file) with the same batch, and creates one batch only', async () => {
      const file = csvOf('externalId,shareToken', uniqueRows(2));
      const first = await upload(stack, key, file, { 'Idempotency-Key': `same-${n}` });
      const again = await upload(stack, key, file, { 'Idempotency-Key': `same-${n}` });
      assert.equal(first.status, 201);
      assert.equal(again.status, 201);
      assert.equal(again.body.batchId, first.body.batchId);
      assert.equal(again.body.createdAt, first.body.createdAt);
    });

    it('creates one batch when the same key arrives twice at once', async () => {
      const file = csvOf('externalId,shareToken', uniqueRows(50));
      const k = `race-${n++}`;
      const before = await batchCount();
      const replies = await Promise.all([1, 2, 3].map(() => upload(stack, key, file, { 'Idempotency-Key': k })));
      assert.deepEqual(
        replies.map((r) => r.status),
        [201, 201, 201],
        replies.map((r) => r.text).join('\n'),
      );
      assert.equal(new Set(replies.map((r) => r.body.batchId)).size, 1);
      assert.equal(await batchCount(), before + 1);
    });

    it("refuses the same key with a different file (0701010300, the spec's code and string code; the reason beside them)", async () => {
      const k = `diff-${n++}`;
      const first = await upload(stack, key, csvOf('externalId,shareToken', uniqueRows(1)), { 'Idempotency-Key': k });
      assert.equal(first.status, 201);
      const again = await upload(stack, key, csvOf('externalId,shareToken', uniqueRows(1)), { 'Idempotency-Key': k });
      await refused(again, '0701010300', 'kyc_batch.upload.duplicate_file_or_content', 'Idempotency-Key', /another file/);
      assert.deepEqual([again.body.reason, again.body.batchId], ['key_used_for_other_file', first.body.batchId]);
    });

    it('refuses a key whose batch has finished (0701010300)', async () => {
      const k = `done-${n++}`;
      const file = csvOf('externalId,shareToken', uniqueRows(1));
      const first = await upload(stack, key, file, { 'Idempotency-Key': k });
      await stack.db.query("UPDATE import_batches SET status = 'completed', completed_at = now() WHERE id = $1", [first.body.batchId]);
      const again = await upload(stack, key, file, { 'Idempotency-Key': k });
      await refused(again, '0701010300', 'kyc_batch.upload.duplicate_file_or_content', 'Idempotency-Key', /already been processed/);
      assert.deepEqual([again.body.reason, again.body.batchId], ['key_already_processed', first.body.batchId]);
    });

    it('refuses the same content under a new key (0701010300, duplicate_file_or_content), per business', async () => {
      const file = csvOf('externalId,shareToken', uniqueRows(2));
      const first = await upload(stack, key, file);
      assert.equal(first.status, 201);
      const again = await upload(stack, key, file);
      await refused(again, '0701010300', 'kyc_batch.upload.duplicate_file_or_content', 'file', new RegExp(first.body.batchId));
      assert.deepEqual([again.body.reason, again.body.batchId], ['same_content', first.body.batchId]);
      const { apiKey: otherKey } = await stack.newBusiness({ name: 'Other uploader' });
      assert.equal((await upload(stack, otherKey, file)).status, 201, 'another business may upload the same bytes');
    });
  });

  it('needs an API key', async () => {
    const res = await upload(stack, '', csvOf('externalId,shareToken', uniqueRows(1)), { 'x-vouch-api-key': undefined });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, '0000000100');
  });
});
