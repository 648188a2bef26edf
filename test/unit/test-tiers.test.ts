// The test tiers of docs/testing.md, as test/run.ts plans them: the unit tier first and on nothing
// (no database, Temporal or bundle), the rest only after it and on the run's infrastructure; every
// test file in exactly one tier.
import assert from 'node:assert/strict';
import { globSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { LONGEST, longestFirst, planRun, spread, TIERS } from '../run.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const all = globSync('test/**/*.test.ts', { cwd: root }).sort();
const inDir = (dir: string) => all.filter((f) => f.startsWith(`test/${dir}/`));

describe('test tiers', () => {
  it('puts every test file in exactly one tier (a file outside them would never run)', () => {
    const tiered = TIERS.flatMap(inDir);
    assert.deepEqual([...tiered].sort(), all);
    assert.ok(inDir('unit').length > 20 && inDir('integration').length > 20 && inDir('e2e').length > 5);
  });

  it('npm test: the unit files first and alone, then every other file once, on the infrastructure', () => {
    const plan = planRun([], all);
    assert.deepEqual(plan.unit, inDir('unit'));
    assert.equal(plan.infra, true);
    assert.deepEqual([...plan.shared, ...plan.solo].sort(), [...inDir('integration'), ...inDir('e2e')].sort());
    assert.ok(plan.solo.length > 0 && plan.solo.every((f) => !plan.shared.includes(f)));
    // the end-to-end files spread among the integration files: never two of them side by side
    const e2e = plan.shared.map((f) => f.startsWith('test/e2e/'));
    assert.ok(!e2e.some((heavy, i) => heavy && e2e[i + 1]), plan.shared.join('\n'));
  });

  it('spreads the heavy files among the light ones, each followed by its share, keeping every file once', () => {
    assert.deepEqual(spread(['H1', 'H2'], ['l1', 'l2', 'l3', 'l4', 'l5']), ['H1', 'l1', 'l2', 'l3', 'H2', 'l4', 'l5']);
    assert.deepEqual(spread(['H1', 'H2', 'H3'], ['l1']), ['H1', 'H2', 'l1', 'H3']);
    assert.deepEqual(spread([], ['l1', 'l2']), ['l1', 'l2']);
    assert.deepEqual(spread(['H1'], []), ['H1']);
  });

  it('starts the longest files first, the others after them in the order given; every name it lists is a shared file', () => {
    assert.deepEqual(longestFirst(['b', LONGEST[1]!, 'a', LONGEST[0]!]), [LONGEST[0], LONGEST[1], 'b', 'a']);
    const plan = planRun([], all);
    for (const f of LONGEST) assert.ok(plan.shared.includes(f), `${f} is a shared file`);
    assert.equal(new Set(LONGEST).size, LONGEST.length);
    // the first files to start are the longest end-to-end and integration ones
    assert.deepEqual(plan.shared.slice(0, 1), [LONGEST[0]]);
    assert.ok(plan.shared.indexOf('test/integration/webhook-hostile-receiver.test.ts') < plan.shared.length / 4);
  });

  it('npm run test:unit starts nothing; test:integration and test:e2e run their own folder only', () => {
    assert.deepEqual(planRun(['unit'], all), { unit: inDir('unit'), infra: false, shared: [], solo: [] });
    const integration = planRun(['integration'], all);
    assert.deepEqual([integration.unit, integration.infra], [[], true]);
    assert.deepEqual([...integration.shared, ...integration.solo].sort(), inDir('integration'));
    const e2e = planRun(['e2e'], all);
    assert.deepEqual([...e2e.shared, ...e2e.solo].sort(), inDir('e2e'));
  });

  it('files given: infrastructure only when one of them is not a unit file', () => {
    const [u1, u2] = inDir('unit');
    assert.deepEqual(planRun([u1!, u2!], all), { unit: [], infra: false, shared: [u1, u2], solo: [] });
    const i1 = inDir('integration')[0]!;
    assert.equal(planRun([u1!, i1], all).infra, true);
  });
});
