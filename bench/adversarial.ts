// One business against the others (issue 18), on this machine with everything on it:
//   uploads   the API as its own process while one business sends a 2 MB CSV of a million lines,
//             a 10 MB one of five million, ten 10 MB files in one upload, a sender that goes quiet,
//             and all of it at once: GET /health and another business's reads every 50 ms (p50,
//             p95, max), and the API process's peak memory.
//   webhooks  business A: 10 subscriptions whose receiver answers after 4.9 s, and a backlog of
//             5,000 events redelivered to each (50,000 deliveries due at once); business B decides
//             a person every half second by sync import: B's decision → receipt p50 / p95 / max.
//   provider  business A's 1,000-row batch at the provider cap (10/s); business B's 10-row batch
//             uploaded 20 s in: B's upload → completed, and the provider's call rate over the run.
//   node bench/adversarial.ts [--only uploads,webhooks,provider]
import { parseArgs } from 'node:util';
import { createBusiness } from '../store/businesses.ts';
import { recordEvent } from '../store/events.ts';
import { createSubscription } from '../store/subscriptions.ts';
import { manyLineCsv, pct, sendMultipart, watch, type Sent } from '../test/helpers/attacks.ts';
import { bulkEntities, bulkTokens } from '../test/helpers/bulk.ts';
import { csvOf, upload } from '../test/helpers/imports.ts';
import { createDatabase, DEFAULT_POSTGRES_URL, startTemporal } from '../test/helpers/infra.ts';
import { startReceiver } from '../test/helpers/receiver.ts';
import { startStack, type Stack } from '../test/helpers/stack.ts';
import { apiProcess } from './helpers.ts';

const { values } = parseArgs({ options: { only: { type: 'string', default: 'uploads,webhooks,provider' } } });
const only = new Set(values.only.split(','));
const say = (s: string) => process.stdout.write(`${s}\n`);
const ms = (x: number) => `${Math.round(x)}`;
const figures: Record<string, string>[] = [];

const database = await createDatabase(process.env.TEST_POSTGRES_URL ?? DEFAULT_POSTGRES_URL, 'vouch_adversarial');
const temporal = await startTemporal();
process.env.TEST_DATABASE_URL = database.url;
process.env.TEMPORAL_ADDRESS = temporal.address;
process.env.VOUCH_ENVIRONMENT = 'sandbox'; // the API processes it starts must name one

