import assert from 'node:assert/strict';
import { markedTable, readDoc } from '../helpers/docs.ts';
import { it } from 'node:test';
import { errorTableMarkdown } from '../../domain/error-table.ts';
import { SETTING_NAMES } from '../../runtime/config.ts';

it("keeps the API guide's error table equal to the error catalogue", () => {
  assert.equal(markedTable('docs/api/README.md', 'error-table'), errorTableMarkdown(), 'run npm run docs:errors and paste its output into docs/api/README.md');
});

it('documents every setting the service reads in a table row of the operations guide', () => {
  const rows = readDoc('docs/operations.md')
    .split('\n')
    .filter((l) => l.startsWith('| `'));
  const documented = new Set(rows.flatMap((r) => [...r.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!)));
  assert.deepEqual(
    SETTING_NAMES.filter((n) => !documented.has(n)),
    [],
    'add a row to the configuration table',
  );
});
