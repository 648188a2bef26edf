// The workflow threads' heap on /metrics (runtime/workflow-thread-heap.ts): the heaps of the process's
// worker threads, which Node's own heap metrics leave out, summed from Node's diagnostic report.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { register } from 'prom-client';
import { registerWorkflowThreadHeapMetrics, workerThreadHeaps } from '../../runtime/workflow-thread-heap.ts';

const MB = 1024 * 1024;

describe('workflow threads heap', () => {
  it("counts a worker thread's heap while it runs, and nothing once it is gone", async () => {
    assert.deepEqual(workerThreadHeaps(), { threads: 0, used: 0, total: 0 }, 'no worker thread yet');
    // a thread that keeps about 40 MB alive
    const code = [
      "const { parentPort } = require('node:worker_threads');",
      "globalThis.kept = Array.from({ length: 400_000 }, (_, i) => ({ i, s: 'x'.repeat(40) + i }));",
      "parentPort.postMessage('ready');",
      'setInterval(() => globalThis.kept.length, 1000);',
    ].join('\n');
    const thread = new Worker(code, { eval: true });
    await new Promise((resolve) => thread.once('message', resolve));
    const running = workerThreadHeaps();
    assert.equal(running.threads, 1);
    assert.ok(running.used > 30 * MB, `its heap in use: ${(running.used / MB).toFixed(1)} MB`);
    assert.ok(running.total >= running.used);
    const direct = await thread.getHeapStatistics();
    assert.ok(Math.abs(direct.used_heap_size - running.used) < 5 * MB, 'the same as the thread says of itself');

    registerWorkflowThreadHeapMetrics();
    registerWorkflowThreadHeapMetrics(); // once per process, however often it is called
    const text = await register.metrics();
    const value = (name: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(`${name} `))
          ?.split(' ')[1],
      );
    assert.equal(value('vouch_workflow_threads'), 1);
    assert.ok(value('vouch_workflow_threads_heap_used_bytes') > 30 * MB);
    assert.ok(value('vouch_workflow_threads_heap_total_bytes') >= value('vouch_workflow_threads_heap_used_bytes'));

    await thread.terminate();
    assert.deepEqual(workerThreadHeaps(), { threads: 0, used: 0, total: 0 }, 'the thread is gone');
  });
});
