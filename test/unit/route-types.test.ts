// route() (api/route.ts) ties a handler's value to its success response's schema at compile time:
// the value must fit the input side of the 2xx schema, or present() must make a body that does.
// The checks are the @ts-expect-error lines, verified by `tsc -p .` (npm run typecheck); a line
// that stops failing to compile fails the typecheck. At run time the test only builds the routes.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { z } from 'zod';
import { route } from '../../api/route.ts';
import { done, refuse } from '../../domain/outcome.ts';

const answer = z.object({ id: z.uuid(), count: z.number().int(), note: z.string().optional() });
const ok = { 200: { description: 'ok', schema: answer } };
const r = { method: 'get', path: '/x', operationId: 'x', summary: 'x', tag: 'Operations' } as const;
const id = '6f1d3a52-8a1f-4c1e-9a55-0f6f2b0e8b11';

it('accepts values that fit the success schema, refusals, bodiless and non-JSON responses', () => {
  const routes = [
    route({ ...r, responses: ok, handler: () => done({ id, count: 1 }) }),
    route({ ...r, responses: ok, handler: async ({ ctx }) => (ctx ? done({ id, count: 1, note: 'n' }) : refuse('internal', 'no')) }),
    route({ ...r, responses: { 204: { description: 'gone' } }, handler: () => done(undefined) }),
    route({
      ...r,
      responses: { 200: { description: 'CSV', contentType: 'text/csv', schema: z.string() } },
      handler: () => done({ csv: 'a' }),
      present: (v) => ({ body: v.csv }),
    }),
    route({
      ...r,
      responses: { ...ok, 503: { description: 'down', schema: answer } },
      handler: () => done({ up: true, id, count: 1 }),
      present: ({ up, ...body }) => ({ status: up ? 200 : 503, body }),
    }),
  ];
  assert.equal(routes.length, 5);
});

it('refuses, at compile time, a value that drifts from the success schema', () => {
  const routes = [
    // @ts-expect-error count is a number in the schema
    route({ ...r, responses: ok, handler: () => done({ id, count: '1' }) }),
    // @ts-expect-error count is required
    route({ ...r, responses: { 201: { description: 'created', schema: answer } }, handler: async () => done({ id }) }),
    // @ts-expect-error a response without a schema carries no value
    route({ ...r, responses: { 204: { description: 'gone' } }, handler: () => done({ id }) }),
    // @ts-expect-error present() must make the body the schema describes
    route({ ...r, responses: ok, handler: () => done(1), present: (n) => ({ body: { id, count: String(n) } }) }),
  ];
  assert.equal(routes.length, 4);
});
