// The import rules between this repository's layers, written once. `npm run lint:deps` (and so
// `npm test`, through test/unit/layers.test.ts) checks every import against them; the README's
// layer table is printed from LAYERS (`npm run docs:layers`) and kept equal to it by the same test.
//
// A layer may import its own files and the layers in `may`; `typesFrom` layers only with
// `import type` (erased before the code runs, so a workflow bundle stays free of them).

/** @type {Record<string, { path: string; holds: string; may: string[]; typesFrom?: string[] }>} */
const LAYERS = {
  contract: {
    path: '^contract/',
    holds: 'names and message types shared by api, worker and workflows: workflow ids, inputs, results, failure types, the record reference. Node-free, zod-free',
    may: [],
    typesFrom: ['domain'],
  },
  domain: { path: '^domain/', holds: 'pure rules without I/O: error catalogue, entity and requirement rules, CSV rules, reliance decisions, feature catalog, webhook rules', may: [] },
  provider: { path: '^provider/', holds: 'the identity-provider interface, its errors, the Sumsub client', may: [] },
  files: { path: '^files/', holds: 'the file store: one interface for uploaded bytes, its local-directory and S3 implementations, and signed download links', may: [] },
  store: { path: '^store/', holds: 'PostgreSQL access and migrations: persists, neither shapes responses nor decides', may: ['domain', 'contract'] },
  activities: { path: '^activities/', holds: 'activities, one factory per task queue, one file per concern', may: ['contract', 'domain', 'store', 'provider', 'files'] },
  workflows: { path: '^workflows/', holds: 'deterministic workflow code, one file per workflow', may: ['contract'], typesFrom: ['activities'] },
  runtime: {
    path: '^runtime/',
    holds: 'process wiring: configuration, logger, database and Temporal connections, typed workflow starters, Temporal CLI and dev server runner',
    may: ['contract', 'domain', 'store', 'provider', 'workflows', 'files'],
  },
  usecases: {
    path: '^usecases/',
    holds: 'one function per API operation: checks, reads and writes through store, starts workflows; returns an outcome (a value or a refusal), never HTTP',
    may: ['contract', 'domain', 'store', 'runtime', 'files'],
  },
  api: { path: '^api/', holds: 'the Koa app: routes (each calls one use case), middleware, the outcome-to-HTTP mapping, OpenAPI', may: ['contract', 'domain', 'store', 'runtime', 'usecases', 'files'] },
  worker: { path: '^worker\\.ts$', holds: 'the worker process: the workers of every task queue', may: ['activities', 'contract', 'domain', 'runtime', 'store', 'provider', 'files'] },
  'provider-sim': { path: '^provider-sim/', holds: 'the identity-provider simulator (development and tests)', may: ['provider', 'runtime'] },
  client: { path: '^client/', holds: 'the typed API client, generated from the OpenAPI document (npm run api:client)', may: [] },
  receiver: { path: '^receiver/', holds: 'for webhook receivers: signature verification and an example receiver', may: ['client'] },
  cli: { path: '^cli/', holds: 'command-line tools: the admin CLI, kyc-share-token', may: ['contract', 'domain', 'store', 'runtime', 'provider'] },
  dev: { path: '^dev/', holds: 'the all-in-one development launcher (npm start); nothing imports it', may: ['api', 'worker', 'runtime', 'store', 'provider', 'provider-sim', 'domain', 'contract', 'files'] },
};

/** Folders whose code is never imported by the layers above (they may import anything). */
const TOOLING = { path: '^(test|bench|scripts)/', holds: 'tests, benchmarks, scripts: may import anything; nothing imports them' };

const ours = `(${Object.values(LAYERS)
  .map((l) => l.path.slice(1))
  .join('|')})`;

const forbidden = [];
for (const [name, layer] of Object.entries(LAYERS)) {
  const allowed = [name, ...layer.may, ...(layer.typesFrom ?? [])].map((n) => LAYERS[n].path.slice(1));
  forbidden.push({
    name: `${name}-imports`,
    comment: `${name} may import ${layer.may.length ? layer.may.join(', ') : 'nothing else of ours'}${layer.typesFrom ? ` (and types of ${layer.typesFrom.join(', ')})` : ''}`,
    severity: 'error',
    from: { path: layer.path },
    to: { path: `^${ours}`, pathNot: `^(${allowed.join('|')})` },
  });
  if (layer.typesFrom) {
    forbidden.push({
      name: `${name}-types-only`,
      comment: `${name} imports only types from ${layer.typesFrom.join(', ')}`,
      severity: 'error',
      from: { path: layer.path },
      to: { path: `^(${layer.typesFrom.map((n) => LAYERS[n].path.slice(1)).join('|')})`, dependencyTypesNot: ['type-only'] },
    });
  }
}
forbidden.push(
  {
    name: 'nothing-imports-tooling',
    comment: 'tests, benchmarks and scripts are never imported by the service',
    severity: 'error',
    from: { path: `^${ours}` },
    to: { path: TOOLING.path },
  },
  {
    name: 'workflows-deterministic',
    comment: 'workflow code imports no package but @temporalio/workflow, and nothing from Node (types aside)',
    severity: 'error',
    from: { path: LAYERS.workflows.path },
    to: { dependencyTypes: ['npm', 'npm-dev', 'core'], pathNot: 'node_modules/@temporalio/workflow/', dependencyTypesNot: ['type-only'] },
  },
  {
    name: 'contract-pure',
    comment: 'the contract imports no package and nothing from Node (types aside)',
    severity: 'error',
    from: { path: LAYERS.contract.path },
    to: { dependencyTypes: ['npm', 'npm-dev', 'core'], dependencyTypesNot: ['type-only'] },
  },
  {
    name: 'routes-call-use-cases',
    comment: 'a route reaches the database, Temporal and the configuration only through its use case',
    severity: 'error',
    from: { path: '^api/routes/' },
    to: { path: `^(${[LAYERS.store, LAYERS.runtime].map((l) => l.path.slice(1)).join('|')})` },
  },
  {
    name: 'no-circular',
    severity: 'error',
    from: { path: `^${ours}` },
    to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
  },
);

module.exports = {
  forbidden,
  options: {
    // swc tells `import type` apart (dependency-cruiser cannot use TypeScript 7's compiler yet)
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(\\.data|\\.tools|dist)/' },
  },
};
// for docs and tests (not part of dependency-cruiser's configuration)
Object.defineProperty(module.exports, 'layers', { value: { LAYERS, TOOLING }, enumerable: false });
