import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parameterName } from '../../api/middleware/validate.ts';
import { createEntityBody, requirementValueProblem } from '../../domain/entity.ts';
import { featureRequirements, features, findRequirement, requirements } from '../../domain/feature-catalog.ts';
import { pageMeta, paginationQuery } from '../../domain/pagination.ts';

describe('feature catalog', () => {
  it('names only requirements it defines, with unique ids and slugs', () => {
    for (const f of features) assert.equal(featureRequirements(f).length, f.requirements.length);
    const ids = [...features.map((f) => f.id), ...requirements.map((r) => r.id)];
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(new Set(requirements.map((r) => r.slug)).size, requirements.length);
  });
});

describe('requirement values', () => {
  const token = findRequirement('card-processor-public-token')!;
  it('accepts a 9-digit card processor token and refuses 16 digits (a PAN) or letters', () => {
    assert.equal(requirementValueProblem(token, '123456789'), null);
    assert.match(requirementValueProblem(token, '4111111111111111')!, /9 digits/);
    assert.match(requirementValueProblem(token, '12345678a')!, /9 digits/);
  });
  it('checks each value type', () => {
    assert.equal(requirementValueProblem(findRequirement('kyb-regulated-entity')!, true), null);
    assert.match(requirementValueProblem(findRequirement('kyb-regulated-entity')!, 'true')!, /boolean/);
    assert.match(requirementValueProblem(findRequirement('kyb-annual-turnover')!, Number.NaN)!, /finite/);
    assert.match(requirementValueProblem(findRequirement('ukyc-canonical-kyc-data')!, 'text')!, /object or array/);
    assert.match(requirementValueProblem(findRequirement('ukyc-canonical-kyc-data')!, { big: 'x'.repeat(70_000) })!, /at most/);
  });
  it('checks a member declaration: people by entity id, each once, with a known role', () => {
    const declaration = findRequirement('kyb-ubo-declaration')!;
    const id = '3f1d7c2e-8a4b-4c5d-9e6f-7a8b9c0d1e2f';
    assert.equal(requirementValueProblem(declaration, { members: [{ entityId: id, role: 'UBO', ownershipPercent: 60 }] }), null);
    assert.match(requirementValueProblem(declaration, { members: [] })!, /at least one/);
    assert.match(requirementValueProblem(declaration, { members: [{ entityId: 'jane', role: 'UBO' }] })!, /UUID/);
    assert.match(requirementValueProblem(declaration, { members: [{ entityId: id, role: 'OWNER' }] })!, /role must be one of UBO, DIRECTOR, REPRESENTATIVE/);
    assert.match(
      requirementValueProblem(declaration, {
        members: [
          { entityId: id, role: 'UBO' },
          { entityId: id, role: 'DIRECTOR' },
        ],
      })!,
      /twice/,
    );
    assert.match(requirementValueProblem(declaration, { members: [{ entityId: id, role: 'UBO', ownershipPercent: 101 }] })!, /0 to 100/);
  });
});

describe('entity creation body', () => {
  it('accepts the minimal body', () => {
    assert.ok(createEntityBody.safeParse({ externalId: 'a', type: 'BUSINESS' }).success);
  });
  it('accepts an externalId of exactly 255 characters and refuses 256', () => {
    assert.ok(createEntityBody.safeParse({ externalId: 'x'.repeat(255), type: 'BUSINESS' }).success);
    assert.ok(!createEntityBody.safeParse({ externalId: 'x'.repeat(256), type: 'BUSINESS' }).success);
  });
});

describe('pagination', () => {
  it('defaults, bounds and totals', () => {
    assert.deepEqual(paginationQuery.parse({}), { page: 1, limit: 20 });
    assert.deepEqual(paginationQuery.parse({ page: '3', limit: '100' }), { page: 3, limit: 100 });
    for (const bad of [{ page: '0' }, { limit: '101' }, { limit: '-5' }, { page: '1e3' }, { page: ['1', '2'] }])
      assert.ok(!paginationQuery.safeParse(bad).success, JSON.stringify(bad));
    assert.deepEqual(pageMeta({ page: 2, limit: 20 }, 41), { page: 2, limit: 20, totalItems: 41, totalPages: 3 });
    assert.deepEqual(pageMeta({ page: 1, limit: 20 }, 0), { page: 1, limit: 20, totalItems: 0, totalPages: 0 });
  });
});

describe('parameter names', () => {
  it('reads like the JSON path a client wrote', () => {
    assert.equal(parameterName(['requirements', 0, 'value']), 'requirements[0].value');
    assert.equal(parameterName(['externalId']), 'externalId');
    assert.equal(parameterName([]), '');
  });
});

