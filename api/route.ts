// A route is declared once, with the schemas that validate its input and describe its output.
// app.ts registers it (validation included) and openapi.ts documents it from the same object.
// Its handler calls one use case and returns that use case's outcome; api/outcome.ts turns the
// outcome into the response. A success response's schema is declared once, in domain/ or beside the
// use case, and the use case's result type is derived from it; route() checks the tie at compile time.
import type { Context } from 'koa';
import type { z } from 'zod';
import type { ErrorName } from '../domain/errors.ts';
import type { Outcome } from '../domain/outcome.ts';
import type { Business } from '../store/businesses.ts';

/** The groups of operations, in the order a reader meets them. */
export const TAGS = [
  { name: 'Entities', description: 'Your cardholders (INDIVIDUAL) and business customers (BUSINESS), with their requirement values.' },
  { name: 'Features', description: 'What an entity can be enabled for, and what each feature requires.' },
  { name: 'Token sharing', description: 'Onboard applicants already verified at the identity provider: a CSV of share tokens (batch) or one now (sync).' },
  {
    name: 'Requirement batches',
    description:
      'Submit many requirement values at once (interface v1.1.0): a JSON Lines file of records — canonical KYC data of ' +
      'people, or any requirement POST /entity takes — each checked as its single request would be.',
  },
  {
    name: 'Verification',
    description:
      "Verify a person — the identity provider's hosted SDK or universal KYC (your verified data " +
      'and documents) — and read or check a signed payload of the verified data. Decisions arrive' +
      ' by webhook.',
  },
  {
    name: 'Business verification',
    description:
      'Verify a business (universal KYB): its profile and declared owners, its documents and its ' +
      "owners' documents, the document manifest, downloads, and the submission whose decision " +
      'arrives by webhook (kyb_status_change).',
  },
  {
    name: 'Record',
    description: "The compliance record: your business's audit log and an entity's history — who did what, when, provably.",
  },
  { name: 'Webhooks', description: 'Where decisions are sent, every delivery attempt, redelivery, and the keys that verify signatures.' },
  {
    name: 'Operations',
    description:
      "Health, metrics, the Temporal codec endpoint for operators' tools, this document and its " +
      'reference page. No API key (metrics and the codec need their own token outside the ' +
      'sandbox).',
  },
] as const;

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export type RouteInput<P, Q, B> = { params: P; query: Q; body: B; business: Business; ctx: Context };

/** How a successful value is sent when not as the body of the route's one 2xx response. */
export type Presented<Body = unknown> = { status?: number; body?: Body; headers?: Record<string, string> };

/** A documented response: a JSON body unless `contentType` says otherwise; no schema, no body. */
export type ResponseDoc = { description: string; schema?: z.ZodType; contentType?: string };
type Responses = Record<number, ResponseDoc>;

/**
 * What a route's success may send, read off its 2xx responses: the input side of a JSON response's
 * schema (the value is sent as it is, never parsed on the way out), undefined where a response has
 * no body, anything where it is not JSON (a stream or a text, which `present` hands over).
 */
export type SuccessBody<R> = {
  [S in keyof R]: `${S & number}` extends `2${string}`
    ? R[S] extends { contentType: string }
      ? unknown
      : R[S] extends { schema: infer Z extends z.ZodType }
        ? z.input<Z>
        : undefined
    : never;
}[keyof R];

export type Route<P = any, Q = any, B = any, T = any, Body = unknown> = {
  method: Method;
  /** Koa-style path, e.g. /entity/:entityId */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: (typeof TAGS)[number]['name'];
  /** false for the operational endpoints (health, docs) that carry no client data. */
  auth?: boolean;
  /** Requires `Accept-Version: v1.0` (the interface's list endpoints). */
  versioned?: boolean;
  /** A per-business limit of this route's own, on top of the general one (counted across API processes). */
  rateLimit?: { bucket: string; perSecond: number };
  /** Headers the handler reads itself (documented only; the handler validates them). */
  docHeaders?: { name: string; required: boolean; description: string; schema?: Record<string, unknown> }[];
  /** A non-JSON request body the handler reads itself (documented only). */
  docBody?: { contentType: string; schema: Record<string, unknown> };
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  responses: Responses;
  /** Errors this route can answer beyond those every authenticated route can. */
  errors?: ErrorName[];
  handler(input: RouteInput<P, Q, B>): Promise<Outcome<T>> | Outcome<T>;
  /** Status, body and headers of a success, where they are not the 2xx response and the value. */
  present?(value: T): Presented<Body>;
};

/**
 * Keeps the generic parameters inferred from the schemas while typing the handler, and ties the
 * handler's value to the success response at compile time: without `present` the value is the body,
 * so it must fit the input side of the 2xx response's schema (a use case that drifts from the schema
 * fails `tsc`); with `present`, the body present() makes must.
 */
export function route<P = undefined, Q = undefined, B = undefined, T = unknown, R extends Responses = Responses>(
  r: Route<P, Q, B, T, SuccessBody<R>> & { responses: R; present(value: T): Presented<SuccessBody<R>> },
): Route<P, Q, B, T>;
export function route<P = undefined, Q = undefined, B = undefined, T extends SuccessBody<R> = never, R extends Responses = Responses>(
  r: Route<P, Q, B, T> & { responses: R; present?: undefined },
): Route<P, Q, B, T>;
export function route(r: Route): Route {
  return r;
}
