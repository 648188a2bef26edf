// The error table of docs/api/README.md, made from the catalogue so the two cannot drift (a test compares them).
import { errorCatalogue } from './errors.ts';

export function errorTableMarkdown(): string {
  const rows = Object.values(errorCatalogue).map((e) => `| \`${e.code}\` | ${e.status} | ${e.summary} |`);
  return ['| code | HTTP | meaning |', '| --- | --- | --- |', ...rows].join('\n');
}