async function uploads() {
  const { api, db, base } = await apiProcess(temporal.address, { UPLOAD_SLOT_WAIT_MS: '30000', LOG_LEVEL: 'info' });
  try {
    await api.waitFor(/API listening/);
    const attacker = (await createBusiness(db, { name: 'Attacker', binSponsored: false, environment: 'sandbox' })).apiKey;
    const other = (await createBusiness(db, { name: 'Bystander', binSponsored: false, environment: 'sandbox' })).apiKey;
    const json = { 'x-vouch-api-key': attacker, 'content-type': 'application/json' };
    const person = (
      (await (await fetch(`${base}/entity`, { method: 'POST', headers: json, body: JSON.stringify({ externalId: 'target', type: 'INDIVIDUAL' }) })).json()) as {
        id: string;
      }
    ).id;
    await fetch(`${base}/notification`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: 'https://93.184.216.34/hooks' }),
    });
    let n = 0;
    const batch = (csv: Buffer, o: Parameters<typeof sendMultipart>[3] = {}) =>
      sendMultipart(
        `${base}/entity/kyc/import/batch`,
        { 'x-vouch-api-key': attacker, 'X-Provider': 'sumsub', 'Idempotency-Key': `bench-${n++}` },
        [{ field: 'file', fileName: 'b.csv', body: csv }],
        o,
      );
    const tenFiles = () =>
      sendMultipart(
        `${base}/entity/${person}/requirement-slug/ukyc-id-document/upload`,
        { 'x-vouch-api-key': attacker },
        Array.from({ length: 10 }, (_, i) => ({ field: 'files', fileName: `f${i}.pdf`, head: Buffer.from('%PDF-1.4\n'), size: 10 * 1024 * 1024 })),
      );
    const million = manyLineCsv(1_000_000);
    const fiveMillion = manyLineCsv(5_000_000, 'c');
    const stalling = manyLineCsv(200_000, 'd');
    const quiet = { stallAfter: 64 * 1024, chunk: 16 * 1024 };
    /** A short attack again and again for `seconds`, so the watch has enough samples. */
    const repeat = (seconds: number, attack: () => Promise<Sent>) => async () => {
      const sent: Sent[] = [];
      const until = performance.now() + seconds * 1000;
      while (performance.now() < until) sent.push(await attack());
      return sent;
    };
    const attacks: [string, () => Promise<Sent[]>][] = [
      ['2 MB CSV, 1,000,000 lines, again and again for 10 s', repeat(10, () => batch(million))],
      ['10 MB CSV, 5,000,000 lines, again and again for 10 s', repeat(10, () => batch(fiveMillion))],
      ['10 files × 10 MB in one upload, again and again for 10 s', repeat(10, tenFiles)],
      ['a sender that goes quiet (cut off after 30 s)', async () => [await batch(stalling, quiet)]],
      [
        'all of it at once, twice',
        () =>
          Promise.all([
            batch(million),
            batch(fiveMillion),
            tenFiles(),
            batch(stalling, quiet),
            batch(million),
            batch(fiveMillion),
            tenFiles(),
            batch(stalling, quiet),
          ]),
      ],
    ];
    await fetch(`${base}/entity?limit=1`, { headers: { 'x-vouch-api-key': other, 'Accept-Version': 'v1.0' } }); // warm
    for (const [name, attack] of attacks) {
      const w = watch(base, api.child.pid!, other);
      await new Promise((r) => setTimeout(r, 500));
      const t = performance.now();
      const sent = await attack();
      const took = performance.now() - t;
      await new Promise((r) => setTimeout(r, 300));
      const r = await w.stop();
      figures.push({
        scenario: `uploads: ${name}`,
        answers: `${sent.length}: ${[...new Set(sent.map((s) => `${s.status} ` + `${s.status >= 400 ? JSON.parse(s.body).code : ''}`.trim()))].join(
          ', ',
        )} in ${(took / 1000).toFixed(1)} s`,
        'GET /health p50 / p95 / max (ms)': `${ms(pct(r.health, 50))} / ${ms(pct(r.health, 95))} / ${ms(Math.max(...r.health))}`,
        "another business's GET /entity p95 / max (ms)": `${ms(pct(r.other, 95))} / ${ms(Math.max(...r.other))}`,
        'API RSS (MB)': `${Math.round(r.baseRssMb)} → peak ${Math.round(r.peakRssMb)}`,
      });
      say(JSON.stringify(figures.at(-1)));
    }
  } finally {
    await api.stop('SIGKILL');
    await db.close();
  }
}

async function onStack<T>(env: Record<string, string>, fn: (stack: Stack) => Promise<T>): Promise<T> {
  const stack = await startStack({
    workers: true,
    env: { LOG_LEVEL: 'warn', API_RATE_LIMIT_PER_SECOND: '100000', WEBHOOK_ALLOW_INSECURE_URLS: 'true', ...env },
  });
  stack.sim!.state.updateClient(stack.recipient!.clientId, { limits: { postPer5s: 1e9, getPer5s: 1e9 } });
  try {
    return await fn(stack);
  } finally {
    await stack.close();
  }
}

