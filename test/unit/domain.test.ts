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
    assert.match(requirementValueProblem(findRequirement('kyb-ubo-declaration')!, 'text')!, /object or array/);
    assert.match(requirementValueProblem(findRequirement('kyb-ubo-declaration')!, { big: 'x'.repeat(70_000) })!, /at most/);
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
    for (const bad of [{ page: '0' }, { limit: '101' }, { limit: '-5' }, { page: '1e3' }, { page: ['1', '2'] }]) assert.ok(!paginationQuery.safeParse(bad).success, JSON.stringify(bad));
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