describe('control characters in share fields (PostgreSQL text cannot hold NUL)', () => {
  it('refuses them in a sync import body, naming the field, and accepts the same text without them', async () => {
    const { syncImportBody } = await import('../../domain/token-sharing.ts');
    assert.ok(syncImportBody.safeParse({ externalId: 'cardholder-1', shareToken: '_act-jwt-abc' }).success);
    for (const field of ['externalId', 'shareToken'] as const) {
      const body = { externalId: 'cardholder-1', shareToken: '_act-jwt-abc', [field]: 'a\u0000b' };
      const result = syncImportBody.safeParse(body);
      assert.ok(!result.success);
      assert.deepEqual(result.error.issues[0]!.path, [field]);
      assert.match(result.error.issues[0]!.message, /control characters/);
    }
  });

  it('refuses them in a batch CSV row, naming the row and the field', async () => {
    const { parseBatchCsv } = await import('../../domain/batch-csv.ts');
    const ok = await parseBatchCsv(Buffer.from('externalId,shareToken\nok-1,tok-1\n'), { binSponsored: false });
    assert.equal(ok.ok && ok.rows.length, 1);
    const bad = await parseBatchCsv(Buffer.from('externalId,shareToken\nok-1,tok\u0000-1\n'), { binSponsored: false });
    assert.ok(!bad.ok && /shareToken/.test(bad.rejected.message) && /control characters/.test(bad.rejected.message), JSON.stringify(bad));
  });
});

describe('CSV cells a spreadsheet would run', () => {
  it('are written with a leading apostrophe, and read back without it', async () => {
    const { csvField, neutralizedCell, restoredCell } = await import('../../domain/csv.ts');
    const { parseBatchCsv } = await import('../../domain/batch-csv.ts');
    for (const v of ['=1+1', '+A1', '-2', '@SUM(A1)', '\tx', '\rx']) {
      assert.equal(neutralizedCell(v), `'${v}`);
      assert.equal(restoredCell(neutralizedCell(v)), v);
    }
    for (const v of ['plain', "'quoted", "'already'", 'a=b', '']) assert.equal(restoredCell(neutralizedCell(v)), v, v);
    assert.equal(csvField('=cmd|"/c calc"!A1'), `"'=cmd|""/c calc""!A1"`);
    const read = await parseBatchCsv(Buffer.from(`externalId,shareToken\n${csvField('=1+1')},${csvField('-tok')}\n`), { binSponsored: false });
    assert.ok(read.ok);
    assert.deepEqual([read.rows[0]!.externalId, read.rows[0]!.shareToken], ['=1+1', '-tok'], 'a file we wrote uploads as it is');
  });
});

describe('a batch CSV refused for the same reason however its bytes arrive', () => {
  it('names the 5,001st record (too large) before invalid UTF-8 that follows it, in one chunk or many', async () => {
    const { readBatchCsv } = await import('../../domain/batch-csv.ts');
    const rows = Array.from({ length: 5001 }, (_, i) => `id-${i},tok-${i}`).join('\n');
    const after = Array.from({ length: 100 }, (_, i) => `more-${i},tok-more-${i}`).join('\n'); // 2 KB: the bad bytes are slices later
    const file = Buffer.concat([Buffer.from(`externalId,shareToken\n${rows}\n${after}\n`), Buffer.from([0xff, 0xfe, 0x0a])]);
    const kinds = new Set<string>();
    for (const size of [file.length, 1 << 16, 4096, 1000, 700, 513, 511, 97, 1]) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < file.length; at += size) chunks.push(file.subarray(at, at + size));
      const read = await readBatchCsv(chunks, { binSponsored: false });
      assert.ok(!read.ok);
      kinds.add(`${read.rejected.kind}: ${read.rejected.message}`);
    }
    assert.deepEqual([...kinds], ['tooLarge: The file has more than 5000 records; at most 5000 are allowed. Split it into files of at most 5000 records.']);
  });

  it('reads a good file the same in one chunk or in odd-sized ones', async () => {
    const { readBatchCsv } = await import('../../domain/batch-csv.ts');
    const file = Buffer.from(`externalId,shareToken\n${Array.from({ length: 300 }, (_, i) => `ïd-${i},tök-${i}`).join('\n')}\n`);
    for (const size of [file.length, 513, 3, 1]) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < file.length; at += size) chunks.push(file.subarray(at, at + size));
      const read = await readBatchCsv(chunks, { binSponsored: false });
      assert.ok(read.ok, JSON.stringify(!read.ok && read.rejected.message));
      assert.equal(read.rows.length, 300);
      assert.equal(read.rows[299]!.externalId, 'ïd-299');
    }
  });
});
