// The error an HTTP handler throws for the client: its catalogue entry (domain/errors.ts) with the
// HTTP status and headers it is answered with, always rendered as `{ code, message, parameter }`.
import { errorCatalogue, type ErrorName, type ErrorSpec } from '../domain/errors.ts';

/** An error meant for the client: always rendered as `{ code, message, parameter }`. */
export class ApiError extends Error {
  readonly spec: ErrorSpec;
  readonly parameter: string;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(name: ErrorName, message: string, options: { parameter?: string; extra?: Record<string, unknown>; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'ApiError';
    this.spec = errorCatalogue[name];
    this.parameter = options.parameter ?? '';
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return this.spec.status;
  }

  body(): Record<string, unknown> {
    return { code: this.spec.code, message: this.message, parameter: this.parameter, ...this.extra };
  }
}
