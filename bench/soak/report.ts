// The soak's figures (bench/soak.ts): latency per route template and per window of the run, end to
// end latencies, resident memory per process, the database's size and its largest tables, and the
// Markdown that prints them.
import { pct } from '../../test/helpers/attacks.ts';
import type { Check } from './checks.ts';
import type { Sample } from './client.ts';
import type { Slot } from './fleet.ts';

export type Window = { label: string; from: number; to: number };
export type Cell = { n: number; errors: number; p50: number | null; p95: number | null };

/** Windows of `windowMs` from the traffic's start to its end, then the drain. */
export function windowsOf(trafficStart: number, trafficEnd: number, windowMs: number, runEnd: number): Window[] {
  const out: Window[] = [];
  for (let from = trafficStart; from < trafficEnd; from += windowMs) {
    const to = Math.min(trafficEnd, from + windowMs);
    out.push({ label: `${fmtMin(from - trafficStart)}–${fmtMin(to - trafficStart)} min`, from, to });
  }
  out.push({ label: 'drain', from: trafficEnd, to: Math.max(trafficEnd + 1, runEnd) });
  return out;
}
const fmtMin = (ms: number) => String(Math.round((ms / 60_000) * 10) / 10);

/** Per label and window: how many, how many failed (no answer or 5xx), p50 and p95 of those answered. */
export function byWindow(points: { label: string; at: number; ms: number; failed: boolean }[], windows: Window[]): Record<string, Cell[]> {
  const groups = new Map<string, { ms: number[]; n: number; errors: number }[]>();
  for (const p of points) {
    const w = windows.findIndex((x, i) => p.at >= x.from && (p.at < x.to || i === windows.length - 1));
    if (w < 0) continue;
    let cells = groups.get(p.label);
    if (!cells) groups.set(p.label, (cells = windows.map(() => ({ ms: [], n: 0, errors: 0 }))));
    const c = cells[w]!;
    c.n++;
    if (p.failed) c.errors++;
    else c.ms.push(p.ms);
  }
  const out: Record<string, Cell[]> = {};
  for (const [label, cells] of [...groups].sort(([a], [b]) => a.localeCompare(b)))
    out[label] = cells.map((c) => ({ n: c.n, errors: c.errors, p50: c.ms.length ? pct(c.ms, 50) : null, p95: c.ms.length ? pct(c.ms, 95) : null }));
  return out;
}

export const samplePoints = (samples: Sample[]) => samples.map((s) => ({ label: s.path, at: s.at, ms: s.ms, failed: s.status === 0 || s.status >= 500 }));

export type RssSeries = Record<string, { t: number; pid: number; mb: number; heapMb?: number | null; cpu: number | null }[]>;

/** Per process slot: first, highest and last resident memory, and the last incarnation's first and last (growth since its start). */
export function rssSummary(series: RssSeries) {
  return Object.fromEntries(
    Object.entries(series).map(([name, xs]) => {
      const last = xs.at(-1);
      const own = xs.filter((x) => x.pid === last?.pid);
      return [
        name,
        {
          first: xs[0]?.mb ?? null,
          max: xs.length ? Math.max(...xs.map((x) => x.mb)) : null,
          last: last?.mb ?? null,
          pids: [...new Set(xs.map((x) => x.pid))].length,
          lastIncarnation: own.length ? { first: own[0]!.mb, last: own.at(-1)!.mb, minutes: (own.at(-1)!.t - own[0]!.t) / 60_000 } : null,
          /** Least-squares growth of the last incarnation's memory, MB per minute (3 samples or more). */
          slopeMbPerMin: slope(own.map((x) => [x.t / 60_000, x.mb] as const)),
          /** The same of its V8 heap in use (APIs and workers), over its second half: past its warm-up and its caches filling. */
          heap: heapOf(own),
          /** Share of one core it used, on average, over its sampled incarnations. */
          cpuPercent: cpuShare(xs),
        },
      ];
    }),
  );
}

function heapOf(own: RssSeries[string]) {
  const xs = own.filter((x) => typeof x.heapMb === 'number') as { t: number; heapMb: number }[];
  if (xs.length < 2) return null;
  const half = xs.filter((x) => x.t >= (xs[0]!.t + xs.at(-1)!.t) / 2);
  return {
    first: xs[0]!.heapMb,
    last: xs.at(-1)!.heapMb,
    max: Math.max(...xs.map((x) => x.heapMb)),
    slopeSecondHalf: slope(half.map((x) => [x.t / 60_000, x.heapMb] as const)),
  };
}

/** Per process and window: the mean resident memory and V8 heap in use (MB) of the samples in it. */
export function memoryByWindow(series: RssSeries, windows: Window[]) {
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  return Object.fromEntries(
    Object.entries(series).map(([name, xs]) => [
      name,
      windows.map((w) => {
        const inside = xs.filter((x) => x.t >= w.from && x.t < w.to);
        return { rss: mean(inside.map((x) => x.mb)), heap: mean(inside.flatMap((x) => (typeof x.heapMb === 'number' ? [x.heapMb] : []))) };
      }),
    ]),
  );
}

