// `npm install` on a machine whose own Node.js is older than the packages want (issue 40): npm runs on
// that Node.js, Vouch on the one pinned in node_modules, so npm's engine warnings — one per package,
// 160 lines — speak of a Node.js nothing runs on. .npmrc hides npm's warnings (errors still print) and
// the postinstall names both versions in one line.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { nodeVersionsLine } from '../../scripts/install-tools.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
/** PATH without node_modules/.bin: the npm and Node.js a newcomer's shell finds. */
const systemPath = (process.env.PATH ?? '')
  .split(path.delimiter)
  .filter((dir) => !dir.includes('node_modules'))
  .join(path.delimiter);

describe('npm install', () => {
  it("prints no warning about engines, whatever Node.js npm runs on (this machine's is 20)", (t) => {
    const npmNode = spawnSync('node', ['--version'], { env: { ...process.env, PATH: systemPath }, encoding: 'utf8' }).stdout.trim();
    if (!npmNode) return t.skip('no Node.js on PATH besides the pinned one');
    // the lockfile's tree checked as npm install checks it, without fetching or running anything
    const res = spawnSync('npm', ['install', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: root,
      env: { ...process.env, PATH: systemPath },
      encoding: 'utf8',
    });
    assert.equal(res.status, 0, res.stderr);
    assert.doesNotMatch(res.stdout + res.stderr, /EBADENGINE|npm warn/, `npm on Node.js ${npmNode}`);
    // and the same check does warn once the file's setting is overridden: it is what hides them
    const loud = spawnSync('npm', ['install', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=warn'], {
      cwd: root,
      env: { ...process.env, PATH: systemPath },
      encoding: 'utf8',
    });
    if (Number(npmNode.slice(1).split('.')[0]) < 22) assert.match(loud.stdout + loud.stderr, /EBADENGINE/, 'npm on an older Node.js warns without .npmrc');
  });

  it('the postinstall names the Node.js npm ran on and the pinned one, once, when they differ', () => {
    const pinned = execFileSync(path.join(root, 'node_modules', '.bin', 'node'), ['--version'], { encoding: 'utf8' }).trim();
    assert.match(pinned, /^v24\./, 'Node.js 24 LTS is pinned');
    const line = nodeVersionsLine('npm/11.19.1 node/v20.20.2 linux x64 workspaces/false', pinned);
    assert.equal(
      line,
      `npm ran on Node.js v20.20.2; Vouch runs on Node.js ${pinned}, pinned in node_modules ` +
        "(npm's warnings about engines are about npm's Node.js: .npmrc hides them)",
    );
    assert.equal(nodeVersionsLine(`npm/11.19.1 node/${pinned} linux x64 workspaces/false`, pinned), undefined);
    assert.equal(nodeVersionsLine(undefined, pinned), undefined);
  });
});
