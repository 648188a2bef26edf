// The V8 heap of this process's worker threads: the Temporal SDK runs workflow code in threads of its
// own, and their isolates hold the sticky cache's workflows (WORKER_MAX_CACHED_WORKFLOWS). Node's heap
// metrics (vouch_nodejs_heap_*) count the main thread's isolate only, so without these a worker's
// resident memory could grow with nothing on /metrics saying where. Registered by the processes that
// run workflows (worker.ts); read from Node's diagnostic report, about 5 ms, on each scrape.
import { Gauge } from 'prom-client';

type ThreadHeap = { usedMemory: number; totalMemory: number };
type ReportShape = { workers?: { javascriptHeap?: ThreadHeap }[] };

/** The heaps of the process's worker threads now: bytes in use and bytes V8 holds for them, summed. */
export function workerThreadHeaps(): { threads: number; used: number; total: number } {
  // excludeNetwork: Node ≥ 22.13 (not in @types/node yet)
  const report = process.report as NodeJS.ProcessReport & { excludeNetwork?: boolean };
  const excluded = report.excludeNetwork;
  report.excludeNetwork = true; // no reverse DNS of the network interfaces: the report in milliseconds
  let workers: { javascriptHeap?: ThreadHeap }[];
  try {
    workers = (report.getReport() as ReportShape).workers ?? [];
  } finally {
    report.excludeNetwork = excluded;
  }
  let used = 0;
  let total = 0;
  for (const w of workers) {
    used += w.javascriptHeap?.usedMemory ?? 0;
    total += w.javascriptHeap?.totalMemory ?? 0;
  }
  return { threads: workers.length, used, total };
}

let registered = false;

/** Serves vouch_workflow_threads_heap_{used,total}_bytes and vouch_workflow_threads on /metrics (once per process). */
export function registerWorkflowThreadHeapMetrics(): void {
  if (registered) return;
  registered = true;
  // one report per scrape for the three gauges
  let last: { at: number; heaps: ReturnType<typeof workerThreadHeaps> } | undefined;
  const heaps = () => {
    if (!last || Date.now() - last.at > 1000) last = { at: Date.now(), heaps: workerThreadHeaps() };
    return last.heaps;
  };
  new Gauge({
    name: 'vouch_workflow_threads_heap_used_bytes',
    help: "V8 heap in use by the process's workflow threads (the sticky cache's workflows live there), summed",
    collect() {
      this.set(heaps().used);
    },
  });
  new Gauge({
    name: 'vouch_workflow_threads_heap_total_bytes',
    help: "V8 heap held for the process's workflow threads, summed",
    collect() {
      this.set(heaps().total);
    },
  });
  new Gauge({
    name: 'vouch_workflow_threads',
    help: "The process's workflow threads (worker threads)",
    collect() {
      this.set(heaps().threads);
    },
  });
}
