// Benchmark of multi-member feature assignments on a real stack (Temporal dev server, PostgreSQL,
// API and workers in this process, a receiver on loopback behind 10 subscriptions: the limit per
// business). Each round uses a fresh business entity and 500 fresh INDIVIDUAL entities (inserted
// by SQL: the set-up is not what is measured), then times the API calls:
//   declare      POST /entity/{id}/members with 500 people
//   assign cold  POST /entity/{id}/feature/{featureId}/assignments with 500 members, none verified
//   assign again the same call repeated (nothing changes)
//   assign hot   500 members whose own verification is approved and whose business entity's KYB is
//                (their features set by SQL): each assignment enabled, 500 feature_access_change
//                events recorded with 10 deliveries each, in the call's transaction
//   read         GET .../assignments?limit=100 (a page)
// and the time until every hot round's deliveries arrived (awaited before the next round: each call is
// timed on a quiet stack).
//   node bench/member-assignments.ts [--rounds 5] [--members 500]
import os from 'node:os';
import { parseArgs } from 'node:util';
import { features } from '../domain/feature-catalog.ts';
import { createSubscription } from '../store/subscriptions.ts';
import type { Stack } from '../test/helpers/stack.ts';
import { loopbackReceiver, onBenchStack, pct, waitUntil } from './helpers.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, members: { type: 'string', default: '500' } } });
const ROUNDS = Number(values.rounds);
const MEMBERS = Number(values.members);
const SUBSCRIPTIONS = 10;
const say = (s: string) => process.stdout.write(`${s}\n`);
const feature = (slug: string) => features.find((f) => f.slug === slug)!.id;
const CARDHOLDER = feature('business-cardholder');

async function run(stack: Stack) {
  const { apiKey, businessId } = await stack.newBusiness({ name: 'bench-members' });
  const r = await loopbackReceiver((e) => e.eventType === 'feature_access_change');
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    await createSubscription(stack.db, businessId, {
      notificationChannel: 'WEBHOOK',
      notificationTypes: ['account_status_change', 'feature_access_change'],
      webhookUrl: r.url(`sub-${i}`),
    });
  }
  let n = 0;
  const entities = async (type: 'INDIVIDUAL' | 'BUSINESS', count: number): Promise<string[]> => {
    const rows = await stack.db.query<{ id: string }>(
      `INSERT INTO entities (id, business_id, external_id, type) SELECT gen_random_uuid(), $1, $2 || g, $3 FROM generate_series(1, $4) g RETURNING id`,
      [businessId, `bench-${n++}-`, type, count],
    );
    return rows.map((x) => String(x.id));
  };
  const timed = async (method: string, path: string, json: unknown, status: number) => {
    const t = performance.now();
    const res = await stack.request(method, path, { key: apiKey, ...(json === undefined ? {} : { json }) });
    const ms = performance.now() - t;
    if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 500)}`);
    return { ms, body: res.body };
  };
  const times: Record<string, number[]> = { declare: [], 'assign cold': [], 'assign again': [], 'assign hot': [], 'read page': [] };
  let enabled = 0;
  const drains: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const hot of [false, true]) {
      const [b] = await entities('BUSINESS', 1);
      const people = await entities('INDIVIDUAL', MEMBERS);
      if (hot) {
        await stack.db.query('INSERT INTO entity_features (entity_id, feature_id) VALUES ($1, $2)', [b, feature('business-card-program')]);
        await stack.db.query('INSERT INTO entity_features (entity_id, feature_id) SELECT unnest($1::uuid[]), $2', [
          people,
          feature('card-issuance-api-access'),
        ]);
      }
      const declared = await timed('POST', `/entity/${b}/members`, { members: people.map((entityId) => ({ entityId, role: 'EMPLOYEE' })) }, 201);
      times.declare!.push(declared.ms);
      const path = `/entity/${b}/feature/${CARDHOLDER}/assignments`;
      const assigned = await timed('POST', path, { memberIds: people }, 201);
      if (assigned.body.assigned !== MEMBERS) throw new Error(`assigned ${assigned.body.assigned}`);
      const on = (assigned.body.items as { enabled: boolean }[]).filter((i) => i.enabled).length;
      if (on !== (hot ? MEMBERS : 0)) throw new Error(`enabled ${on}`);
      enabled += on;
      times[hot ? 'assign hot' : 'assign cold']!.push(assigned.ms);
      if (!hot) times['assign again']!.push((await timed('POST', path, { memberIds: people }, 201)).ms);
      times['read page']!.push((await timed('GET', `${path}?limit=100&page=3`, undefined, 200)).ms);
      if (hot) {
        // each round on a quiet stack: the last round's deliveries are out before the next call is timed
        const t = Date.now();
        await waitUntil(() => r.deliveries() >= enabled * SUBSCRIPTIONS, 300_000, 'every feature_access_change delivery');
        drains.push(Date.now() - t);
      }
    }
  }
  const figures = Object.entries(times).map(([call, xs]) => ({
    [`call (${MEMBERS} members)`]: call,
    'p50 (ms)': Math.round(pct(xs, 50)),
    'max (ms)': Math.round(Math.max(...xs)),
    rounds: xs.length,
  }));
  console.table(figures);
  say(
    `${enabled} features enabled by hot assignments, ${r.deliveries()} feature_access_change deliveries (${SUBSCRIPTIONS} subscriptions); ` +
      `a hot round's ${MEMBERS * SUBSCRIPTIONS} deliveries all received ${(pct(drains, 50) / 1000).toFixed(1)} s (p50) after its call answered`,
  );
  await r.close();
}

await onBenchStack({ database: 'vouch_bench_members' }, async (stack) => {
  say(`member assignments benchmark on PostgreSQL, ${os.cpus().length} cores`);
  await run(stack);
});
