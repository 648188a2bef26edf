// Runs the project's own entry points as child processes, the way a user or an operator would.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '..', '..');

/** The test process's environment with `env` laid over it; an undefined value removes the variable. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  // worker processes of test files that run at once would share the default metrics port: off unless a test asks
  const merged: NodeJS.ProcessEnv = { ...process.env, WORKER_METRICS_PORT: '0', ...env };
  for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k];
  return merged;
}

export type Running = {
  child: ChildProcess;
  output(): string;
  /** Resolves when the output matches, rejects if the process exits first or time runs out. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends the signal (to its whole process group when started as one, as a terminal's Ctrl-C does) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
};

/** `group`: the process leads a process group of its own, as a command started from a terminal does. */
export function start(script: string, args: string[], env: Record<string, string | undefined>, options: { group?: boolean } = {}): Running {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: root,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.group ?? false,
  });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(pattern);
          if (m) {
            cleanup();
            resolve(m);
          }
        };
        const timer = setTimeout(() => (cleanup(), reject(new Error(`timed out waiting for ${pattern}; output:\n${out.slice(-3000)}`))), timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        void exited.then(
          (code) => (cleanup(), reject(new Error(`exited (${code}) before ${pattern}; first errors:\n${firstErrors(out)}\noutput:\n${out.slice(-3000)}`))),
        );
        listeners.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        if (options.group) process.kill(-child.pid!, signal);
        else child.kill(signal);
      }
      return exited;
    },
  };
}

/** Runs a command to completion. */
export function run(
  script: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: root, env: childEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The first lines that name an error or panic (a panic's cause is at its head, far above the tail). */
function firstErrors(out: string): string {
  return out
    .split(/\n|\\n/)
    .filter((l) => /panic|error|fatal|address already in use/i.test(l))
    .slice(0, 8)
    .map((l) => l.slice(0, 400))
    .join('\n');
}
