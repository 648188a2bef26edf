// Benchmark: 1,000 events delivered to a local receiver through the real pipeline — event recorded
// in PostgreSQL, dispatched (delivery rows and one workflow each), signed, POSTed. Prints the time
// from an event being recorded to its receipt (p50, p95) and deliveries per second.
//   node bench/webhooks.ts [--events 1000] [--parallel 20] [--rate 0]   (--rate N: record N events per second; 0: as fast as possible)
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { createWebhookActivities } from '../activities/webhooks.ts';
import { createBusiness } from '../store/businesses.ts';
import { createSubscription } from '../store/webhooks.ts';
import { createDatabase, DEFAULT_POSTGRES_URL, startTemporal } from '../test/helpers/infra.ts';
import { startReceiver } from '../test/helpers/receiver.ts';
import { startStack, testKeyRing } from '../test/helpers/stack.ts';

const { values } = parseArgs({ options: { events: { type: 'string', default: '1000' }, parallel: { type: 'string', default: '20' }, rate: { type: 'string', default: '0' } } });
const RATE = Number(values.rate);
const EVENTS = Number(values.events);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

const database = await createDatabase(process.env.TEST_POSTGRES_URL ?? DEFAULT_POSTGRES_URL, 'vouch_bench');
const temporal = await startTemporal();
process.env.TEST_DATABASE_URL = database.url;
process.env.TEMPORAL_ADDRESS = temporal.address;
const stack = await startStack({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', LOG_LEVEL: 'warn' } });
const receiver = await startReceiver();
try {
  const { business } = await createBusiness(stack.db, { name: 'bench-webhooks', binSponsored: false, environment: 'sandbox' });
  await createSubscription(stack.db, business.id, { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: receiver.url });
  const dispatcher = createWebhookActivities({
    db: stack.db,
    log: undefined as never,
    temporal: stack.temporal,
    keyRing: testKeyRing(),
    webhookTaskQueue: stack.config.webhooks.taskQueue,
    allowInsecureUrls: true,
  });
  const recordedAt = new Map<string, number>();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Number(values.parallel) }, async () => {
      while (next < EVENTS) {
        const i = next++;
        if (RATE > 0) {
          const due = started + (i * 1000) / RATE;
          if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
        }
        const id = randomUUID();
        const body = JSON.stringify({ eventName: 'card_issuance_api_access_updated', eventType: 'account_status_change', data: { eventId: id, message: 'bench', entityId: randomUUID(), timestamp: new Date().toISOString(), status: 'APPROVED', n: i } });
        await stack.db.query('INSERT INTO events (id, business_id, event_name, event_type, payload, body, source_key) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
          id, business.id, 'card_issuance_api_access_updated', 'account_status_change', body, body, `bench-${id}`,
        ]);
        recordedAt.set(id, Date.now());
        await dispatcher.dispatchEvent(id);
      }
    }),
  );
  const recorded = performance.now() - started;
  await receiver.waitFor(EVENTS, 300_000);
  const latencies = receiver.received.map((r) => r.at - recordedAt.get(JSON.parse(r.body.toString()).data.eventId)!);
  const first = Math.min(...recordedAt.values());
  const last = Math.max(...receiver.received.map((r) => r.at));
  const unique = new Set(receiver.received.map((r) => JSON.parse(r.body.toString()).data.eventId)).size;
  process.stdout.write(`\nwebhooks: ${EVENTS} events recorded and dispatched ${RATE > 0 ? `at ${RATE}/s` : `${values.parallel} at a time, as fast as possible`} (${(recorded / 1000).toFixed(1)} s), ${os.cpus().length} cores\n`);
  console.table([
    {
      'record → receipt p50 (ms)': pct(latencies, 50),
      'p95 (ms)': pct(latencies, 95),
      'max (ms)': Math.max(...latencies),
      'deliveries/s': (EVENTS / ((last - first) / 1000)).toFixed(1),
      received: receiver.received.length,
      'distinct events': unique,
    },
  ]);
} finally {
  await receiver.close();
  await stack.close();
  await temporal.stop();
  await database.drop();
}