async function webhooks() {
  await onStack({ SYNC_IMPORT_RATE_LIMIT_PER_SECOND: '100' }, async (stack) => {
    const slow = await startReceiver();
    slow.answer({ status: 200, delayMs: 4900 });
    const fast = await startReceiver();
    try {
      const a = (await stack.newBusiness({ name: 'A' })).businessId;
      const b = await stack.newBusiness({ name: 'B' });
      for (let i = 0; i < 10; i++)
        await createSubscription(stack.db, a, { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: `${slow.url}/${i}` });
      await createSubscription(stack.db, b.businessId, { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: fast.url });
      // A's backlog: 5,000 events due again at each of its 10 subscriptions (what a redelivery of a day's events makes)
      await stack.db.tx(async (q) => {
        for (let i = 0; i < 5000; i++) {
          await recordEvent(q, {
            businessId: a,
            entityId: null,
            eventName: 'card_issuance_api_access_updated',
            eventType: 'account_status_change',
            payload: (id) => ({ eventName: 'card_issuance_api_access_updated', eventType: 'account_status_change', data: { eventId: id, status: 'APPROVED' } }),
            sourceKey: `storm-${i}`,
          });
        }
      });
      // B: a person decided every half second for 60 s, by sync import (the real path: provider, decision, event, dispatcher)
      const ids = Array.from({ length: 120 }, (_, i) => `b-${i}`);
      await bulkEntities(stack.db, b.businessId, ids);
      const tokens = bulkTokens(
        stack.sim!,
        'b-donor',
        stack.recipient!.clientId,
        ids.map(() => 'complete'),
      );
      const started = Date.now();
      for (const [i, externalId] of ids.entries()) {
        await new Promise((r) => setTimeout(r, Math.max(0, started + i * 500 - Date.now())));
        void stack.request('POST', '/entity/kyc/import/sync', { key: b.apiKey, json: { externalId, shareToken: tokens[i] } });
      }
      const deadline = Date.now() + 30_000;
      while (fast.received.length < ids.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const created = new Map(
        (await stack.db.query<{ id: string; created_at: Date }>('SELECT id, created_at FROM events WHERE business_id = $1', [b.businessId])).map((e) => [
          e.id,
          e.created_at.getTime(),
        ]),
      );
      const lat = fast.received.map((r) => r.at - created.get(JSON.parse(r.body.toString()).data.eventId)!);
      const aDelivered = Number(
        (await stack.db.query<{ n: string }>("SELECT count(*) AS n FROM webhook_deliveries WHERE business_id = $1 AND status = 'delivered'", [a]))[0]!.n,
      );
      figures.push({
        scenario: "webhooks: B's decisions while A's 10 receivers answer after 4.9 s and A's 5,000 events are due again at each",
        "B's decision → receipt p50 / p95 / max (ms)": `${ms(pct(lat, 50))} / ${ms(pct(lat, 95))} / ${ms(Math.max(...lat))}`,
        'B delivered': `${fast.received.length} of ${ids.length}`,
        "A's deliveries meanwhile":
          `${aDelivered} of 50,000 (${(aDelivered / ((Date.now() - started) / 1000)).toFixed(1)}/s: ` + `its share, 64 in flight per dispatcher)`,
      });
      say(JSON.stringify(figures.at(-1)));
    } finally {
      await slow.close();
      await fast.close();
    }
  });
}

async function provider() {
  await onStack({ PROVIDER_RATE_LIMIT_PER_SECOND: '10' }, async (stack) => {
    const fixture = async (label: string, rows: number) => {
      const { apiKey, businessId } = await stack.newBusiness({ name: label });
      const ids = Array.from({ length: rows }, (_, i) => `${label}-${i}`);
      await bulkEntities(stack.db, businessId, ids);
      const tokens = bulkTokens(
        stack.sim!,
        `${label}-donor`,
        stack.recipient!.clientId,
        ids.map(() => 'complete'),
      );
      return {
        apiKey,
        csv: csvOf(
          'externalId,shareToken',
          ids.map((e, i) => [e, tokens[i]!]),
        ),
      };
    };
    const a = await fixture('A', 1000);
    const b = await fixture('B', 10);
    const imports = () => Object.values(stack.sim!.state.stats.imports).reduce((n, s) => n + s.attempts, 0);
    const t0 = performance.now();
    const big = await upload(stack, a.apiKey, a.csv);
    await new Promise((r) => setTimeout(r, 20_000));
    const callsAt20 = imports();
    const tb = performance.now();
    const small = await upload(stack, b.apiKey, b.csv);
    for (;;) {
      const [row] = await stack.db.query<{ status: string }>('SELECT status FROM import_batches WHERE id = $1', [small.body.batchId]);
      if (row!.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const bMs = performance.now() - tb;
    await new Promise((r) => setTimeout(r, Math.max(0, 40_000 - (performance.now() - t0))));
    const rate = (imports() - callsAt20) / ((performance.now() - t0 - 20_000) / 1000);
    figures.push({
      scenario: "provider: B's 10-row batch uploaded 20 s into A's 1,000-row batch, cap 10/s",
      "B's upload → completed": `${(bMs / 1000).toFixed(2)} s`,
      'provider calls/s from 20 s to 40 s (A and B)': rate.toFixed(2),
    });
    void big;
    say(JSON.stringify(figures.at(-1)));
  });
}

try {
  if (only.has('uploads')) await uploads();
  if (only.has('webhooks')) await webhooks();
  if (only.has('provider')) await provider();
  say('\none business against the others, on 2 cores with everything on them');
  console.table(figures);
} finally {
  await temporal.stop();
  await database.drop();
}
