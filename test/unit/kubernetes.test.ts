// deploy/kubernetes/ is checked without a cluster ("Kubernetes, on paper but checked"): every manifest
// against the Kubernetes OpenAPI schemas (kubernetes-validate --strict, from .tools/venv), then the
// rules a schema cannot say — probes on the ports the processes listen on, resources, a disruption
// budget and an autoscaler for every Deployment (the workers' on their own task queues' backlog), a
// grace period above SHUTDOWN_GRACE_MS, no secret value in the files, only settings this service
// reads, every worker role polled once, one pinned image, pods that run as nothing more than a
// non-root user writing only to their own volumes, and worker Deployments per release (Worker Versioning:
// named and labelled with it, the release as their build id) so that two releases run side by side.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ipaddr from 'ipaddr.js';
import { parseAllDocuments } from 'yaml';
import { venvBin } from '../../dev/temporal-cli.ts';
import { loadConfig, SETTING_NAMES, type Config } from '../../runtime/config.ts';
import { taskQueueOf, WORKER_ROLE_NAMES } from '../../runtime/worker-roles.ts';
import { API_SECRETS, TEMPORAL_SETUP_SECRETS, workerSecrets, type SecretNeeds } from '../../runtime/secrets-by-role.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const dir = path.join(root, 'deploy', 'kubernetes');
const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
/** The release as a name's suffix: `vouch-worker-general-1-1-0`. */
const releaseSuffix = `-${version.replaceAll('.', '-')}`;
/** The label naming the release of a worker pod, in every selector of the worker objects. */
const RELEASE_LABEL = 'app.kubernetes.io/version';

type Labels = Record<string, string>;
type Probe = { httpGet?: { path?: string; port?: number | string } };
type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } };
type Container = {
  name: string;
  image: string;
  command?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { sleep?: { seconds: number }; exec?: { command: string[] } } };
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    privileged?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
  };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
};
type PodSpec = {
  containers: Container[];
  initContainers?: Container[];
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
  volumes?: { name: string; emptyDir?: { sizeLimit?: string } }[];
  hostNetwork?: boolean;
  hostPID?: boolean;
  topologySpreadConstraints?: { labelSelector?: { matchLabels?: Labels } }[];
};
type PodTemplate = { metadata: { labels: Labels }; spec: PodSpec };
type Meta = { name: string; labels?: Labels };
type Resource = { apiVersion: string; kind: string; metadata: Meta; file: string };
type ConfigMap = Resource & { data: Record<string, string> };
type Deployment = Resource & { spec: { replicas?: number; selector: { matchLabels: Labels }; template: PodTemplate } };
type Job = Resource & { spec: { template: PodTemplate } };
type Pdb = Resource & { spec: { selector: { matchLabels: Labels }; maxUnavailable?: number | string; minAvailable?: number | string } };
type ExternalMetric = { metric: { name: string; selector?: { matchLabels?: Labels } }; target: { type: string } };
type Hpa = Resource & {
  spec: {
    scaleTargetRef: { apiVersion: string; kind: string; name: string };
    minReplicas?: number;
    maxReplicas: number;
    metrics?: { type: string; resource?: { name: string; target: { type: string } }; external?: ExternalMetric }[];
  };
};
type Service = Resource & { spec: { selector?: Labels; ports: { port: number; targetPort?: number | string }[] } };

/** The manifests: every YAML file of the directory but kustomize's own. */
const files = readdirSync(dir)
  .filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')
  .sort();
const resources: Resource[] = files.flatMap((file) =>
  parseAllDocuments(readFileSync(path.join(dir, file), 'utf8')).flatMap((doc) => {
    assert.deepEqual(doc.errors, [], `${file} is YAML`);
    const value = doc.toJS() as Omit<Resource, 'file'> | null;
    return value ? [{ ...value, file }] : [];
  }),
);
const ofKind = <T extends Resource>(kind: string) => resources.filter((r) => r.kind === kind) as T[];
const deployments = ofKind<Deployment>('Deployment');
const jobs = ofKind<Job>('Job');
const configMaps = ofKind<ConfigMap>('ConfigMap');
const pods: { owner: Resource; template: PodTemplate }[] = [...deployments, ...jobs].map((owner) => ({ owner, template: owner.spec.template }));
const containersOf = (spec: PodSpec) => [...(spec.initContainers ?? []), ...spec.containers];
const id = (r: Resource) => `${r.kind} ${r.metadata.name} (${r.file})`;

/** The one container that runs Vouch in a pod (`node …`). */
function mainContainer(owner: Resource, spec: PodSpec): Container {
  const ours = spec.containers.filter((c) => c.command?.[0] === 'node');
  assert.equal(ours.length, 1, `${id(owner)}: one container runs \`node …\``);
  return ours[0]!;
}

