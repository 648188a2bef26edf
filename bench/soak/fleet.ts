// The soak's processes (bench/soak.ts): each a slot — api-1, worker-general, … — that runs one
// entry point of the project as a child process (`node <entry>.ts`, as docs/operations.md, "Production:
// separate processes" runs them), its output appended to a log file of the run (never kept in
// memory: a 30-minute run logs tens of megabytes), started again in the same slot after a stop or
// a kill, and probed on its own /health until it answers 200.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { SETTINGS } from '../../runtime/config.ts';
import { root } from '../../test/helpers/processes.ts';

export type Incarnation = { pid: number; startedAt: number; readyAt: number | null; exitedAt: number | null; exit: string | null };

export type Slot = {
  name: string;
  kind: 'api' | 'worker' | 'simulator';
  /** Where its /health answers (API port, worker metrics port, the simulator's /_sim/scenarios). */
  healthUrl: string;
  logFile: string;
  child: ChildProcess | null;
  /** True from its /health's first 200 until we stop it or it exits. */
  up: boolean;
  /** We are stopping it: its exit is no crash. */
  stopping: boolean;
  incarnations: Incarnation[];
};

/** The environment of a child: ours without any Vouch setting of the shell (they would leak into the fleet), then the slot's. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(SETTINGS)) delete base[name];
  for (const name of ['TEST_DATABASE_URL', 'TEST_POSTGRES_URL', 'NODE_OPTIONS']) delete base[name];
  return { ...base, ...env };
}

export function createSlot(name: string, kind: Slot['kind'], healthUrl: string, logDir: string): Slot {
  return { name, kind, healthUrl, logFile: path.join(logDir, `${name}.log`), child: null, up: false, stopping: false, incarnations: [] };
}

/** Starts the slot's entry point; resolves once its /health answers 200 (rejects if it exits first or `timeoutMs` passes). */
export async function startSlot(slot: Slot, entry: string, env: Record<string, string>, timeoutMs = 120_000): Promise<Incarnation> {
  const fd = openSync(slot.logFile, 'a');
  writeSync(fd, `\n===== soak: starting ${slot.name} (${entry}) at ${new Date().toISOString()} =====\n`);
  const child = spawn(process.execPath, [entry], { cwd: root, env: childEnv(env), stdio: ['ignore', fd, fd] });
  closeSync(fd); // the child holds its own copy
  const inc: Incarnation = { pid: child.pid!, startedAt: Date.now(), readyAt: null, exitedAt: null, exit: null };
  slot.stopping = false;
  slot.incarnations.push(inc);
  slot.child = child;
  child.once('exit', (code, signal) => {
    inc.exitedAt = Date.now();
    inc.exit = signal ?? String(code);
    if (slot.child === child) slot.up = false;
  });
  const deadline = Date.now() + timeoutMs;
  while (inc.exitedAt === null) {
    try {
      const res = await fetch(slot.healthUrl, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === 200) {
        inc.readyAt = Date.now();
        slot.up = true;
        return inc;
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${slot.name} did not answer ${slot.healthUrl} within ${timeoutMs} ms; log: ${slot.logFile}\n${logTail(slot)}`);
    await sleep(250);
  }
  throw new Error(`${slot.name} exited (${inc.exit}) before it was ready; log: ${slot.logFile}\n${logTail(slot)}`);
}

/** Sends the signal and resolves when the process has exited (SIGKILL after `graceMs`): how it ended and how long it took. */
export async function stopSlot(slot: Slot, signal: NodeJS.Signals, graceMs = 30_000): Promise<{ exit: string; ms: number; forced: boolean }> {
  const child = slot.child;
  const inc = slot.incarnations.at(-1);
  // a graceful stop leaves the load balancer first (Kubernetes takes the endpoint out before SIGTERM);
  // a SIGKILL is a crash: clients find out by their requests failing, the health check a moment later
  if (signal !== 'SIGKILL') slot.up = false;
  slot.stopping = true;
  const started = Date.now();
  if (!child || !inc || inc.exitedAt !== null) return { exit: inc?.exit ?? 'not running', ms: 0, forced: false };
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  let forced = false;
  const timer = setTimeout(() => {
    forced = true;
    child.kill('SIGKILL');
  }, graceMs);
  await exited;
  clearTimeout(timer);
  return { exit: inc.exit ?? '?', ms: Date.now() - started, forced };
}

export function logTail(slot: Slot, bytes = 3000): string {
  try {
    const text = readFileSync(slot.logFile, 'utf8');
    return text.slice(-bytes);
  } catch {
    return '';
  }
}

/** Resident memory of a process in MB (/proc/<pid>/status VmRSS), or null once it is gone. */
export function rssMb(pid: number): number | null {
  try {
    const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB$/m);
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/**
 * The V8 heap a process uses (MB): its main thread's (`vouch_nodejs_heap_size_used_bytes`) and, in
 * the workers, its workflow threads' (`vouch_workflow_threads_heap_used_bytes`, where the sticky
 * cache's workflows live), from its /metrics; null when it does not answer.
 */
export async function heapUsedMb(metricsUrl: string): Promise<number | null> {
  try {
    const res = await fetch(metricsUrl, { signal: AbortSignal.timeout(2000) });
    const text = await res.text();
    const bytes = (name: string) => {
      const m = text.match(new RegExp(`^${name} (\\d+(?:\\.\\d+)?(?:e\\+\\d+)?)$`, 'm'));
      return m ? Number(m[1]) : null;
    };
    const main = bytes('vouch_nodejs_heap_size_used_bytes');
    return main === null ? null : (main + (bytes('vouch_workflow_threads_heap_used_bytes') ?? 0)) / 1024 / 1024;
  } catch {
    return null;
  }
}

/** CPU seconds a process has used (user + system, /proc/<pid>/stat), or null once it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
}

/** Lines of a slot's log (all its incarnations) at level warn or above, grouped by message: what went wrong, how often. */
export function logProblems(slot: Slot, limit = 12): { level: string; msg: string; count: number }[] {
  let text = '';
  try {
    text = readFileSync(slot.logFile, 'utf8');
  } catch {
    return [];
  }
  const counts = new Map<string, { level: string; msg: string; count: number }>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let parsed: { level?: number | string; msg?: string; error?: { type?: string }; err?: { type?: string; message?: string } };
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      continue;
    }
    const level = typeof parsed.level === 'number' ? ({ 40: 'warn', 50: 'error', 60: 'fatal' } as Record<number, string>)[parsed.level] : parsed.level;
    if (!level || !['warn', 'error', 'fatal'].includes(level)) continue;
    const cause = parsed.error?.type ?? parsed.err?.message?.slice(0, 80);
    const msg = `${String(parsed.msg ?? '').slice(0, 160)}${cause ? ` (${cause})` : ''}`;
    const key = `${level}|${msg}`;
    const entry = counts.get(key) ?? { level, msg, count: 0 };
    entry.count++;
    counts.set(key, entry);
  }
  return [...counts.values()].sort((a, b) => b.count - a.count).slice(0, limit);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
