// OpenAPI 3.1 document built from the same route objects (and zod schemas) that validate requests.
import { SUPPORTED_VERSIONS } from './middleware/versioning.ts';
import { z } from 'zod';
import { errorTableMarkdown } from '../domain/error-table.ts';
import { errorCatalogue, type ErrorName } from '../domain/errors.ts';
import { API_KEY_HEADER } from './middleware/auth.ts';
import { TAGS, type Route } from './route.ts';
import { webhookEventsDoc } from './webhook-events.ts';

type JsonSchema = Record<string, unknown>;

/**
 * The interface release this API implements (spec 9.2), the API description's version. v1.1.0:
 * batch requirement submissions and multi-member feature assignments, as the spec announces them
 * (CHANGELOG.md, "Changelog"); v1.0.2 before it.
 */
export const INTERFACE_RELEASE = '1.1.0';

const toSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
};

const errorBody: JsonSchema = {
  type: 'object',
  required: ['code', 'message', 'parameter'],
  properties: {
    code: { type: 'string', pattern: '^\\d{10}$', description: 'Stable 10-digit error code (see the README error table)' },
    message: { type: 'string' },
    parameter: { type: 'string', description: 'The header, field or parameter at fault; empty when none' },
  },
};

const AUTH_ERRORS: ErrorName[] = ['authMissingKey', 'authInvalidKey', 'rateLimited', 'internal'];

function parameters(r: Route) {
  const out: JsonSchema[] = [];
  for (const [where, schema] of [
    ['path', r.params],
    ['query', r.query],
  ] as const) {
    if (!schema) continue;
    const json = toSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, prop] of Object.entries(json.properties ?? {})) {
      out.push({ name, in: where, required: where === 'path' || (json.required ?? []).includes(name), schema: prop });
    }
  }
  if (r.versioned) out.push({ name: 'Accept-Version', in: 'header', required: true, schema: { type: 'string', enum: [...SUPPORTED_VERSIONS] } });
  for (const h of r.docHeaders ?? [])
    out.push({ name: h.name, in: 'header', required: h.required, description: h.description, schema: h.schema ?? { type: 'string' } });
  return out;
}

function responses(r: Route) {
  const out: Record<string, JsonSchema> = {};
  for (const [status, res] of Object.entries(r.responses)) {
    out[status] = res.schema
      ? { description: res.description, content: { [res.contentType ?? 'application/json']: { schema: toSchema(res.schema, 'output') } } }
      : { description: res.description };
  }
  // every JSON body can be malformed, too large or of another type (one place: app.ts reads them all)
  const bodyErrors: ErrorName[] = r.body ? ['malformedJson', 'unsupportedMediaType', 'bodyTooLarge'] : [];
  // every route: an address that keeps earning 401s is refused before routing (api/middleware/auth-failure-limit.ts)
  const errors = [...new Set([...(r.errors ?? []), ...bodyErrors, ...(r.auth === false ? [] : AUTH_ERRORS), 'authFailuresRateLimited' as const])];
  const byStatus = new Map<number, string[]>();
  for (const name of errors) {
    const spec = errorCatalogue[name];
    byStatus.set(spec.status, [...(byStatus.get(spec.status) ?? []), `\`${spec.code}\` ${spec.summary}`]);
  }
  for (const [status, lines] of byStatus) {
    out[String(status)] = { description: lines.join('\n\n'), content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  }
  return out;
}

export function buildOpenApi(routes: Route[], info: { serverUrl?: string } = {}) {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:(\w+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: [r.tag],
      ...(r.auth === false ? { security: [] } : {}),
      parameters: parameters(r),
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: toSchema(r.body, 'input') } } } } : {}),
      ...(r.docBody ? { requestBody: { required: true, content: { [r.docBody.contentType]: { schema: r.docBody.schema } } } } : {}),
      responses: responses(r),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Vouch compliance onboarding API',
      version: INTERFACE_RELEASE,
      description: [
        'KYC and KYB onboarding for card-issuing programs.',
        `Authenticate with your API key in the \`${API_KEY_HEADER}\` header.`,
        '## Errors',
        'Every error body is `{ code, message, parameter }`: a stable 10-digit code, a message for ' +
          'people, and the header, field or parameter at fault (empty when none). Some errors add ' +
          'fields (`requestId`, `batchId`, `errorKey`, `reason`, `details`).',
        errorTableMarkdown(),
      ].join('\n\n'),
    },
    servers: info.serverUrl ? [{ url: info.serverUrl }] : [],
    tags: TAGS.filter((t) => routes.some((r) => r.tag === t.name)),
    security: [{ apiKey: [] }],
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: API_KEY_HEADER } },
      schemas: { Error: errorBody },
    },
    paths,
    webhooks: webhookEventsDoc((schema) => toSchema(schema, 'output')),
  };
}

export type OpenApiDocument = ReturnType<typeof buildOpenApi>;

/** Headers a refusal may name that no operation lists as a parameter (the key is a security scheme; the rest are read by middleware). */
const HEADERS_NAMED = [API_KEY_HEADER, 'Content-Type', 'Authorization', 'Idempotency-Key', 'Accept-Version'];

/**
 * Every name the API document defines — its schemas' properties, its operations' parameters and the
 * headers it reads — for recording a refused request's parameter by its shape (domain/audit-bounds.ts):
 * a name the caller made up is never recorded.
 */
export function apiVocabulary(doc: OpenApiDocument): Set<string> {
  const names = new Set<string>(HEADERS_NAMED);
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!v || typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    if (o.properties && typeof o.properties === 'object') for (const k of Object.keys(o.properties)) names.add(k);
    if (typeof o.in === 'string' && typeof o.name === 'string') names.add(o.name);
    for (const x of Object.values(o)) walk(x);
  };
  walk(doc.paths);
  walk(doc.components);
  return names;
}