/** Least squares slope of y on x; null under three points. */
export function slope(points: (readonly [number, number])[]): number | null {
  if (points.length < 3) return null;
  const mx = points.reduce((a, [x]) => a + x, 0) / points.length;
  const my = points.reduce((a, [, y]) => a + y, 0) / points.length;
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return sxx ? points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0) / sxx : null;
}

/** Provider calls per window: how many, per second on average, and the most in one calendar second. */
export function providerByWindow(times: number[], windows: Window[]) {
  return windows.map((w) => {
    const inside = times.filter((t) => t >= w.from && t < w.to);
    const perSecond = new Map<number, number>();
    for (const t of inside) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
    return {
      window: w.label,
      calls: inside.length,
      perSecond: inside.length / Math.max(1, (w.to - w.from) / 1000),
      maxInASecond: Math.max(0, ...perSecond.values()),
    };
  });
}

function cpuShare(xs: RssSeries[string]): number | null {
  let cpu = 0;
  let ms = 0;
  for (const pid of new Set(xs.map((x) => x.pid))) {
    const own = xs.filter((x) => x.pid === pid && x.cpu !== null);
    if (own.length < 2) continue;
    cpu += own.at(-1)!.cpu! - own[0]!.cpu!;
    ms += own.at(-1)!.t - own[0]!.t;
  }
  return ms > 0 ? (cpu * 1000 * 100) / ms : null;
}

const r = (x: number | null | undefined, digits = 0) => (x === null || x === undefined ? '–' : x.toFixed(digits));
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

export type Report = {
  title: string;
  settings: Record<string, unknown>;
  checks: Check[];
  faults: { name: string; plannedAt: string; startedAt: number | null; endedAt: number | null; details: string[] }[];
  windows: Window[];
  paths: Record<string, Cell[]>;
  endToEnd: Record<string, Cell[]>;
  flows: Record<string, unknown>;
  provider: Record<string, unknown>;
  rss: ReturnType<typeof rssSummary>;
  memory: ReturnType<typeof memoryByWindow>;
  rssSeries: RssSeries;
  dbSize: { t: number; bytes: number }[];
  tables: { table: string; bytes: number; rowsStart: number | null; rowsEnd: number }[];
  callbacks: Record<string, number>;
  receivers: Record<string, number>;
  problems: Record<string, { level: string; msg: string; count: number }[]>;
  /** Decision events recorded (account_status_change, kyb_status_change). */
  decisions: number;
  runStart: number;
};