/** What a container's process sees: its ConfigMaps (envFrom), then its own `env` values (secrets are not in the files). */
function environmentOf(owner: Resource, c: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    if (!from.configMapRef) continue;
    const map = configMaps.find((m) => m.metadata.name === from.configMapRef!.name);
    assert.ok(map, `${id(owner)}: ConfigMap ${from.configMapRef.name} is in deploy/kubernetes`);
    Object.assign(env, map.data);
  }
  for (const v of c.env ?? []) if (v.value !== undefined) env[v.name] = v.value;
  return env;
}
const configOf = (owner: Resource, c: Container): Config => loadConfig(environmentOf(owner, c));

const isApi = (d: Deployment) => mainContainer(d, d.spec.template.spec).command?.join(' ') === 'node api/server.ts';
const isWorker = (d: Deployment) => mainContainer(d, d.spec.template.spec).command?.join(' ') === 'node worker.ts';
const api = () => {
  const found = deployments.filter(isApi);
  assert.equal(found.length, 1, 'one Deployment runs `node api/server.ts`');
  return found[0]!;
};
const workers = () => deployments.filter(isWorker);
const pdbsOf = (d: Deployment) => ofKind<Pdb>('PodDisruptionBudget').filter((p) => selects(p.spec.selector.matchLabels, d.spec.template.metadata.labels));
const hpasOf = (d: Deployment) =>
  ofKind<Hpa>('HorizontalPodAutoscaler').filter((h) => h.spec.scaleTargetRef.kind === 'Deployment' && h.spec.scaleTargetRef.name === d.metadata.name);
/** The same pods' labels in another release. */
const ofAnotherRelease = (labels: Labels): Labels => ({ ...labels, [RELEASE_LABEL]: `${version}-next` });

/** `port` of a probe or a Service: a number, or the name of one of the container's ports. */
function portNumber(c: Container, port: number | string | undefined): number | undefined {
  if (typeof port === 'number') return port;
  return c.ports?.find((p) => p.name === port)?.containerPort;
}

const selects = (selector: Labels, labels: Labels) => Object.entries(selector).every(([k, v]) => labels[k] === v);

type LabelSelector = { matchLabels?: Labels; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
type PolicyPort = { port?: number | string; protocol?: string };
type PolicyPeer = { ipBlock?: { cidr: string; except?: string[] }; namespaceSelector?: LabelSelector; podSelector?: LabelSelector };
type NetworkPolicy = Resource & {
  spec: {
    podSelector: LabelSelector;
    policyTypes: string[];
    ingress?: { from?: PolicyPeer[]; ports?: PolicyPort[] }[];
    egress?: { to?: PolicyPeer[]; ports?: PolicyPort[] }[];
  };
};
/** Whether a label selector (matchLabels and In/NotIn/Exists expressions) selects these labels; an empty one selects every pod. */
const matches = (s: LabelSelector, labels: Labels) =>
  selects(s.matchLabels ?? {}, labels) &&
  (s.matchExpressions ?? []).every((e) =>
    e.operator === 'In'
      ? e.values!.includes(labels[e.key]!)
      : e.operator === 'NotIn'
        ? !e.values!.includes(labels[e.key]!)
        : e.operator === 'Exists'
          ? e.key in labels
          : !(e.key in labels),
  );
const policies = () => ofKind<NetworkPolicy>('NetworkPolicy');
/** The policies that select a pod with these labels. */
const policiesOf = (labels: Labels) => policies().filter((p) => matches(p.spec.podSelector, labels));
const isWorkerPod = (t: PodTemplate) => t.spec.containers.some((c) => c.command?.join(' ') === 'node worker.ts');

/** A CPU or memory quantity as a number (cores, bytes). */
function quantity(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(String(q));
  assert.ok(m, `a quantity: ${q}`);
  const unit = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 }[m[2] ?? ''] ?? 1;
  return Number(m[1]) * unit;
}

/** How long a container's preStop hook holds its SIGTERM back, in ms. */
function preStopMs(c: Container): number {
  const hook = c.lifecycle?.preStop;
  if (hook?.sleep) return hook.sleep.seconds * 1000;
  const sleep = hook?.exec?.command.join(' ').match(/\bsleep\s+(\d+)/);
  return sleep ? Number(sleep[1]) * 1000 : 0;
}

