// The soak's verdict (bench/soak.ts), read after the drain from PostgreSQL (the system of record),
// the receivers (what the clients got) and the provider's door (what reached the provider):
//   records   every batch row and sync import reached a final state, with the outcome its share
//             token's scenario calls for; each that succeeded spent its token at the provider exactly
//             once and has its one decision event; every person or business the clients drove has
//             exactly the decision events it should (one; none; at most one when the client could
//             not tell whether its request took effect), and none has two;
//   events    every event has a delivery for each subscription that takes its type, every delivery
//             is delivered and was received at that subscription's receiver (repeats counted: the
//             same eventId twice at one subscription is at-least-once delivery after a kill), and no
//             receiver got an event it was not owed or one naming another business;
//   provider  no second (calendar, or any 1,000 ms window) held more calls than the cap, and the
//             provider never answered 429.
import type { Db } from '../../store/db.ts';
import type { DoorRecords } from './doors.ts';
import { busiestSeconds } from './doors.ts';
import type { Receivers } from './receivers.ts';
import type { Business, Donor, Expectation } from './traffic.ts';
import { scenarioSucceeds } from './traffic.ts';
import { sleep } from './fleet.ts';

export type Check = { name: string; ok: boolean; detail: string; warning?: boolean };

const count = async (db: Db, sql: string, params: unknown[] = []): Promise<number> => Number((await db.query<{ n: string }>(sql, params))[0]?.n ?? 0);

/** What is still under way: the drain waits until all of it is zero (or its time is up). */
export async function outstanding(db: Db, receivers: Receivers, expectations: Expectation[]) {
  const decisionsDue = expectations.filter((e) => e.expect === 1 && !receivers.decisions.has(`${e.entityId} ${e.eventType}`)).length;
  return {
    pendingBatchRows: await count(db, "SELECT count(*) AS n FROM import_records WHERE status = 'pending'"),
    unfinishedBatches: await count(db, "SELECT count(*) AS n FROM import_batches WHERE status IN ('pending', 'in_progress')"),
    pendingSyncImports: await count(db, "SELECT count(*) AS n FROM sync_imports WHERE status = 'pending'"),
    undeliveredDeliveries: await count(db, "SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'"),
    decisionsNotReceived: decisionsDue,
  };
}

export async function drain(db: Db, receivers: Receivers, expectations: Expectation[], deadline: number, say: (s: string) => void) {
  const started = Date.now();
  let left: Awaited<ReturnType<typeof outstanding>> | undefined;
  for (;;) {
    try {
      left = await outstanding(db, receivers, expectations);
      if (Object.values(left).every((n) => n === 0)) break;
    } catch (err) {
      say(`  drain: ${(err as Error).message}`);
    }
    if (Date.now() > deadline) break;
    await sleep(5000);
  }
  return { ms: Date.now() - started, left };
}

