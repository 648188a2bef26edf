// The interface's list endpoints require `Accept-Version`; v1.0 is the one version served.
import type { Middleware } from 'koa';
import { ApiError } from '../api-error.ts';

export const SUPPORTED_VERSIONS = ['v1.0'] as const;

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
