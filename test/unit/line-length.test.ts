// No line of code past 160 characters (prettier's printWidth, .prettierrc.json; `npm run format`
// wraps what it can, and long prose goes into named constants or concatenated strings). Generated
// code and recorded fixtures aside.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

const root = path.resolve(import.meta.dirname, '..', '..');
const MAX = 160;
const SKIP = new Set(['node_modules', 'dist', '.data', '.tools', '.git', 'fixtures']);
const GENERATED = new Set([path.join('client', 'schema.d.ts')]);

function* codeFiles(dir: string): Generator<string> {
  for (const name of readdirSync(path.join(root, dir))) {
    if (SKIP.has(name)) continue;
    const rel = path.join(dir, name);
    if (statSync(path.join(root, rel)).isDirectory()) yield* codeFiles(rel);
    else if (/\.(ts|cjs|mjs|js)$/.test(name) && !GENERATED.has(rel)) yield rel;
  }
}

describe('line length', () => {
  it(`has no line of code longer than ${MAX} characters`, () => {
    const long: string[] = [];
    for (const file of codeFiles('.')) {
      readFileSync(path.join(root, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (line.length > MAX) long.push(`${file}:${i + 1} (${line.length})`);
        });
    }
    assert.deepEqual(long, []);
  });
});
