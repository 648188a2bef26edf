import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { it } from 'node:test';
import { errorTableMarkdown } from '../../domain/error-table.ts';
import { SETTING_NAMES } from '../../runtime/config.ts';

it("keeps the README's error table equal to the error catalogue", async () => {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const table = readme.split('<!-- error-table:start')[1]?.split('<!-- error-table:end -->')[0]?.split('\n').slice(1).join('\n').trim();
  assert.equal(table, errorTableMarkdown(), 'run npm run docs:errors and paste its output into the README');
});

it('documents every setting the service reads in a table row of the README', async () => {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const rows = readme.split('\n').filter((l) => l.startsWith('| `'));
  const documented = new Set(rows.flatMap((r) => [...r.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!)));
  assert.deepEqual(
    SETTING_NAMES.filter((n) => !documented.has(n)),
    [],
    'add a row to the configuration table',
  );
});
