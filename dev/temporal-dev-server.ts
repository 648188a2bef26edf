// Runs `temporal server start-dev` as a child process and waits until its frontend answers.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { devServerSearchAttributeFlags } from '../temporal/search-attributes.ts';
import { requireTemporalCli } from './temporal-cli.ts';

const DEV_DYNAMIC_CONFIG = {
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
  // tasks of a queue handed out to its fairness keys (our businesses) in turn, not first come first served
  'matching.enableFairness': true,
};

export type TemporalDevServer = { address: string; uiUrl: string | undefined; process: ChildProcess; stop(): Promise<void> };

export async function startTemporalDevServer(options: {
  port: number;
  uiPort?: number;
  /** Persist state in this directory; in memory when absent. */
  dataDir?: string;
  namespace?: string;
  headless?: boolean;
  logLevel?: string;
  /** The Web UI decodes payloads through this codec server (our API's /codec). */
  uiCodecEndpoint?: string;
  /** Dynamic config beside ours (benchmarks comparing settings). */
  dynamicConfig?: Record<string, string | number | boolean>;
  /**
   * Its own process group (npm start): a terminal's Ctrl-C, sent to the whole foreground group,
   * then reaches only our process, which stops the server last, after the workers have drained.
   */
  ownProcessGroup?: boolean;
}): Promise<TemporalDevServer> {
  const cli = requireTemporalCli();
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--log-level', options.logLevel ?? 'error'];
  // One partition per task queue: the provider queue's rate limit and priorities are then enforced
  // exactly (with the default four, each partition gets a quarter of the rate and its own priority
  // order, and a batch reached 91 % of the limit). Fairness: each run of a business carries it as its
  // fairness key (temporal/starters.ts), so a small batch is not queued behind a large one of another
  // business. Real clusters: see docs/architecture.md, "Task queues on a real cluster", and docs/guarantees.md, "Fair shares".
  for (const [key, value] of Object.entries({ ...DEV_DYNAMIC_CONFIG, ...options.dynamicConfig })) args.push('--dynamic-config-value', `${key}=${value}`);
  args.push(...devServerSearchAttributeFlags()); // BusinessId, BatchId, EntityId, VouchStatus (operators filter runs by them)
  if (options.namespace && options.namespace !== 'default') args.push('--namespace', options.namespace);
  if (options.dataDir) {
    await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
    args.push('--db-filename', path.join(options.dataDir, 'temporal.db'));
  }
  if (options.headless || options.uiPort === undefined) args.push('--headless');
  else args.push('--ui-port', String(options.uiPort));
  if (options.uiCodecEndpoint && !args.includes('--headless')) args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
  const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: options.ownProcessGroup ?? false });
  const output = new OutputKeeper(); // some refusals (a port in use) are printed on stdout
  child.stdout?.on('data', (chunk: Buffer) => output.add(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.add(chunk.toString()));
  const address = `127.0.0.1:${options.port}`;
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`temporal dev server exited (${code}): ${output.text()}`))));
  exited.catch(() => {});
  await Promise.race([waitForFrontend(address, () => child.exitCode !== null || child.signalCode !== null), exited]);
  return {
    address,
    uiUrl: options.headless || options.uiPort === undefined ? undefined : `http://127.0.0.1:${options.uiPort}`,
    process: child,
    stop: () => stopChild(child),
  };
}

/** Polls until the frontend answers; gives up when the server process has exited (its exit is the error). */
async function waitForFrontend(address: string, exited: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited()) return;
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`Temporal at ${address} did not come up: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Keeps the start of a process's output (where a Go panic or fatal error names its cause) and its end. */
class OutputKeeper {
  private head = '';
  private tail = '';
  private dropped = false;
  private readonly limit = 3000;
  add(chunk: string): void {
    if (this.head.length < this.limit) {
      const room = this.limit - this.head.length;
      this.head += chunk.slice(0, room);
      chunk = chunk.slice(room);
    }
    const tail = this.tail + chunk;
    if (tail.length > this.limit) this.dropped = true;
    this.tail = tail.slice(-this.limit);
  }
  text(): string {
    return `${this.head}${this.dropped ? '\n…\n' : ''}${this.tail}`.trim();
  }
}
