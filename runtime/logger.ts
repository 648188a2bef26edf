// Structured JSON logs. Every line written while a request is being handled carries its request id,
// taken from an AsyncLocalStorage scope that the request-id middleware opens.
import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type DestinationStream, type Logger } from 'pino';

export type LogContext = { requestId?: string; businessId?: string };

const context = new AsyncLocalStorage<LogContext>();

export function runWithLogContext<T>(ctx: LogContext, fn: () => T): T {
  return context.run(ctx, fn);
}

/** The current scope's context, mutable so later middleware (auth) can add the business. */
export function currentLogContext(): LogContext | undefined {
  return context.getStore();
}

export function createLogger(level: string, name = 'vouch', destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: () => ({ ...context.getStore() }),
    // an API key, and a webhook subscription's secret (it is in an answer's body only, never logged; this is the backstop)
    redact: { paths: ['apiKey', '*.apiKey', 'headers["x-vouch-api-key"]', 'secret', '*.secret'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}

export type { Logger };
