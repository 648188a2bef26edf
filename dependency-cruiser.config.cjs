// The import rules between this repository's layers, written once. `npm run lint:deps` (and so
// `npm test`, through test/unit/layers.test.ts) checks every import against them; docs/architecture.md's
// layer table is printed from LAYERS (`npm run docs:layers`) and kept equal to it by the same test.
//
// A layer may import its own files and the layers in `may`; `typesFrom` layers only with
// `import type` (erased before the code runs, so a workflow bundle stays free of them).

/** @type {Record<string, { path: string; holds: string; may: string[]; typesFrom?: string[] }>} */
const LAYERS = {
  lib: {
    path: '^lib/',
    holds: 'helpers that know nothing of Vouch (the worker pool): no package, nothing from Node; every layer may import it',
    may: [],
  },
  contract: {
    path: '^contract/',
    holds:
      'one file per workflow (mirroring workflows/): its id, input, result, signal/update/query definitions and failure types; ' +
      'the shared record reference, the provider queue, run tags, the patch table. Node-free and ' +
      'zod-free: its one package is @temporalio/workflow, for the definitions',
    may: [],
    typesFrom: ['domain'],
  },
  domain: {
    path: '^domain/',
    holds: 'pure rules without I/O: error catalogue, entity and requirement rules, CSV rules, reliance decisions, feature catalog, webhook rules',
    may: [],
  },
  provider: { path: '^provider/', holds: 'the identity-provider interface, its errors, the Sumsub client', may: [] },
  files: {
    path: '^files/',
    holds: 'the file store: one interface for uploaded bytes, its local-directory and S3 implementations, and signed download links',
    may: [],
  },
  store: {
    path: '^store/',
    holds: 'PostgreSQL access and migrations: reads and writes rows; neither shapes responses nor decides what follows',
    may: ['domain', 'contract'],
  },
  onboarding: {
    path: '^onboarding/',
    holds:
      "what a decision or a change triggers, in the caller's transaction, whichever path made it: the record, the KYC account, the features, " +
      "member access, verification stages, the events and their deliveries; a shared record's steps; a universal KYC submission settled; " +
      'members and assignments changed, an entity deleted, a KYB profile saved; reminders',
    may: ['domain', 'contract', 'store'],
  },
  activities: {
    path: '^activities/',
    holds: 'activities, one factory per task queue, one file per concern',
    may: ['contract', 'domain', 'store', 'onboarding', 'provider', 'files'],
  },
  workflows: { path: '^workflows/', holds: 'deterministic workflow code, one file per workflow', may: ['contract'], typesFrom: ['activities'] },
  runtime: {
    path: '^runtime/',
    holds:
      'the platform every process needs: configuration, logger, process lifecycle, database, ' +
      'metrics registry, secrets and signing keys, file store and provider factories',
    may: ['domain', 'store', 'provider', 'files'],
  },
  temporal: {
    path: '^temporal/',
    holds:
      'the one door to the workflows: the Temporal connection, a typed starter per workflow (start, signal, update), runs (cancel, describe, ping), ' +
      'the housekeeping schedule, the payload codec, search attributes, replay; the only importer of workflow code',
    may: ['contract', 'domain', 'runtime', 'workflows'],
  },
  usecases: {
    path: '^usecases/',
    holds: 'one function per API operation: checks, reads and writes through store, starts workflows; returns an outcome (a value or a refusal), never HTTP',
    may: ['contract', 'domain', 'store', 'onboarding', 'runtime', 'files'],
    typesFrom: ['temporal'],
  },
  api: {
    path: '^api/',
    holds: 'the Koa app: routes (each calls one use case), middleware, the outcome-to-HTTP mapping, OpenAPI',
    may: ['contract', 'domain', 'store', 'runtime', 'temporal', 'usecases', 'files'],
  },
  worker: {
    path: '^worker\\.ts$',
    holds: 'the worker process: the workers of every task queue',
    may: ['activities', 'contract', 'domain', 'runtime', 'temporal', 'store', 'provider', 'files'],
  },
  'provider-sim': { path: '^provider-sim/', holds: 'the identity-provider simulator (development and tests)', may: ['provider', 'runtime'] },
  client: { path: '^client/', holds: 'the typed API client, generated from the OpenAPI document (npm run api:client)', may: [] },
  receiver: { path: '^receiver/', holds: 'for webhook receivers: signature verification and an example receiver', may: ['client'] },
  cli: {
    path: '^cli/',
    holds: 'command-line tools: the admin CLI, replay, kyc-share-token',
    may: ['contract', 'domain', 'store', 'runtime', 'temporal', 'provider'],
  },
  dev: {
    path: '^dev/',
    holds: 'development tooling: the all-in-one launcher (npm start), the Temporal CLI finder and dev-server runner; only scripts and tests import it',
    may: ['api', 'worker', 'runtime', 'temporal', 'store', 'provider', 'provider-sim', 'domain', 'contract', 'files'],
  },
};

