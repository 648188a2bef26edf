// Every workflow type's versioning behaviour is chosen (workflows/versioning.ts), set on the function
// the worker loads, and shown in docs/architecture.md's "Releasing workflow code" table.
import assert from 'node:assert/strict';
import { readDoc } from '../helpers/docs.ts';
import { describe, it } from 'node:test';
import * as workflows from '../../workflows/index.ts';
import { VERSIONING } from '../../workflows/versioning.ts';

type Defined = { workflowDefinitionOptions?: unknown };

describe('workflow versioning behaviours', () => {
  it('names one for every workflow the worker loads, and sets it on the function', () => {
    assert.deepEqual(Object.keys(VERSIONING).sort(), Object.keys(workflows).sort());
    for (const [name, fn] of Object.entries(workflows)) {
      const row = VERSIONING[name]!;
      assert.equal(row.workflow, fn, name);
      assert.ok(['PINNED', 'AUTO_UPGRADE'].includes(row.behavior), name);
      // named by a getter, on versioned workers only (workflows/versioning-behavior.ts; test/e2e/worker-versioning.test.ts runs both)
      assert.equal(typeof (fn as Defined).workflowDefinitionOptions, 'function', name);
    }
  });

  it("is the architecture guide's table", () => {
    const readme = readDoc('docs/architecture.md');
    for (const [name, row] of Object.entries(VERSIONING)) {
      assert.ok(readme.includes(`| \`${name}\` | ${row.behavior === 'PINNED' ? 'pinned' : 'auto-upgrade'} | ${row.why} |`), name);
    }
  });
});
