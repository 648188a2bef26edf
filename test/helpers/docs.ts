// The documents as tests read them: a file of the repository's docs, and a table kept between
// `<!-- name:start … -->` and `<!-- name:end -->` markers (printed by an npm run docs:* script).
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const repoRoot = path.resolve(import.meta.dirname, '..', '..');

/** A document by its path from the repository's root (README.md, CHANGELOG.md, docs/…). */
export const readDoc = (rel: string) => readFileSync(path.join(repoRoot, rel), 'utf8');

/** The table between a document's markers, trimmed; undefined when the markers are missing. */
export function markedTable(rel: string, name: string): string | undefined {
  return readDoc(rel).split(`<!-- ${name}:start`)[1]?.split(`<!-- ${name}:end -->`)[0]?.split('\n').slice(1).join('\n').trim();
}
