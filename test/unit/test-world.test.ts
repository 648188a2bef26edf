// The test world keeps one poll loop (test/helpers/eventually.ts): a loop elsewhere in the tests that
// sleeps and looks again is a copy of it that fails without saying what it awaited. Loops that do not
// wait (parsing, paging) are not polls. The spec client (test/spec-client/) is written from the
// interface document alone, on purpose without our helpers, and keeps its own.
import assert from 'node:assert/strict';
import { globSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';

const root = path.resolve(import.meta.dirname, '..', '..');
/**
 * The loop itself; the spec client (our helpers unseen by it); the attackers' floods and trickles,
 * whose loops pace what they send rather than wait for something; this file's samples.
 */
const EXEMPT = [
  path.join('test', 'helpers', 'eventually.ts'),
  path.join('test', 'spec-client', 'receiver.ts'),
  path.join('test', 'helpers', 'attacks.ts'),
  path.join('test', 'unit', 'test-world.test.ts'),
];

/** The loops in `source` that sleep and look again: a `for`/`while` whose body (braced, brace-matched, or one statement) waits on a timer. */
export function pollingLoops(source: string): string[] {
  const loops: string[] = [];
  for (const start of source.matchAll(/\b(?:for|while) \(/g)) {
    // the loop's head: to its matching parenthesis
    let depth = 0;
    let i = start.index + start[0].length - 1;
    for (; i < source.length; i++) {
      if (source[i] === '(') depth++;
      else if (source[i] === ')' && --depth === 0) break;
    }
    let j = i + 1;
    while (source[j] === ' ' || source[j] === '\n') j++;
    let end = j;
    if (source[j] === '{') {
      for (depth = 0; end < source.length; end++) {
        if (source[end] === '{') depth++;
        else if (source[end] === '}' && --depth === 0) break;
      }
    } else end = source.indexOf(';', j);
    const loop = source.slice(start.index, end + 1);
    if (/setTimeout\(|\bsleep\(|\bdelay\(/.test(loop)) loops.push(loop);
  }
  return loops;
}

it('finds a loop that sleeps and looks again, and passes one that parses', () => {
  const poll = 'for (;;) {\n  if (await done()) break;\n  await new Promise((r) => setTimeout(r, 50));\n}';
  const parse = 'for (;;) {\n  const end = buffered.indexOf("\\n");\n  if (end < 0) return;\n}';
  const timed = 'while (Date.now() < until) {\n  if (x) return;\n  await sleep(100);\n}';
  const oneLine = 'while ((await count()) < 5) await new Promise((r) => setTimeout(r, 10));';
  const counted = 'for (let i = 0; i < 50 && !(await ready()); i++) await new Promise((r) => setTimeout(r, 20));';
  const paging = 'for (const page of pages) walked.push(...page.items);';
  assert.deepEqual(pollingLoops([poll, parse, timed, oneLine, counted, paging].join('\n')), [poll, timed, oneLine, counted]);
});

it('has no poll loop in the tests but eventually()', () => {
  const found = globSync('test/**/*.ts', { cwd: root })
    .filter((f) => !EXEMPT.includes(f))
    .flatMap((f) => pollingLoops(readFileSync(path.join(root, f), 'utf8')).map((body) => `${f}: ${body.split('\n')[0]}`));
  assert.deepEqual(found, [], 'wait with eventually() from test/helpers/world.ts');
});
