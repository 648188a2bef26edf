// Builds the Koa application: request context, error rendering, authentication, and every route.
// It never calls the identity provider or a webhook; it reads and writes PostgreSQL and starts,
// queries or updates workflows.
import Router from '@koa/router';
import type { Client } from '@temporalio/client';
import Koa, { type Middleware } from 'koa';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ApiError } from './api-error.ts';
import type { Config } from '../runtime/config.ts';
import type { KeyRings } from '../runtime/signing-keys.ts';
import type { Db } from '../store/db.ts';
import { createDownloadLinks, createFileStore } from '../runtime/file-store.ts';
import { providerWebhookVerifier } from '../runtime/provider.ts';
import { createRuns } from '../temporal/runs.ts';
import { createStarters } from '../temporal/starters.ts';
import { routeSettingsOf, type UseCaseContext } from '../usecases/context.ts';
import { done } from '../domain/outcome.ts';
import { DOCS_ASSETS, DOCS_CSP, docsInit, docsPage, SCALAR_VERSION, scalarBundle } from './docs-page.ts';
import { authenticate } from './middleware/auth.ts';
import { errorHandler } from './middleware/errors.ts';
import { rateLimit } from './middleware/rate-limit.ts';
import { authFailureLimit } from './middleware/auth-failure-limit.ts';
import { auditRefusals } from './middleware/refusals.ts';
import { requestContext } from './middleware/request-context.ts';
import { streamDeadline } from './middleware/stream-deadline.ts';
import { parseOrThrow, readJsonBody } from './middleware/validate.ts';
import { requireAcceptVersion } from './middleware/versioning.ts';
import { apiVocabulary, buildOpenApi } from './openapi.ts';
import { respond } from './outcome.ts';
import { route, type Route } from './route.ts';
import { createUploads } from './uploads.ts';
import { requirementBatchRoutes } from './routes/requirement-batches.ts';
import { batchImportRoutes } from './routes/batch-imports.ts';
import { entityRoutes } from './routes/entities.ts';
import { businessMemberRoutes } from './routes/business-members.ts';
import { featureRoutes } from './routes/features.ts';
import { codecCors } from './middleware/codec-cors.ts';
import { codecRoutes } from './routes/codec.ts';
import { metricsRoutes } from './routes/metrics-endpoint.ts';
import { healthRoutes } from './routes/health.ts';
import { downloadRoutes } from './routes/downloads.ts';
import { kybRoutes } from './routes/kyb.ts';
import { subscriptionRoutes } from './routes/subscriptions.ts';
import { personVerificationRoutes } from './routes/person-verification.ts';
import { sandboxRoutes } from './routes/sandbox.ts';
import { signedPayloadRoutes } from './routes/signed-payload.ts';
import { universalKycRoutes } from './routes/universal-kyc.ts';
import { syncImportRoutes } from './routes/sync-imports.ts';
import { auditLogRoutes } from './routes/audit-log.ts';
import { entityHistoryRoutes } from './routes/entity-history.ts';

export type AppDeps = { config: Config; db: Db; temporal: Client; log: Logger; keys: KeyRings };

function docsRoutes(getDoc: () => ReturnType<typeof buildOpenApi>): Route[] {
  return [
    route({
      method: 'get',
      path: '/openapi.json',
      operationId: 'openapi',
      summary: 'This API as an OpenAPI 3.1 document',
      tag: 'Operations',
      auth: false,
      responses: { 200: { description: 'OpenAPI 3.1 document', schema: z.object({ openapi: z.string() }).loose() } },
      handler: () => done(getDoc()),
    }),
    route({
      method: 'get',
      path: '/docs',
      operationId: 'docs',
      summary: 'This API as a readable reference (Scalar, served from this process)',
      tag: 'Operations',
      auth: false,
      responses: { 200: { description: 'HTML page that renders /openapi.json', contentType: 'text/html', schema: z.string() } },
      handler: () => done(docsPage('Vouch API reference')),
      present: (html) => ({ body: html, headers: { 'Content-Security-Policy': DOCS_CSP, 'Cache-Control': 'no-cache' } }),
    }),
    route({
      method: 'get',
      path: DOCS_ASSETS.bundle,
      operationId: 'docsRenderer',
      summary: `The reference renderer's browser bundle (@scalar/api-reference ${SCALAR_VERSION})`,
      tag: 'Operations',
      auth: false,
      responses: { 200: { description: 'JavaScript', contentType: 'text/javascript', schema: z.string() } },
      handler: async () => done(await scalarBundle()),
      present: (js) => ({ body: js, headers: { 'Cache-Control': 'public, max-age=86400' } }),
    }),
    route({
      method: 'get',
      path: DOCS_ASSETS.init,
      operationId: 'docsRendererStart',
      summary: 'Starts the reference renderer on /openapi.json',
      tag: 'Operations',
      auth: false,
      responses: { 200: { description: 'JavaScript', contentType: 'text/javascript', schema: z.string() } },
      handler: () => done(docsInit),
      present: (js) => ({ body: js, headers: { 'Cache-Control': 'no-cache' } }),
    }),
  ];
}

