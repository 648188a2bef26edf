// CORS for the codec endpoint only: the Temporal UI (another origin) calls /codec/* from the
// operator's browser, with the X-Namespace header and, outside the sandbox, an Authorization header.
import type { Middleware } from 'koa';

export function codecCors(origins: readonly string[]): Middleware {
  const allowed = new Set(origins);
  return async (ctx, next) => {
    if (!ctx.path.startsWith('/codec/')) return next();
    const origin = ctx.get('origin');
    if (origin && allowed.has(origin)) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Allow-Credentials', 'true');
      ctx.set('Vary', 'Origin');
      if (ctx.method === 'OPTIONS') {
        ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
        ctx.set('Access-Control-Allow-Headers', 'Content-Type, X-Namespace, Authorization');
        ctx.set('Access-Control-Max-Age', '600');
        ctx.status = 204;
        return;
      }
    }
    return next();
  };
}