/** Folders whose code is never imported by the layers above (they may import anything). */
const TOOLING = { path: '^(test|bench|scripts)/', holds: 'tests, benchmarks, scripts: may import anything; nothing imports them' };

const ours = `(${Object.values(LAYERS)
  .map((l) => l.path.slice(1))
  .join('|')})`;

const forbidden = [];
for (const [name, layer] of Object.entries(LAYERS)) {
  const allowed = [name, 'lib', ...layer.may, ...(layer.typesFrom ?? [])].map((n) => LAYERS[n].path.slice(1));
  forbidden.push({
    name: `${name}-imports`,
    comment:
      `${name} may import ${layer.may.length ? layer.may.join(', ') : 'nothing else of ours'}` +
      `${layer.typesFrom ? ` (and types of ${layer.typesFrom.join(', ')})` : ''}`,
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
    name: 'store-records-no-events',
    comment:
      "in store/, only events.ts writes events: the events, feature access and verification stages a change triggers are onboarding/'s, " +
      'so a store function cannot start consequences of its own',
    severity: 'error',
    from: { path: '^store/', pathNot: '^store/events\\.ts$' },
    to: { path: '^store/events\\.ts$' },
  },
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
    name: 'lib-pure',
    comment: 'lib imports no package and nothing from Node (types aside): every layer, workflow code too, may use it',
    severity: 'error',
    from: { path: '^lib/' },
    to: { dependencyTypes: ['npm', 'npm-dev', 'core'], dependencyTypesNot: ['type-only'] },
  },
  {
    name: 'contract-pure',
    comment: 'the contract imports no package but @temporalio/workflow (for its message definitions), and nothing from Node (types aside)',
    severity: 'error',
    from: { path: LAYERS.contract.path },
    to: { dependencyTypes: ['npm', 'npm-dev', 'core'], pathNot: 'node_modules/@temporalio/workflow/', dependencyTypesNot: ['type-only'] },
  },
  {
    name: 'workflow-code-behind-the-door',
    comment: 'only temporal/ imports workflow functions (worker.ts loads them by path, in the bundle)',
    severity: 'error',
    from: { path: `^${ours}`, pathNot: `^(${[LAYERS.temporal, LAYERS.workflows].map((l) => l.path.slice(1)).join('|')})` },
    to: { path: LAYERS.workflows.path, dependencyTypesNot: ['type-only'] },
  },
  {
    name: 'temporal-client-behind-the-door',
    comment: 'only temporal/, worker.ts and dev tooling talk to Temporal through its client or worker packages (types aside)',
    severity: 'error',
    from: { path: `^${ours}`, pathNot: `^(${[LAYERS.temporal, LAYERS.worker, LAYERS.dev].map((l) => l.path.slice(1)).join('|')})` },
    to: { path: 'node_modules/@temporalio/(client|worker)/', dependencyTypesNot: ['type-only'] },
  },
  {
    name: 'workflow-sdk-in-workflow-code',
    comment: '@temporalio/workflow is imported only by workflow code and the contract (its message definitions)',
    severity: 'error',
    from: { path: `^${ours}`, pathNot: `^(${[LAYERS.workflows, LAYERS.contract].map((l) => l.path.slice(1)).join('|')})` },
    to: { path: 'node_modules/@temporalio/workflow/', dependencyTypesNot: ['type-only'] },
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
