// A self-contained HTML reference rendered from the OpenAPI document (no scripts, no CDN).
import { errorCatalogue } from '../domain/errors.ts';
import type { OpenApiDocument } from './openapi.ts';

const esc = (s: unknown) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const json = (v: unknown) => `<pre>${esc(JSON.stringify(v, null, 2))}</pre>`;

export function renderDocsPage(doc: OpenApiDocument): string {
  const ops: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods) as [string, Record<string, any>][]) {
      const params = (op.parameters as Record<string, any>[])
        .map((p) => `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required ? 'yes' : 'no'}</td><td><code>${esc(JSON.stringify(p.schema))}</code></td></tr>`)
        .join('');
      const responses = Object.entries(op.responses as Record<string, any>)
        .map(([status, r]) => {
          const schema = r.content ? Object.values(r.content as Record<string, any>)[0].schema : undefined;
          return `<li><strong>${esc(status)}</strong> ${esc(r.description)}${schema && !schema.$ref ? json(schema) : ''}</li>`;
        })
        .join('');
      ops.push(`<section id="${esc(op.operationId)}">
<h3><span class="m ${esc(method)}">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h3>
<p>${esc(op.summary)}${op.description ? ` — ${esc(op.description)}` : ''}${op.security ? ' <em>(no API key)</em>' : ''}</p>
${params ? `<table><tr><th>parameter</th><th>in</th><th>required</th><th>schema</th></tr>${params}</table>` : ''}
${op.requestBody ? Object.entries(op.requestBody.content as Record<string, any>).map(([type, c]) => `<h4>Request body (${esc(type)})</h4>${json(c.schema)}`).join('') : ''}
<h4>Responses</h4><ul>${responses}</ul></section>`);
    }
  }
  const errors = Object.values(errorCatalogue)
    .map((e) => `<tr><td><code>${e.code}</code></td><td>${e.status}</td><td>${esc(e.summary)}</td></tr>`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(doc.info.title)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}
pre{background:#f5f5f5;padding:.6em;overflow:auto;font-size:13px}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left}
.m{display:inline-block;min-width:4em;color:#fff;padding:0 .4em;border-radius:3px;font-size:13px}.get{background:#2a7}.post{background:#27c}.put,.patch{background:#c82}.delete{background:#c33}
section{border-top:1px solid #eee;margin-top:1.5em}</style></head><body>
<h1>${esc(doc.info.title)} <small>${esc(doc.info.version)}</small></h1>
<p>${esc(doc.info.description)} Authenticate with the <code>x-vouch-api-key</code> header. Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>
${ops.join('\n')}
<h2 id="errors">Error codes</h2><table><tr><th>code</th><th>HTTP</th><th>meaning</th></tr>${errors}</table>
</body></html>`;
}
