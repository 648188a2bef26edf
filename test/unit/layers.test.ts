// The import rules between layers (dependency-cruiser.config.cjs) hold for every file, with no
// exception, and docs/architecture.md's layer table is the one printed from those rules.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { it } from 'node:test';
import { promisify } from 'node:util';
import { layerTableMarkdown } from '../../scripts/layers.ts';
import { markedTable } from '../helpers/docs.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const require = createRequire(import.meta.url);

it('finds no import that breaks the layer rules', async () => {
  const bin = path.join(root, 'node_modules', '.bin', 'depcruise');
  const { stdout } = await promisify(execFile)(bin, ['--config', 'dependency-cruiser.config.cjs', '--output-type', 'json', ...LINTED], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
  const result = JSON.parse(stdout) as { summary: { violations: { rule: { name: string }; from: string; to: string }[]; totalCruised: number } };
  assert.deepEqual(
    result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`),
    [],
  );
  assert.ok(result.summary.totalCruised > 100, 'the rules saw the code');
});

/** The rules' violations for a handful of files written into an empty folder: path → source. */
async function violationsOf(files: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vouch-layers-'));
  try {
    for (const [file, source] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), source);
    }
    const bin = path.join(root, 'node_modules', '.bin', 'depcruise');
    const config = path.join(root, 'dependency-cruiser.config.cjs');
    const { stdout } = await promisify(execFile)(bin, ['--config', config, '--output-type', 'json', ...Object.keys(files)], { cwd: dir }).catch(
      (err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }),
    );
    const result = JSON.parse(stdout) as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
    return result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

it('keeps what a change triggers out of store/: a store file may not write events nor reach onboarding/; onboarding/ may', async () => {
  const files = {
    'store/events.ts': 'export const recordEvent = 1;\n',
    'store/rows.ts':
      "import { recordEvent } from './events.ts';\nimport { follow } from '../onboarding/follow.ts';\nexport const rows = [recordEvent, follow];\n",
    'onboarding/follow.ts': "import { recordEvent } from '../store/events.ts';\nexport const follow = recordEvent;\n",
  };
  assert.deepEqual(await violationsOf(files), [
    'store-imports: store/rows.ts → onboarding/follow.ts',
    'store-records-no-events: store/rows.ts → store/events.ts',
  ]);
});

it("keeps the architecture guide's layer table equal to the rules", () => {
  assert.equal(
    markedTable('docs/architecture.md', 'layer-table'),
    layerTableMarkdown(),
    'run npm run docs:layers and paste its output into docs/architecture.md',
  );
});

it('lints every layer', () => {
  const { LAYERS } = (require('../../dependency-cruiser.config.cjs') as { layers: { LAYERS: Record<string, { path: string }> } }).layers;
  const missing = Object.entries(LAYERS).filter(([, l]) => !LINTED.some((target) => new RegExp(l.path).test(target.endsWith('.ts') ? target : `${target}/`)));
  assert.deepEqual(
    missing.map(([name]) => name),
    [],
    'add the layer to the lint:deps script',
  );
});

/** What `npm run lint:deps` checks (its arguments after the configuration): the service's code; tooling may import anything. */
const LINTED = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['lint:deps']!.split(
  /\s+/,
).slice(3);

it('keeps routes off the configuration: they read context.settings (usecases/context.ts), never context.config', async () => {
  const dir = path.join(root, 'api', 'routes');
  const { readdirSync } = await import('node:fs');
  const readers = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .filter((f) => /\bcontext\.config\b|\bconfig\./.test(readFileSync(path.join(dir, f), 'utf8')));
  assert.deepEqual(readers, []);
});
