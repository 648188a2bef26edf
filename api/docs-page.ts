// /docs: Scalar's API reference (the maintained renderer, @scalar/api-reference) reading our own
// /openapi.json. Its browser bundle is served from this process: the page loads nothing from any
// other origin, and its Content-Security-Policy says so to the browser.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
/** The renderer's package directory (its browser bundle is not among the package's exports). */
const scalarDir = path.dirname(path.dirname(require.resolve('@scalar/api-reference')));
export const SCALAR_VERSION = (require(path.join(scalarDir, 'package.json')) as { version: string }).version;

export const DOCS_ASSETS = { bundle: '/docs/scalar.js', init: '/docs/init.js' } as const;

/** Nothing but this origin; inline styles and data: images and fonts are the renderer's own. */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

let bundle: Promise<Buffer> | undefined;
export const scalarBundle = (): Promise<Buffer> => (bundle ??= readFile(path.join(scalarDir, 'dist', 'browser', 'standalone.js')));

export const docsPage = (title: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="data:,">
</head>
<body>
<noscript>This reference needs JavaScript. The same content is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<div id="app"></div>
<script src="${DOCS_ASSETS.bundle}?v=${SCALAR_VERSION}"></script>
<script src="${DOCS_ASSETS.init}"></script>
</body>
</html>
`;

/**
 * Starts the renderer (a file, not an inline script, so the policy needs no 'unsafe-inline' for
 * scripts). No default fonts (they come from Scalar's CDN), no telemetry, no AI agent or MCP
 * buttons (services of Scalar's), no request proxy: "Test request" calls this API directly.
 */
export const docsInit = `Scalar.createApiReference('#app', ${JSON.stringify({
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  hideDarkModeToggle: false,
  defaultOpenAllTags: true,
  // the description's tables (the error table: code, HTTP status, meaning) are read across: a
  // narrow cell would break a 10-digit code or a status into a column of digits; only the last
  // column, the prose, wraps
  customCss: 'table th:not(:last-child), table td:not(:last-child) { white-space: nowrap; }',
})});
`;