export async function runChecks(o: {
  db: Db;
  receivers: Receivers;
  door: DoorRecords;
  donor: Donor;
  businesses: Business[];
  expectations: Expectation[];
  cap: number;
  left: Record<string, number> | undefined;
}): Promise<{ checks: Check[]; provider: Record<string, unknown>; duplicates: { deliveries: number; extraReceipts: number } }> {
  const { db, receivers, door, donor } = o;
  const tokens = new Map(door.tokens);
  const checks: Check[] = [];
  const check = (name: string, ok: boolean, detail: string, warning = false) => void checks.push({ name, ok, detail, warning });

  // ---- records -------------------------------------------------------------------------------
  const records = await db.query<{ kind: string; token: string; status: string; category: string | null; key: string; has_event: boolean }>(
    `SELECT 'batch' AS kind, r.share_token AS token, r.status, r.error_category AS category, 'vouch-batch-' || r.batch_id || '-' || r.row_number AS key,
            EXISTS (SELECT 1 FROM events e WHERE e.source_key = 'vouch-batch-' || r.batch_id || '-' || r.row_number) AS has_event
       FROM import_records r
     UNION ALL
     SELECT 'sync', s.share_token, s.status, s.error_category, 'vouch-sync-' || s.request_id,
            EXISTS (SELECT 1 FROM events e WHERE e.source_key = 'vouch-sync-' || s.request_id)
       FROM sync_imports s`,
  );
  const notFinal = records.filter((r) => r.status === 'pending');
  const kinds = (rs: typeof records, kind: string) => rs.filter((r) => r.kind === kind).length;
  check(
    'every batch row and sync import reached a final state',
    notFinal.length === 0,
    `${records.length} records (${kinds(records, 'batch')} batch rows, ${kinds(records, 'sync')} sync imports); ` +
      `still pending: ${notFinal.length} (${kinds(notFinal, 'batch')} batch, ${kinds(notFinal, 'sync')} sync)`,
  );
  const wrong = new Map<string, number>();
  let unavailable = 0;
  for (const r of records) {
    const scenario = donor.scenarioOf.get(r.token);
    if (!scenario || r.status === 'pending') continue;
    const should = scenarioSucceeds(scenario) ? 'succeeded' : 'failed';
    if (r.status === 'failed' && r.category === 'PROVIDER_UNAVAILABLE') unavailable++;
    else if (r.status !== should || (should === 'failed' && r.category !== 'APPLICANT_DATA_REFUSED')) {
      const k = `${r.kind} ${scenario} → ${r.status}${r.category ? ` ${r.category}` : ''}`;
      wrong.set(k, (wrong.get(k) ?? 0) + 1);
    }
  }
  check(
    "every final record has its token's outcome (approvable → succeeded; refused by the donor → APPLICANT_DATA_REFUSED)",
    wrong.size === 0,
    wrong.size ? [...wrong].map(([k, n]) => `${n} × ${k}`).join('; ') : 'all as their scenarios say',
  );
  if (unavailable) check('records failed as PROVIDER_UNAVAILABLE (retryable; the faults outlasted their retries)', false, `${unavailable}`, true);
  const spent = { twice: 0, succeededNotOnce: 0, failedButSpent: 0 };
  for (const r of records) {
    const t = tokens.get(r.token);
    const ok = t?.ok ?? 0;
    if (ok > 1) spent.twice++;
    if (r.status === 'succeeded' && ok !== 1) spent.succeededNotOnce++;
    if (r.status === 'failed' && ok > 0) spent.failedButSpent++;
  }
  check(
    'each share token spent at the provider exactly once for a succeeded record, never for a failed one',
    spent.twice + spent.succeededNotOnce + spent.failedButSpent === 0,
    `spent twice: ${spent.twice}; succeeded but not spent exactly once: ${spent.succeededNotOnce}; failed but spent: ${spent.failedButSpent}`,
  );
  const noEvent = records.filter((r) => r.status === 'succeeded' && !r.has_event).length;
  check('each succeeded record has its decision event', noEvent === 0, `${noEvent} without`);

  const ids = [...new Set(o.expectations.map((e) => e.entityId))];
  const events = await db.query<{ entity_id: string; event_type: string; n: string }>(
    `SELECT entity_id, event_type, count(*) AS n FROM events
      WHERE entity_id = ANY($1::uuid[]) AND event_type IN ('account_status_change', 'kyb_status_change') GROUP BY 1, 2`,
    [ids],
  );
  const decided = new Map(events.map((e) => [`${e.entity_id} ${e.event_type}`, Number(e.n)]));
  const off = new Map<string, number>();
  for (const e of o.expectations) {
    const n = decided.get(`${e.entityId} ${e.eventType}`) ?? 0;
    const fine = e.expect === 'atMostOne' ? n <= 1 : n === e.expect;
    if (!fine) {
      const k = `${e.kind}: expected ${e.expect}, found ${n}`;
      off.set(k, (off.get(k) ?? 0) + 1);
    }
  }
  const byExpect = (x: Expectation['expect']) => o.expectations.filter((e) => e.expect === x).length;
  check(
    'every person and business driven got exactly its decision events',
    off.size === 0,
    `${o.expectations.length} expectations (${byExpect(1)} one, ${byExpect(0)} none, ${byExpect('atMostOne')} unknown to the client)` +
      (off.size ? `; off: ${[...off].map(([k, n]) => `${n} × ${k}`).join('; ')}` : ''),
  );
  const twice = await count(
    db,
    `SELECT count(*) AS n FROM (SELECT 1 FROM events WHERE event_type IN ('account_status_change', 'kyb_status_change') AND entity_id IS NOT NULL
       GROUP BY entity_id, event_type HAVING count(*) > 1) x`,
  );
  check('no entity decided twice (each is verified once in the soak)', twice === 0, `${twice} entities with two or more decision events`);

  // ---- events ----------------------------------------------------------------------------------
  const missingRows = await count(
    db,
    `SELECT count(*) AS n FROM events e JOIN notification_subscriptions s ON s.business_id = e.business_id AND e.event_type = ANY (s.types)
       LEFT JOIN webhook_deliveries d ON d.event_id = e.id AND d.subscription_id = s.id WHERE d.id IS NULL AND s.created_at <= e.created_at`,
  );
  check('every event has a delivery for each subscription that takes its type', missingRows === 0, `${missingRows} missing`);
  const deliveries = await db.query<{ event_id: string; subscription_id: string; status: string; attempts: number }>(
    'SELECT event_id, subscription_id, status, attempts FROM webhook_deliveries',
  );
  const pathOf = new Map(o.businesses.flatMap((b) => b.subscriptions.map((s) => [s.id, s.path] as const)));
  const byStatus = new Map<string, number>();
  let notReceived = 0;
  let owed = 0;
  const owedKeys = new Set<string>();
  for (const d of deliveries) {
    byStatus.set(d.status, (byStatus.get(d.status) ?? 0) + 1);
    const path = pathOf.get(d.subscription_id);
    if (!path) continue;
    owed++;
    owedKeys.add(`${path} ${d.event_id}`);
    if (!receivers.byPath.get(path)?.has(d.event_id)) notReceived++;
  }
  const statusText = [...byStatus].map(([s, n]) => `${s} ${n}`).join(', ');
  check('every delivery delivered', (byStatus.get('delivered') ?? 0) === deliveries.length, `${deliveries.length} deliveries: ${statusText}`);
  check('every delivery received at its subscription', notReceived === 0, `${owed - notReceived} of ${owed} received; ${notReceived} not`);
  let unowed = 0;
  let extraReceipts = 0;
  let repeated = 0;
  for (const [path, seen] of receivers.byPath)
    for (const [eventId, r] of seen) {
      if (!owedKeys.has(`${path} ${eventId}`)) unowed++;
      if (r.count > 1) {
        repeated++;
        extraReceipts += r.count - 1;
      }
    }
  check('no receiver got an event it was not owed', unowed === 0, `${unowed} (subscription, event) pairs received without a delivery row`);
  check('no event reached another business', receivers.stats.foreign === 0, `${receivers.stats.foreign} receipts naming another business`);
  check(
    'repeats (the same eventId more than once at one subscription: at-least-once after a kill)',
    true,
    `${repeated} deliveries received more than once, ${extraReceipts} extra receipts`,
    repeated > 0,
  );

  // ---- provider --------------------------------------------------------------------------------
  const times = door.calls.map((c) => c.at);
  const busiest = busiestSeconds(times, o.cap);
  const tooMany = door.calls.filter((c) => c.status === 429).length;
  const byOp = new Map<string, number>();
  for (const c of door.calls) byOp.set(c.op, (byOp.get(c.op) ?? 0) + 1);
  const byStatusProvider = new Map<number, number>();
  for (const c of door.calls) byStatusProvider.set(c.status, (byStatusProvider.get(c.status) ?? 0) + 1);
  const span = times.length ? (Math.max(...times) - Math.min(...times)) / 1000 : 0;
  const iso = (t: number) => new Date(t).toISOString();
  const precision = `the door's event loop delay p99 ${door.loopDelay.p99.toFixed(1)} ms, max ${door.loopDelay.max.toFixed(1)} ms`;
  check(
    `provider calls never above the cap (${o.cap}/s) in any calendar second`,
    busiest.calendar <= o.cap,
    `max ${busiest.calendar} (at ${iso(busiest.calendarAt)}); ${busiest.secondsAtCap} seconds at the cap`,
  );
  check(
    `provider calls never above the cap (${o.cap}) in any 1,000 ms window`,
    busiest.sliding <= o.cap,
    `max ${busiest.sliding} (from ${iso(busiest.slidingAt)}); the shortest span of ${Math.floor(o.cap) + 1} calls in a row ` +
      `${busiest.shortestSpan === null ? '–' : `${busiest.shortestSpan.toFixed(1)} ms (from ${iso(busiest.shortestAt)})`}; ${precision}`,
  );
  check('the provider never answered 429', tooMany === 0, `${tooMany} × 429`);
  const provider = {
    calls: door.calls.length,
    meanPerSecond: span ? door.calls.length / span : 0,
    maxCalendarSecond: busiest.calendar,
    maxSlidingSecond: busiest.sliding,
    shortestSpanOfCapPlusOne: busiest.shortestSpan,
    shortestSpanAt: busiest.shortestSpan === null ? null : iso(busiest.shortestAt),
    loopDelay: door.loopDelay,
    /** The calls of the densest cap + 1 in a row, and the second before and after: what to read when the cap was exceeded. */
    densest:
      busiest.shortestSpan === null
        ? []
        : door.calls
            .filter((c) => c.at >= busiest.shortestAt - 1000 && c.at <= busiest.shortestAt + busiest.shortestSpan! + 1000)
            .sort((a, b) => a.at - b.at)
            .map((c) => ({ ms: Math.round((c.at - busiest.shortestAt) * 10) / 10, op: c.op, status: c.status, port: c.port, fresh: c.fresh })),
    secondsAtCap: busiest.secondsAtCap,
    byOperation: Object.fromEntries([...byOp].sort((a, b) => b[1] - a[1])),
    byStatus: Object.fromEntries(byStatusProvider),
  };
  if (o.left && Object.values(o.left).some((n) => n > 0))
    check(
      'the drain finished',
      false,
      Object.entries(o.left)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${k} ${n}`)
        .join(', '),
    );
  return { checks, provider, duplicates: { deliveries: repeated, extraReceipts } };
}
