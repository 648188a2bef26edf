// The documents as a whole: README.md is a front door of at most 250 lines; nothing the README held
// before it was split into docs/ is lost (each of its headings is a heading of some document, by
// test/fixtures/readme-headings-before-split.txt); every relative link between documents reaches a
// file, and an anchor a heading of it; every ruling in docs/decisions/ is in its index.
import assert from 'node:assert/strict';
import { globSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { readDoc, repoRoot } from '../helpers/docs.ts';

const documents = ['README.md', 'CHANGELOG.md', ...globSync('docs/**/*.md', { cwd: repoRoot })].sort();

/** A document's headings, outside fenced code (a `# comment` in a shell block is no heading). */
function headings(text: string): string[] {
  let fenced = false;
  const found: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced) {
      const m = /^#{1,6} (.*)$/.exec(line);
      if (m) found.push(m[1]!);
    }
  }
  return found;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');

it('keeps README.md a front door of at most 250 lines', () => {
  assert.ok(readDoc('README.md').split('\n').length <= 250);
});

it('finds every heading of the README before the split in some document', () => {
  const before = readDoc('test/fixtures/readme-headings-before-split.txt').split('\n').filter(Boolean);
  const now = new Set(documents.flatMap((d) => headings(readDoc(d))));
  assert.ok(before.length > 80, 'the list of headings is read');
  assert.deepEqual(
    before.filter((h) => !now.has(h)),
    [],
  );
});

it('resolves every relative link between the documents, anchors included', () => {
  const broken: string[] = [];
  for (const doc of documents) {
    for (const [, target] of readDoc(doc).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue; // https:, mailto:
      const [file, hash] = target!.split('#') as [string, string | undefined];
      const rel = file ? path.normalize(path.join(path.dirname(doc), file)) : doc;
      let text: string;
      try {
        text = readDoc(rel);
      } catch {
        broken.push(`${doc} → ${target} (no such file)`);
        continue;
      }
      if (hash && !headings(text).map(anchor).includes(hash)) broken.push(`${doc} → ${target} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

it('lists every decision record in the index, and the index names only records that exist', () => {
  const records = globSync('docs/decisions/[0-9][0-9][0-9]-*.md', { cwd: repoRoot })
    .map((f) => path.basename(f))
    .sort();
  const listed = [...readDoc('docs/decisions/README.md').matchAll(/\]\((\d{3}-[^)]+\.md)\)/g)].map((m) => m[1]!).sort();
  assert.ok(records.length >= 40);
  assert.deepEqual(listed, records);
});