export function allRoutes(deps: AppDeps): Route[] {
  const context: UseCaseContext = {
    ...deps,
    start: createStarters(deps.temporal, deps.config),
    runs: createRuns(deps.temporal),
    settings: routeSettingsOf(deps.config),
    verifyProviderCallback: providerWebhookVerifier(deps.config),
    files: createFileStore(deps.config),
    links: createDownloadLinks(deps.config),
  };
  const uploads = createUploads(deps.config, deps.log);
  const routes: Route[] = [
    ...healthRoutes(context),
    ...entityRoutes(context),
    ...businessMemberRoutes(context),
    ...featureRoutes(),
    ...batchImportRoutes(context, uploads),
    ...requirementBatchRoutes(context, uploads),
    ...syncImportRoutes(context),
    ...personVerificationRoutes(context),
    ...universalKycRoutes(context, uploads),
    ...signedPayloadRoutes(context),
    ...sandboxRoutes(context),
    ...kybRoutes(context, uploads),
    ...downloadRoutes(context),
    ...codecRoutes(context),
    ...metricsRoutes(context),
    ...subscriptionRoutes(context),
    ...auditLogRoutes(context),
    ...entityHistoryRoutes(context),
  ];
  let doc: ReturnType<typeof buildOpenApi> | undefined;
  const all: Route[] = [...routes, ...docsRoutes(() => (doc ??= buildOpenApi(all)))];
  return all;
}

function handle(r: Route, deps: AppDeps): Middleware {
  return async (ctx) => {
    const params = r.params ? parseOrThrow(r.params, { ...ctx.params }, 'path') : undefined;
    const query = r.query ? parseOrThrow(r.query, { ...ctx.query }, 'query') : undefined;
    const body = r.body ? parseOrThrow(r.body, await readJsonBody(ctx, deps.config.http.jsonBodyLimitBytes), 'body') : undefined;
    respond(ctx, r, await r.handler({ params, query, body, business: ctx.state.business, ctx }));
  };
}

/**
 * The methods a path allows, from our routes: where a literal segment and a parameter both match
 * (`/entity/verify-signed-payload` and `/entity/:entityId`), the more literal route wins, so the
 * path is not also offered the parameter route's methods.
 */
function allowedMethods(routes: readonly Route[]): (path: string) => string[] | null {
  const patterns = routes.map((r) => ({
    method: r.method.toUpperCase(),
    regex: new RegExp(`^${r.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z]+/g, '[^/]+')}/?$`),
    literal: r.path.split('/').filter((s) => s && !s.startsWith(':')).length,
  }));
  return (path) => {
    const matching = patterns.filter((p) => p.regex.test(path));
    if (matching.length === 0) return null;
    const best = Math.max(...matching.map((p) => p.literal));
    const methods = new Set(matching.filter((p) => p.literal === best).map((p) => p.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods];
  };
}

export function buildApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true; // errors are logged by errorHandler, once, with the request id
  const router = new Router();
  const auth = authenticate(deps.db);
  const limit = rateLimit(deps.db, { bucket: 'api', perSecond: deps.config.http.rateLimitPerSecond });
  const routes = allRoutes(deps);
  const allowed = allowedMethods(routes);
  let vocabulary: Set<string> | undefined;
  const known = () => (vocabulary ??= apiVocabulary(buildOpenApi(routes)));
  for (const r of routes) {
    const chain: Middleware[] = [];
    if (r.auth !== false) chain.push(auth, limit, auditRefusals(deps.db, r.operationId, known, deps.log));
    if (r.rateLimit) chain.push(rateLimit(deps.db, r.rateLimit));
    if (r.versioned) chain.push(requireAcceptVersion);
    chain.push(handle(r, deps));
    router[r.method](r.path, ...chain);
  }
  app.use(requestContext(deps.log));
  app.use(errorHandler(deps.log));
  // before any route: an address that keeps earning 401s is refused without a database lookup
  app.use(authFailureLimit({ perSecond: deps.config.http.authFailuresPerSecond, trustedProxies: deps.config.http.trustedProxies, log: deps.log }));
  app.use(codecCors(deps.config.payloadCodec.corsOrigins));
  app.use(streamDeadline(deps.config.files.downloadDeadlineMs, deps.log));
  app.use(async (ctx, next) => {
    await next();
    if (ctx.body != null) return;
    if (ctx.status === 404) throw new ApiError('routeNotFound', `No endpoint ${ctx.method} ${ctx.path}; check the path against the API reference (/docs).`);
    // allowedMethods() below answered 405 or 501 with an Allow header; give it our error body.
    if (ctx.status === 405 || ctx.status === 501)
      throw new ApiError('methodNotAllowed', `${ctx.method} is not allowed here; allowed: ${ctx.response.get('Allow')}.`, {
        headers: { Allow: ctx.response.get('Allow') },
      });
  });
  // OPTIONS, and a method the path does not allow, answered from our routes (see allowedMethods)
  app.use(async (ctx, next) => {
    const methods = allowed(ctx.path);
    if (!methods) return next();
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', methods.join(', '));
      ctx.status = 200;
      ctx.body = '';
      return;
    }
    if (!methods.includes(ctx.method)) {
      throw new ApiError('methodNotAllowed', `${ctx.method} is not allowed here; allowed: ${methods.join(', ')}.`, { headers: { Allow: methods.join(', ') } });
    }
    return next();
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
