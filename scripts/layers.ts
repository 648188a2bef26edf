// The layer rules of dependency-cruiser.config.cjs, for docs/architecture.md's table and the tests.
import { createRequire } from 'node:module';

type Layer = { path: string; holds: string; may: string[]; typesFrom?: string[] };
const { LAYERS, TOOLING } = (
  createRequire(import.meta.url)('../dependency-cruiser.config.cjs') as { layers: { LAYERS: Record<string, Layer>; TOOLING: { path: string; holds: string } } }
).layers;

const where = (path: string) =>
  path
    .replace(/^\^/, '')
    .replace(/\\\./g, '.')
    .replace(/\$$/, '')
    .replace(/^\((.*)\)\/$/, (_, alt: string) =>
      alt
        .split('|')
        .map((a) => `${a}/`)
        .join(', '),
    );

/** docs/architecture.md's layer table: each layer, where it lives, what it holds, what it may import. */
export function layerTableMarkdown(): string {
  const rows = Object.entries(LAYERS).map(([name, l]) => {
    const may = [...l.may.map((m) => `\`${m}\``), ...(l.typesFrom ?? []).map((t) => `types of \`${t}\``)];
    return `| \`${name}\` | \`${where(l.path)}\` | ${l.holds} | ${may.length ? may.join(', ') : 'nothing of ours'} |`;
  });
  rows.push(`| tooling | \`${where(TOOLING.path)}\` | ${TOOLING.holds} | anything |`);
  return ['| layer | where | holds | may import |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

if (import.meta.main) process.stdout.write(`${layerTableMarkdown()}\n`);