export function markdown(rep: Report): string {
  const lines: string[] = [`## ${rep.title}`, ''];
  const t = (ms: number | null) => (ms === null ? '–' : `${((ms - rep.runStart) / 60_000).toFixed(1)} min`);
  lines.push('### Checks', '', '| check | result | detail |', '| --- | --- | --- |');
  for (const c of rep.checks) lines.push(`| ${c.name} | ${c.ok ? (c.warning ? 'pass (note)' : 'pass') : c.warning ? 'warning' : '**FAIL**'} | ${c.detail} |`);
  lines.push('', '### Faults', '', '| fault | planned | began | ended | what happened |', '| --- | --- | --- | --- | --- |');
  for (const f of rep.faults) lines.push(`| ${f.name} | ${f.plannedAt} | ${t(f.startedAt)} | ${t(f.endedAt)} | ${f.details.join('; ')} |`);
  const table = (title: string, rows: Record<string, Cell[]>) => {
    lines.push('', `### ${title}`, '', `| path | ${rep.windows.map((w) => w.label).join(' | ')} |`, `| --- | ${rep.windows.map(() => '---').join(' | ')} |`);
    for (const [label, cells] of Object.entries(rows))
      lines.push(`| ${label} | ${cells.map((c) => (c.n ? `${r(c.p50)} / ${r(c.p95)} (${c.n}${c.errors ? `, ${c.errors} failed` : ''})` : '')).join(' | ')} |`);
  };
  table('API latency per route, p50 / p95 ms (requests; failed = no answer or 5xx)', rep.paths);
  table('End to end, p50 / p95 ms (count), by when it began', rep.endToEnd);
  const p = rep.provider as {
    calls: number;
    cap: number;
    meanPerSecond: number;
    maxCalendarSecond: number;
    maxSlidingSecond: number;
    shortestSpanOfCapPlusOne: number | null;
    secondsAtCap: number;
    byOperation: Record<string, number>;
    byStatus: Record<string, number>;
    byWindow: ReturnType<typeof providerByWindow>;
    densest: { ms: number; op: string; status: number; port: number; fresh: boolean }[];
  };
  lines.push(
    '',
    `### Provider (cap ${p.cap}/s): ${p.calls} calls, ${p.meanPerSecond.toFixed(2)}/s on average; the most in a calendar second ${p.maxCalendarSecond}, ` +
      `in any 1,000 ms ${p.maxSlidingSecond}; ${p.secondsAtCap} seconds at the cap; the shortest span of cap + 1 calls ` +
      `${p.shortestSpanOfCapPlusOne === null ? '–' : `${p.shortestSpanOfCapPlusOne.toFixed(1)} ms`}; answers ${JSON.stringify(p.byStatus)}`,
    '',
    `| window | ${p.byWindow.map((w) => w.window).join(' | ')} |`,
    `| --- | ${p.byWindow.map(() => '---').join(' | ')} |`,
    `| calls/s (most in a second) | ${p.byWindow.map((w) => `${w.perSecond.toFixed(2)} (${w.maxInASecond})`).join(' | ')} |`,
    '',
    `By operation: ${Object.entries(p.byOperation)
      .map(([op, n]) => `${op} ${n}`)
      .join(' · ')}`,
  );
  if (p.maxSlidingSecond > p.cap)
    lines.push(
      '',
      `The densest ${p.cap + 1} calls (ms from the first of them; the caller's port; * the first call on its connection): ` +
        p.densest.map((c) => `${c.ms} ${c.port}${c.fresh ? '*' : ''}`).join(' · '),
    );
  lines.push('', '### Flows (client side)', '', '| flow | started | done | skipped | failed |', '| --- | --- | --- | --- | --- |');
  for (const [kind, s] of Object.entries(rep.flows as Record<string, { started: number; done: number; skipped: number; failed: Record<string, number> }>))
    lines.push(
      `| ${kind} | ${s.started} | ${s.done} | ${s.skipped} | ${
        Object.entries(s.failed)
          .map(([k, n]) => `${n} × ${k}`)
          .join('; ') || '0'
      } |`,
    );
  lines.push(
    '',
    `Callbacks (simulator → API): ${JSON.stringify(rep.callbacks)}. Receivers: ${JSON.stringify(rep.receivers)}.`,
    '',
    '### Resident memory per process (MB)',
    '',
    '| process | first | max | last | incarnations | last incarnation: first → last (minutes) | its trend (MB/min) ' +
      '| V8 heap in use: first → last (max) | heap trend, second half (MB/min) | CPU (% of a core) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  const lastOf = (s: (typeof rep.rss)[string]) =>
    s.lastIncarnation ? `${r(s.lastIncarnation.first)} → ${r(s.lastIncarnation.last)} (${r(s.lastIncarnation.minutes, 1)})` : '–';
  const heapOfRow = (s: (typeof rep.rss)[string]) => (s.heap ? `${r(s.heap.first)} → ${r(s.heap.last)} (${r(s.heap.max)})` : '–');
  for (const [name, s] of Object.entries(rep.rss))
    lines.push(
      `| ${name} | ${r(s.first)} | ${r(s.max)} | ${r(s.last)} | ${s.pids} | ${lastOf(s)} | ${r(s.slopeMbPerMin, 2)} ` +
        `| ${heapOfRow(s)} | ${r(s.heap?.slopeSecondHalf, 2)} | ${r(s.cpuPercent)} |`,
    );
  lines.push(
    '',
    '### Memory per window: resident / V8 heap in use (MB, means of the samples)',
    '',
    `| process | ${rep.windows.map((w) => w.label).join(' | ')} |`,
  );
  lines.push(`| --- | ${rep.windows.map(() => '---').join(' | ')} |`);
  for (const [name, cells] of Object.entries(rep.memory))
    lines.push(`| ${name} | ${cells.map((c) => (c.rss === null ? '' : `${r(c.rss)}${c.heap === null ? '' : ` / ${r(c.heap)}`}`)).join(' | ')} |`);
  const sizes = rep.dbSize;
  const grown = sizes.length > 1 ? sizes.at(-1)!.bytes - sizes[0]!.bytes : 0;
  const step = Math.max(1, Math.ceil(sizes.length / 12));
  lines.push(
    '',
    `### Database size (MB): ${sizes
      .filter((_, i) => i % step === 0 || i === sizes.length - 1)
      .map((s) => `${t(s.t)} ${mb(s.bytes)}`)
      .join(' · ')}`,
    '',
    `Grown by ${mb(grown)} MB: ${rep.decisions ? `${(grown / rep.decisions / 1024).toFixed(1)} KB per decision event (${rep.decisions})` : 'no decisions'}.`,
    '',
    '| table | size at end (MB) | rows at start | rows at end |',
    '| --- | --- | --- | --- |',
  );
  for (const x of rep.tables) lines.push(`| ${x.table} | ${mb(x.bytes)} | ${x.rowsStart ?? '–'} | ${x.rowsEnd} |`);
  lines.push('', '### Warnings and errors in the logs (top messages per process)', '');
  for (const [slot, problems] of Object.entries(rep.problems))
    if (problems.length) lines.push(`- **${slot}**: ${problems.map((p) => `${p.count} × ${p.level} "${p.msg}"`).join('; ')}`);
  return lines.join('\n');
}