/** Settings and AWS SDK variables whose values are secrets: never written into these files. */
const SECRET_NAMES = new Set([
  'DATABASE_URL',
  'PROVIDER_BASE_URL',
  'PROVIDER_APP_TOKEN',
  'PROVIDER_SECRET_KEY',
  'PROVIDER_WEBHOOK_SECRET',
  'CODEC_ACCESS_TOKEN',
  'METRICS_TOKEN',
  'FILE_LINK_SECRET',
  'TEMPORAL_API_KEY',
  'WEBHOOK_SIGNING_KEYS',
  'STANDARD_WEBHOOK_KEYS',
  'SIGNED_PAYLOAD_KEYS',
  'PAYLOAD_CODEC_KEYS',
  'AUDIT_CHECKPOINT_KEYS',
  'EVIDENCE_SIGNING_KEYS',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
]);
/** Any name that looks like a secret's (a new setting among them too), but not a file's path. */
const isSecretName = (name: string) => SECRET_NAMES.has(name) || (/SECRET|TOKEN|PASSWORD|API_KEY|_KEYS$/.test(name) && !/_(FILE|PATH)$/.test(name));
/** Time left between the process's own deadline and SIGKILL, at least (a slow exit, a busy node). */
const GRACE_MARGIN_MS = 5000;

