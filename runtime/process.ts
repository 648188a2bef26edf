// Process lifecycle for every entry point: config, logger, and a graceful shutdown on SIGINT,
// SIGTERM or SIGHUP that runs clean-ups in reverse order of registration (last opened, first closed).
import { chmodSync, mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import { ConfigError, loadProcessConfig, type Config } from './config.ts';
import { createLogger } from './logger.ts';
import { withSimulatorCredentials } from './simulator-credentials.ts';
import { setProcessActor } from '../store/audit-actor.ts';

export type ProcessContext = {
  config: Config;
  log: Logger;
  onShutdown(fn: () => Promise<unknown> | unknown): void;
  /** Stops the process after a failure that it cannot go on from. */
  fatal(err: unknown): void;
};

/**
 * Files and directories this process makes are its own: mode 600 and 700 (keys, the embedded
 * database, received uploads, the Temporal dev server's state), and DATA_DIR is 700.
 */
export function privateFiles(dataDir: string): void {
  process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
}

export async function runProcess(name: string, main: (ctx: ProcessContext) => Promise<unknown>): Promise<void> {
  let config: Config;
  try {
    config = loadProcessConfig(); // VOUCH_ENVIRONMENT named (npm start names the sandbox itself)
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  privateFiles(config.dataDir);
  withSimulatorCredentials(config);
  // what this process writes outside a request or an activity is audited as the process itself
  setProcessActor({ type: 'system', id: `vouch-${name}` });
  const log = createLogger(config.logLevel, `vouch-${name}`);
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  let stopping: Promise<void> | undefined;

  const stop = (exitCode: number, reason: string) => {
    stopping ??= (async () => {
      log.info({ reason }, 'shutting down');
      const timer = setTimeout(() => {
        log.error({ graceMs: config.shutdownGraceMs }, 'shutdown took too long; exiting');
        process.exit(exitCode || 1);
      }, config.shutdownGraceMs);
      timer.unref();
      for (const [i, fn] of cleanups.reverse().entries()) {
        const started = performance.now();
        try {
          await fn();
        } catch (err) {
          log.warn({ err }, 'clean-up step failed');
        }
        const ms = Math.round(performance.now() - started);
        if (ms > 2000) log.warn({ step: i + 1, of: cleanups.length, ms }, 'a clean-up step was slow');
      }
      log.info('stopped');
      process.exit(exitCode);
    })();
    return stopping;
  };

  process.once('SIGINT', () => void stop(0, 'SIGINT'));
  process.once('SIGTERM', () => void stop(0, 'SIGTERM'));
  process.once('SIGHUP', () => void stop(0, 'SIGHUP')); // the terminal closed: children in their own group are stopped by us
  const fatal = (err: unknown) => {
    if (stopping) return void log.warn({ err }, 'error while stopping');
    log.fatal({ err }, 'fatal error');
    void stop(1, 'fatal error');
  };
  process.on('unhandledRejection', fatal);

  try {
    await main({ config, log, onShutdown: (fn) => cleanups.push(fn), fatal });
  } catch (err) {
    fatal(err);
  }
}
