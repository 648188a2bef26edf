// The interface's list endpoints require `Accept-Version` (spec 9.1: `v1.0`). The releases the spec
// names (9.2: v1.0.1 current, v1.0.2 and v1.1.0 announced) are all served by the one representation
// this service has — v1.1.0's additions only add — so a client that names any of them, by its minor
// (`v1.0`, `v1.1`) or its full number, gets an answer; `Content-Version` echoes what it asked.
// Another version is refused (400 0000000410), so a client of a later release learns it at once.
import type { Middleware } from 'koa';
import { ApiError } from '../api-error.ts';

export const SUPPORTED_VERSIONS = ['v1.0', 'v1.0.1', 'v1.0.2', 'v1.1', 'v1.1.0'] as const;

export const requireAcceptVersion: Middleware = async (ctx, next) => {
  const version = ctx.get('accept-version');
  if (!version) {
    throw new ApiError('acceptVersionMissing', `The Accept-Version header is required here; send Accept-Version: ${SUPPORTED_VERSIONS[0]}.`, {
      parameter: 'Accept-Version',
    });
  }
  if (!(SUPPORTED_VERSIONS as readonly string[]).includes(version.trim())) {
    throw new ApiError('acceptVersionUnsupported', `Accept-Version "${version.slice(0, 40)}" is not served; supported: ${SUPPORTED_VERSIONS.join(', ')}.`, {
      parameter: 'Accept-Version',
    });
  }
  ctx.set('Content-Version', version.trim());
  await next();
};