describe('deploy/kubernetes', () => {
  it('kustomization.yaml lists every manifest of the directory, once', () => {
    const kustomization = parseAllDocuments(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8'))[0]!.toJS() as { resources: string[] };
    assert.deepEqual([...kustomization.resources].sort(), files);
  });

  it('passes kubernetes-validate --strict: every resource known to the Kubernetes schemas, no field it does not define', () => {
    const bin = path.join(venvBin, 'kubernetes-validate');
    assert.ok(existsSync(bin), `${bin} is missing: run \`npm install\` (scripts/test-tools-requirements.txt)`);
    const run = spawnSync(bin, ['--strict', ...files.map((f) => path.join(dir, f))], { encoding: 'utf8' });
    const output = `${run.stdout}${run.stderr}`;
    assert.equal(run.status, 0, `kubernetes-validate failed:\n${output}`);
    // an unknown kind or apiVersion is only a warning there: every resource must have been checked
    for (const r of resources) {
      const passed = `${r.file} passed for resource ${r.kind.toLowerCase()}/${r.metadata.name} `;
      assert.ok(output.includes(passed), `${id(r)} was not validated against a schema:\n${output}`);
    }
  });

  it('runs the API and one worker Deployment per role group, with the entry points of this checkout', () => {
    assert.ok(api());
    assert.equal(workers().length, 3, 'worker-general, worker-provider, worker-webhooks');
    assert.equal(deployments.length, 4, 'no other Deployment');
    for (const d of deployments) {
      const command = mainContainer(d, d.spec.template.spec).command!;
      assert.ok(existsSync(path.join(root, command[1]!)), `${id(d)}: ${command[1]} exists`);
    }
    for (const j of jobs) {
      const command = mainContainer(j, j.spec.template.spec).command!;
      assert.ok(existsSync(path.join(root, command[1]!)), `${id(j)}: ${command[1]} exists`);
    }
    const setup = jobs.find((j) => mainContainer(j, j.spec.template.spec).command!.join(' ') === 'node cli/vouch.ts temporal-setup');
    assert.ok(setup, 'a Job runs `node cli/vouch.ts temporal-setup` (the search attributes)');
    const migrate = jobs.find((j) => mainContainer(j, j.spec.template.spec).command!.join(' ') === 'node cli/vouch.ts db migrate');
    assert.ok(migrate, 'a Job runs `node cli/vouch.ts db migrate` (as the schema owner)');
    const secretsOf = (owner: (typeof pods)[number]['owner'], spec: (typeof pods)[number]['template']['spec']) =>
      (mainContainer(owner, spec).envFrom ?? []).flatMap((f) => (f.secretRef ? [f.secretRef.name] : []));
    assert.deepEqual(secretsOf(migrate, migrate.spec.template.spec), ['vouch-migration'], "the owner's credentials, and nothing else secret");
    for (const { owner, template } of pods.filter((p) => p.owner !== migrate))
      assert.ok(!secretsOf(owner, template.spec).includes('vouch-migration'), `${id(owner)} holds no owner's credentials`);
  });

  it('the API runs 2+ replicas and listens where the kubelet and its Service reach it', () => {
    const d = api();
    const c = mainContainer(d, d.spec.template.spec);
    const config = configOf(d, c);
    assert.ok((d.spec.replicas ?? 1) >= 2, 'replicas ≥ 2');
    assert.ok(['0.0.0.0', '::'].includes(config.http.host), `HOST=${config.http.host}: not reachable from outside the pod`);
    const services = ofKind<Service>('Service').filter((s) => s.spec.selector && selects(s.spec.selector, d.spec.template.metadata.labels));
    assert.ok(services.length > 0, 'a Service selects the API pods');
    for (const s of services) for (const p of s.spec.ports) assert.equal(portNumber(c, p.targetPort ?? p.port), config.http.port, `${id(s)} targets PORT`);
  });

  it('every Deployment has readiness and liveness probes on GET /health of its process', () => {
    for (const d of deployments) {
      const c = mainContainer(d, d.spec.template.spec);
      const config = configOf(d, c);
      const port = isApi(d) ? config.http.port : config.metrics.workerPort;
      if (isWorker(d)) assert.ok(['0.0.0.0', '::'].includes(config.metrics.workerHost), `${id(d)}: WORKER_METRICS_HOST is reachable by the kubelet`);
      for (const kind of ['readinessProbe', 'livenessProbe', 'startupProbe'] as const) {
        const probe = c[kind];
        if (kind === 'startupProbe' && !probe) continue;
        assert.ok(probe?.httpGet, `${id(d)}: ${kind} is an httpGet`);
        assert.equal(probe.httpGet.path, '/health', `${id(d)}: ${kind} path`);
        assert.equal(portNumber(c, probe.httpGet.port), port, `${id(d)}: ${kind} port is the process's (${port})`);
      }
    }
  });

  it('every container requests and limits CPU and memory, requests within limits', () => {
    for (const { owner, template } of pods) {
      for (const c of containersOf(template.spec)) {
        for (const r of ['cpu', 'memory']) {
          const request = c.resources?.requests?.[r];
          const limit = c.resources?.limits?.[r];
          assert.ok(request && limit, `${id(owner)} ${c.name}: ${r} request and limit`);
          assert.ok(quantity(request) <= quantity(limit), `${id(owner)} ${c.name}: ${r} request ${request} ≤ limit ${limit}`);
        }
      }
    }
  });

  it('a PodDisruptionBudget selects each Deployment, and only it', () => {
    const pdbs = ofKind<Pdb>('PodDisruptionBudget');
    for (const d of deployments) {
      const mine = pdbs.filter((p) => selects(p.spec.selector.matchLabels, d.spec.template.metadata.labels));
      assert.equal(mine.length, 1, `${id(d)}: one PodDisruptionBudget`);
      const pdb = mine[0]!;
      assert.ok(pdb.spec.maxUnavailable !== undefined || pdb.spec.minAvailable !== undefined, `${id(pdb)} sets a budget`);
      for (const other of deployments.filter((o) => o !== d)) {
        assert.ok(!selects(pdb.spec.selector.matchLabels, other.spec.template.metadata.labels), `${id(pdb)} also selects ${id(other)}`);
      }
    }
  });

  it('an HPA scales each Deployment: the API on CPU, each worker on the backlog of exactly its own task queues', () => {
    const hpas = ofKind<Hpa>('HorizontalPodAutoscaler');
    for (const d of deployments) {
      const mine = hpas.filter((h) => h.spec.scaleTargetRef.kind === 'Deployment' && h.spec.scaleTargetRef.name === d.metadata.name);
      assert.equal(mine.length, 1, `${id(d)}: one HorizontalPodAutoscaler`);
      const hpa = mine[0]!;
      assert.equal(hpa.apiVersion, 'autoscaling/v2', `${id(hpa)}`);
      const min = hpa.spec.minReplicas ?? 1;
      const replicas = d.spec.replicas ?? 1;
      assert.ok(min <= replicas && replicas <= hpa.spec.maxReplicas, `${id(d)}: replicas ${replicas} within the HPA's ${min}..${hpa.spec.maxReplicas}`);
      const metrics = hpa.spec.metrics ?? [];
      const c = mainContainer(d, d.spec.template.spec);
      if (isApi(d)) {
        assert.ok(min >= 2, `${id(hpa)}: minReplicas ≥ 2`);
        assert.ok(
          metrics.some((m) => m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource.target.type === 'Utilization'),
          `${id(hpa)}: CPU utilisation`,
        );
        continue;
      }
      const config = configOf(d, c);
      const queues = config.temporal.workerRoles.map((role) => taskQueueOf(config, role)).sort();
      const external = metrics.filter((m) => m.type === 'External').map((m) => m.external!);
      assert.equal(external.length, metrics.length, `${id(hpa)}: External metrics only`);
      for (const m of external) assert.equal(m.metric.name, 'approximate_backlog_count', `${id(hpa)}: Temporal's backlog gauge`);
      const named = external.map((m) => m.metric.selector?.matchLabels?.taskqueue ?? '(none)').sort();
      assert.deepEqual(named, queues, `${id(hpa)}: one backlog metric per task queue its WORKER_ROLES poll (ConfigMap names)`);
      if (config.temporal.workerRoles.includes('provider')) {
        assert.ok(hpa.spec.maxReplicas <= 3, `${id(hpa)}: maxReplicas stays small: PROVIDER_RATE_LIMIT_PER_SECOND is fleet-wide`);
      }
    }
  });

  it('WORKER_ROLES of the worker Deployments cover every role, none twice', () => {
    const roles = workers().flatMap((d) => configOf(d, mainContainer(d, d.spec.template.spec)).temporal.workerRoles);
    assert.deepEqual([...roles].sort(), [...WORKER_ROLE_NAMES].sort());
    for (const d of workers()) {
      const env = mainContainer(d, d.spec.template.spec).env ?? [];
      assert.ok(
        env.some((v) => v.name === 'WORKER_ROLES'),
        `${id(d)} names its WORKER_ROLES (the default is all of them)`,
      );
    }
  });

  it('gives every process time to stop: terminationGracePeriodSeconds above preStop + SHUTDOWN_GRACE_MS + a margin', () => {
    for (const d of deployments) {
      const spec = d.spec.template.spec;
      const c = mainContainer(d, spec);
      const needed = preStopMs(c) + configOf(d, c).shutdownGraceMs + GRACE_MARGIN_MS;
      const grace = (spec.terminationGracePeriodSeconds ?? 30) * 1000;
      assert.ok(grace >= needed, `${id(d)}: terminationGracePeriodSeconds ${grace / 1000} s < ${needed / 1000} s`);
    }
    const c = mainContainer(api(), api().spec.template.spec);
    assert.ok(preStopMs(c) >= 2000, 'the API pauses before SIGTERM (preStop) while endpoints drop it');
  });

  it('NetworkPolicies: every pod denied what is not allowed; the API reached on its port alone, the workers on their metrics port alone', () => {
    const deny = policies().find((p) => Object.keys(p.spec.podSelector).length === 0);
    assert.ok(deny, 'a policy selects every pod of the namespace');
    assert.deepEqual([...deny.spec.policyTypes].sort(), ['Egress', 'Ingress']);
    assert.deepEqual([deny.spec.ingress, deny.spec.egress], [undefined, undefined], 'and allows nothing');
    for (const { owner, template } of pods) {
      const labels = template.metadata.labels;
      const ports = policiesOf(labels)
        .flatMap((p) => p.spec.ingress ?? [])
        .flatMap((r) => (r.ports ?? [{ port: 'any' }]).map((x) => x.port));
      const expected = isWorkerPod(template) ? [9464] : owner.kind === 'Job' ? [] : [3000];
      assert.deepEqual([...new Set(ports)], expected, `${id(owner)}: reached on ${expected.join(', ') || 'nothing'}`);
      const egress = policiesOf(labels).flatMap((p) => p.spec.egress ?? []);
      const allowed = (port: number) => egress.some((r) => !r.to && (r.ports ?? []).some((x) => x.port === port));
      assert.ok(allowed(5432) && allowed(7233), `${id(owner)}: reaches PostgreSQL and Temporal`);
      assert.ok(
        egress.some((r) => r.ports?.some((x) => x.port === 53 && x.protocol === 'UDP')),
        `${id(owner)}: resolves names`,
      );
    }
  });

  it("NetworkPolicies: the webhook workers reach the internet but none of the private, loopback, link-local or carrier ranges (a tenant's URL)", () => {
    const webhooks = workers().find((d) => configOf(d, mainContainer(d, d.spec.template.spec)).temporal.workerRoles.join() === 'webhooks')!;
    const egress = policiesOf(webhooks.spec.template.metadata.labels).flatMap((p) => p.spec.egress ?? []);
    const blocks = egress.flatMap((r) => r.to ?? []).flatMap((t) => (t.ipBlock ? [t.ipBlock] : []));
    assert.deepEqual(blocks.map((b) => b.cidr).sort(), ['0.0.0.0/0', '::/0'], 'the internet, both families');
    for (const b of blocks) {
      const inside = (address: string) => {
        const [range, bits] = ipaddr.parseCIDR(b.cidr);
        const a = ipaddr.parse(address);
        return (
          a.kind() === range.kind() &&
          a.match(range, bits) &&
          !(b.except ?? []).some((e) => a.kind() === ipaddr.parseCIDR(e)[0].kind() && a.match(ipaddr.parseCIDR(e)))
        );
      };
      for (const address of ['10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '127.0.0.1', '::1', 'fd00::1', 'fe80::1'])
        assert.ok(!inside(address), `${b.cidr}: ${address} excluded`);
      if (b.cidr === '0.0.0.0/0') assert.ok(inside('93.184.216.34'), 'a public address is reached');
    }
    // every other egress of theirs: by port, to PostgreSQL, Temporal and DNS only (never 443 or 80 to any address)
    const byPort = egress.filter((r) => !(r.to ?? []).some((t) => t.ipBlock)).flatMap((r) => (r.ports ?? [{ port: 'any' }]).map((x) => x.port));
    assert.deepEqual([...new Set(byPort)].sort(), [53, 5432, 7233]);
  });

  it('holds no secret value: no Secret object, secrets only from secretRef / secretKeyRef, each process given the required ones', () => {
    assert.deepEqual(ofKind('Secret').map(id), [], 'a Secret is created outside these files');
    for (const m of configMaps) for (const key of Object.keys(m.data)) assert.ok(!isSecretName(key), `${id(m)}: ${key} is a secret`);
    for (const { owner, template } of pods) {
      for (const c of containersOf(template.spec)) {
        for (const v of c.env ?? []) {
          if (isSecretName(v.name)) assert.ok(v.valueFrom?.secretKeyRef && v.value === undefined, `${id(owner)} ${c.name}: ${v.name} from a secretKeyRef`);
        }
      }
    }
    // nothing that looks like key material or a password in a URL, in any value (comments may show the shapes)
    const values = JSON.stringify(resources);
    assert.doesNotMatch(values, /PRIVATE KEY|[a-z][a-z0-9+.-]*:\/\/[^/\s:@"]+:[^/\s@"]+@/i);
  });

  it('gives each process the secrets of its role and no others (runtime/secrets-by-role.ts), key by key from vouch-secrets', () => {
    const expected = (owner: Resource, c: Container): SecretNeeds | undefined => {
      const command = c.command!.join(' ');
      if (command === 'node api/server.ts') return API_SECRETS;
      if (command === 'node worker.ts') return workerSecrets(configOf(owner, c).temporal.workerRoles);
      if (command === 'node cli/vouch.ts temporal-setup') return TEMPORAL_SETUP_SECRETS;
      return undefined; // the migration Job: the owner's Secret alone (above)
    };
    let checked = 0;
    for (const { owner, template } of pods) {
      const c = mainContainer(owner, template.spec);
      const wholeSecrets = (c.envFrom ?? []).flatMap((f) => (f.secretRef ? [f.secretRef.name] : []));
      assert.ok(!wholeSecrets.includes('vouch-secrets'), `${id(owner)}: vouch-secrets is not loaded whole (envFrom)`);
      const needs = expected(owner, c);
      const refs = (c.env ?? []).filter((v) => v.valueFrom?.secretKeyRef);
      if (!needs) {
        assert.deepEqual(refs, [], `${id(owner)}: no key of vouch-secrets`);
        continue;
      }
      const mounted = refs.map((v) => {
        const ref = v.valueFrom!.secretKeyRef!;
        assert.deepEqual([ref.name, ref.key], ['vouch-secrets', v.name], `${id(owner)}: ${v.name} from its own key of vouch-secrets`);
        return `${v.name}${ref.optional ? ' (optional)' : ''}`;
      });
      assert.deepEqual(mounted.sort(), [...needs.required, ...needs.optional.map((n) => `${n} (optional)`)].sort(), `${id(owner)}: its role's secrets`);
      checked++;
    }
    assert.equal(checked, 5, 'the API, three worker Deployments and the temporal-setup Job');
    // the webhook workers, which dial tenants' URLs, hold no file-link secret, provider credentials or codec token
    const webhooks = workers().find((d) => configOf(d, mainContainer(d, d.spec.template.spec)).temporal.workerRoles.join() === 'webhooks')!;
    const names = (mainContainer(webhooks, webhooks.spec.template.spec).env ?? []).map((v) => v.name);
    for (const name of ['FILE_LINK_SECRET', 'PROVIDER_SECRET_KEY', 'PROVIDER_APP_TOKEN', 'CODEC_ACCESS_TOKEN', 'SIGNED_PAYLOAD_KEYS', 'AUDIT_CHECKPOINT_KEYS'])
      assert.ok(!names.includes(name), `the webhook workers hold no ${name}`);
  });

  it('sets only variables this service reads (or the AWS SDK does), with values it accepts, outside the sandbox', () => {
    const known = (name: string) => SETTING_NAMES.includes(name) || name.startsWith('AWS_');
    for (const m of configMaps) for (const key of Object.keys(m.data)) assert.ok(known(key), `${id(m)}: ${key} is not a setting of runtime/config.ts`);
    for (const { owner, template } of pods) {
      for (const c of containersOf(template.spec)) for (const v of c.env ?? []) assert.ok(known(v.name), `${id(owner)}: ${v.name} is not a setting`);
      const config = configOf(owner, mainContainer(owner, template.spec)); // throws ConfigError on a value it refuses
      assert.notEqual(config.environment, 'sandbox', `${id(owner)}: VOUCH_ENVIRONMENT`);
      assert.equal(config.files.store, 's3', `${id(owner)}: pods share no volume: files go to object storage (FILE_STORE=s3)`);
    }
  });

  it('runs one pinned image everywhere: this release, never latest', () => {
    const images = pods.flatMap(({ template }) => containersOf(template.spec).map((c) => c.image));
    for (const image of images) {
      const tag = /^[^@]+:([\w.-]+)$/.exec(image)?.[1];
      assert.ok(tag && tag !== 'latest', `${image}: a tag, not latest`);
    }
    assert.equal(new Set(images).size, 1, `one image: ${[...new Set(images)].join(', ')}`);
    assert.ok(images[0]!.endsWith(`:${version}`), `${images[0]}: the release of package.json (${version})`);
    for (const j of jobs) assert.ok(j.metadata.name.endsWith(version.replaceAll('.', '-')), `${id(j)}: a Job per release (its spec is immutable)`);
  });

  it('runs each worker Deployment as this release: its TEMPORAL_WORKER_BUILD_ID, in its names and selectors', () => {
    const named = configMaps.filter((m) => m.data.TEMPORAL_WORKER_DEPLOYMENT !== undefined);
    assert.equal(named.length, 1, 'a ConfigMap names the Worker Deployment (TEMPORAL_WORKER_DEPLOYMENT), for every release');
    const deploymentName = named[0]!.data.TEMPORAL_WORKER_DEPLOYMENT;
    for (const d of workers()) {
      const c = mainContainer(d, d.spec.template.spec);
      const own = (c.env ?? []).find((v) => v.name === 'TEMPORAL_WORKER_BUILD_ID');
      assert.equal(own?.value, version, `${id(d)}: TEMPORAL_WORKER_BUILD_ID on the worker is the release of package.json (${version})`);
      assert.deepEqual(configOf(d, c).temporal.workerVersion, { deploymentName, buildId: version }, `${id(d)}: a version of the Worker Deployment`);
      const pdbs = pdbsOf(d);
      const hpas = hpasOf(d);
      assert.ok(pdbs.length > 0 && hpas.length > 0, `${id(d)}: a PodDisruptionBudget and an HPA`);
      for (const r of [d, ...pdbs, ...hpas]) {
        assert.ok(r.metadata.name.endsWith(releaseSuffix), `${id(r)}: named with the release (…${releaseSuffix}), beside the others'`);
        assert.equal(r.metadata.labels?.[RELEASE_LABEL], version, `${id(r)}: labelled ${RELEASE_LABEL}=${version}`);
      }
      assert.ok(selects(d.spec.selector.matchLabels, d.spec.template.metadata.labels), `${id(d)}: its selector selects its own pods`);
      const spread = (d.spec.template.spec.topologySpreadConstraints ?? []).map((t) => t.labelSelector?.matchLabels ?? {});
      // two releases' Deployments, budgets and spreads never count each other's pods
      for (const selector of [d.spec.selector.matchLabels, ...pdbs.map((p) => p.spec.selector.matchLabels), ...spread]) {
        assert.equal(selector[RELEASE_LABEL], version, `${id(d)}: the selector ${JSON.stringify(selector)} names the release (${RELEASE_LABEL})`);
      }
    }
  });

  it('gives no build id but to workers: the API starts runs, polls nothing, and rolls from one release to the next', () => {
    for (const { owner, template } of pods) {
      if (owner.kind === 'Deployment' && isWorker(owner as Deployment)) continue;
      const config = configOf(owner, mainContainer(owner, template.spec));
      assert.equal(config.temporal.workerVersion, undefined, `${id(owner)}: no TEMPORAL_WORKER_BUILD_ID (nor in a ConfigMap)`);
    }
    const d = api();
    assert.ok(!d.metadata.name.endsWith(releaseSuffix), `${id(d)}: one name for every release`);
    // a Deployment's selector cannot change: the next release's apply would be refused
    for (const labels of [d.spec.selector.matchLabels, d.spec.template.metadata.labels]) {
      assert.ok(!(RELEASE_LABEL in labels), `${id(d)}: no ${RELEASE_LABEL} in its selector or pod labels`);
    }
  });

  it('the worker metrics Service selects every worker, of every release still running', () => {
    const services = ofKind<Service>('Service').filter(
      (s) => s.spec.selector && workers().some((d) => selects(s.spec.selector!, d.spec.template.metadata.labels)),
    );
    assert.equal(services.length, 1, 'one Service selects the worker pods');
    const s = services[0]!;
    for (const d of workers()) {
      const labels = d.spec.template.metadata.labels;
      assert.ok(selects(s.spec.selector!, labels), `${id(s)} selects ${id(d)}`);
      assert.ok(selects(s.spec.selector!, ofAnotherRelease(labels)), `${id(s)} selects ${id(d)}'s pods of another release too`);
      const c = mainContainer(d, d.spec.template.spec);
      const port = configOf(d, c).metrics.workerPort;
      for (const p of s.spec.ports) assert.equal(portNumber(c, p.targetPort ?? p.port), port, `${id(s)} targets WORKER_METRICS_PORT of ${id(d)}`);
    }
  });

  it("the release steps' commands name the ConfigMap's Worker Deployment and select exactly one release's worker objects", () => {
    const text = files.map((f) => readFileSync(path.join(dir, f), 'utf8')).join('\n');
    const deploymentName = configOf(workers()[0]!, mainContainer(workers()[0]!, workers()[0]!.spec.template.spec)).temporal.workerVersion?.deploymentName;
    const names = [...text.matchAll(/--deployment-name[ =](\S+)/g)].map((m) => m[1]);
    assert.ok(names.length > 0, 'the release steps are written out (`temporal worker deployment … --deployment-name`)');
    for (const name of names) assert.equal(name, deploymentName, `--deployment-name ${name}: TEMPORAL_WORKER_DEPLOYMENT is ${deploymentName}`);
    // `kubectl … -l k=v,…` with the release written R (the new one) or O (the old one)
    const selectors = [...text.matchAll(/ -l ([\w./-]+=[^\s,]+(?:,[\w./-]+=[^\s,]+)*)/g)].map((m) => m[1]!);
    assert.ok(selectors.length > 0, 'the release steps select a release by label (`kubectl … -l`)');
    const release = workers()
      .flatMap((d) => [d, ...pdbsOf(d), ...hpasOf(d)])
      .map(id)
      .sort();
    for (const selector of selectors) {
      const labels = Object.fromEntries(selector.split(',').map((kv) => kv.split('=') as [string, string]));
      assert.ok(['R', 'O'].includes(labels[RELEASE_LABEL] ?? ''), `-l ${selector}: names a release (${RELEASE_LABEL}=R or O)`);
      const chosen = resources.filter((r) => selects({ ...labels, [RELEASE_LABEL]: version }, r.metadata.labels ?? {})).map(id);
      assert.deepEqual(chosen.sort(), release, `-l ${selector}: exactly the release's worker Deployments, PodDisruptionBudgets and HPAs`);
    }
  });

  it('runs as a non-root user without privileges, writing only to its own volumes', () => {
    for (const { owner, template } of pods) {
      const spec = template.spec;
      assert.ok(!spec.hostNetwork && !spec.hostPID, `${id(owner)}: no host namespaces`);
      assert.equal(spec.securityContext?.seccompProfile?.type, 'RuntimeDefault', `${id(owner)}: seccomp`);
      const emptyDirs = new Set((spec.volumes ?? []).filter((v) => v.emptyDir).map((v) => v.name));
      for (const c of containersOf(spec)) {
        const who = `${id(owner)} ${c.name}`;
        const s = c.securityContext ?? {};
        assert.equal(s.runAsNonRoot ?? spec.securityContext?.runAsNonRoot, true, `${who}: runAsNonRoot`);
        assert.notEqual(s.runAsUser ?? spec.securityContext?.runAsUser ?? 0, 0, `${who}: a numeric non-root runAsUser (the image names its user)`);
        assert.equal(s.allowPrivilegeEscalation, false, `${who}: allowPrivilegeEscalation`);
        assert.equal(s.readOnlyRootFilesystem, true, `${who}: readOnlyRootFilesystem`);
        assert.ok(!s.privileged, `${who}: not privileged`);
        assert.ok(s.capabilities?.drop?.includes('ALL'), `${who}: drops ALL capabilities`);
        assert.deepEqual(s.capabilities?.add ?? [], [], `${who}: adds none`);
      }
      const c = mainContainer(owner, spec);
      const config = configOf(owner, c);
      const writable = (c.volumeMounts ?? []).filter((m) => emptyDirs.has(m.name) && !m.readOnly).map((m) => m.mountPath);
      const under = (dir: string) => writable.find((m) => dir === m || dir.startsWith(`${m}/`));
      for (const dir of ['/tmp', config.dataDir, config.files.uploadTmpDir]) assert.ok(under(dir), `${id(owner)}: ${dir} is on an emptyDir`);
      // the process makes DATA_DIR mode 700 (runtime/process.ts): a non-root user may not chmod a volume's root
      assert.ok(!writable.includes(config.dataDir), `${id(owner)}: DATA_DIR ${config.dataDir} must be a directory inside its volume, not the mount`);
    }
  });
});
