// The container image (Dockerfile, .dockerignore). `docker build .` sends the build context — every
// file .dockerignore leaves — and `COPY . .` puts all of it in a layer that anyone who pulls the
// image can read. No Docker engine runs here, so the context is listed the way Docker lists it
// (@balena/dockerignore implements Docker's own matching) and the Dockerfile is read.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import dockerignore from '@balena/dockerignore';

const root = path.resolve(import.meta.dirname, '..', '..');
// a CommonJS module whose export is the function; its types declare it as an ES default export
const ignore = dockerignore as unknown as typeof dockerignore.default;

/** The files `docker build <dir>` would send, relative to dir, as Docker decides with dir's .dockerignore. */
function buildContext(dir: string): string[] {
  const rules = ignore().add(readFileSync(path.join(dir, '.dockerignore'), 'utf8'));
  const files: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${entry.name}` : entry.name;
      // an ignored folder is left whole: the file has no `!` exception that reaches into one
      if (entry.isDirectory()) {
        if (!rules.ignores(`${p}/`) && !rules.ignores(p)) walk(p);
      } else if (!rules.ignores(p)) files.push(p);
    }
  };
  walk('');
  return files.sort();
}

/** What must never reach an image layer: secrets (any depth), local state and modules (any depth), the root's tools and output. */
const SECRET_OR_LOCAL = new RegExp(
  [
    String.raw`(^|/)(\.env(\..*)?|\.npmrc|[^/]*\.(pem|key|p12|pfx|log))$`,
    String.raw`(^|/)(\.data|node_modules)/`,
    String.raw`^(\.tools|\.git|dist|test|bench|\.hypothesis|\.schemathesis|test-artifacts)/`,
  ].join('|'),
);

describe('the image', () => {
  it('has no .dockerignore exception (a `!` line) for the listing above to miss', () => {
    const lines = readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n');
    assert.deepEqual(
      lines.filter((l) => l.trim().startsWith('!')),
      [],
    );
  });

  it('leaves every .env file, key, log and the local state out of the context; sends what the image runs (a made-up checkout)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vouch-image-'));
    try {
      const put = (p: string) => {
        mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
        writeFileSync(path.join(dir, p), 'x');
      };
      const left = [
        '.env',
        '.env.production',
        'deploy/.env',
        'docker/.env.local',
        '.npmrc',
        'deploy/tls/server.key',
        'server.pem',
        'client.p12',
        '.data/payload-codec-keys.json',
        '.data/file-link-secret',
        'store/.data/pglite/base',
        '.tools/venv/bin/python',
        'node_modules/koa/index.js',
        'api/node_modules/x/index.js',
        'dist/workflow-bundle.js',
        'npm-debug.log',
        'api/server.log',
        '.git/config',
        'test/unit/x.test.ts',
        'bench/soak.ts',
        '.hypothesis/examples/a',
        '.schemathesis/report',
        'test-artifacts/trace.zip',
      ];
      const sent = [
        '.dockerignore',
        'package.json',
        'package-lock.json',
        'worker.ts',
        'api/server.ts',
        'cli/vouch.ts',
        'store/migrations/001_init.sql',
        'scripts/build-workflows.ts',
        'provider-sim/main.ts',
        'docker/temporal-namespace.sh',
      ];
      for (const p of [...left, ...sent]) put(p);
      writeFileSync(path.join(dir, '.dockerignore'), readFileSync(path.join(root, '.dockerignore')));
      assert.deepEqual(buildContext(dir), [...sent].sort());
      for (const p of left) assert.match(p, SECRET_OR_LOCAL, `${p} is what the check of the real checkout looks for`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("this checkout's context holds nothing secret or local, and the files the image runs", () => {
    const context = buildContext(root);
    assert.deepEqual(
      context.filter((p) => SECRET_OR_LOCAL.test(p)),
      [],
    );
    for (const p of ['package.json', 'package-lock.json', 'worker.ts', 'api/server.ts', 'cli/vouch.ts', 'scripts/build-workflows.ts', 'provider-sim/main.ts'])
      assert.ok(context.includes(p), `${p} is sent`);
    assert.ok(
      context.some((p) => p.startsWith('store/migrations/')),
      'the migrations are sent',
    );
  });

  it('installs exactly the lockfile without development dependencies, copies the source after, runs as a numeric non-root user', () => {
    const lines = readFileSync(path.join(root, 'Dockerfile'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.trim().startsWith('#'));
    const install = lines.findIndex((l) => /^RUN npm /.test(l));
    assert.match(lines[install]!, /^RUN npm ci --omit=dev\b/, 'npm ci: the lockfile, or the build fails');
    assert.ok(!lines.some((l) => /npm (install|i)\b/.test(l)), 'no npm install (it may move off the lockfile)');
    const copies = lines.map((l, i) => [l, i] as const).filter(([l]) => l.startsWith('COPY '));
    assert.deepEqual(
      copies.filter(([, i]) => i < install).map(([l]) => l),
      ['COPY package.json package-lock.json ./'],
      'only the package files before the install (its layer is cached until they change)',
    );
    const user = lines.filter((l) => l.startsWith('USER ')).at(-1);
    assert.match(user ?? '', /^USER [1-9]\d*:[1-9]\d*$/, 'the last USER is a numeric non-root uid:gid (runAsNonRoot can check it)');
  });
});
