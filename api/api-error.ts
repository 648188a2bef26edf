// The error an HTTP handler throws for the client: its catalogue entry (domain/errors.ts) with the
// HTTP status and headers it is answered with, always rendered as `{ code, message, parameter }`.
import { clip } from '../domain/audit-bounds.ts';
import { errorCatalogue, type ErrorName, type ErrorSpec } from '../domain/errors.ts';

/** The longest message and parameter an error answer carries (a message quoting a caller's text never grows with it). */
const MESSAGE_MAX_CHARS = 2000;
const PARAMETER_MAX_CHARS = 256;

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

  /** The answer: its message and parameter bounded, whatever of the caller's text they quote. */
  body(): Record<string, unknown> {
    return { code: this.spec.code, message: clip(this.message, MESSAGE_MAX_CHARS), parameter: clip(this.parameter, PARAMETER_MAX_CHARS), ...this.extra };
  }
}
