// The batch engine: what every kind of batch does with its rows, written once. A batch workflow
// (batch-import.ts, requirement-batch.ts) runs one page per run: the first run starts the batch,
// each run takes the next page of pending rows from PostgreSQL and handles them (the kind decides
// how: a pool of records, a pool of steps), then the workflow continues as new after the page's last
// row, so a 5,000-row batch keeps every history small; an empty page finishes the batch. A cancel
// (the API marked the batch canceled first) ends the run as canceled; a failure the kind says fails
// the batch marks it failed with its reason, whatever cancels the run meanwhile; any other failure
// only ends the run. Counters and per-row results live in PostgreSQL (store/batch-runs.ts), where
// the status endpoint reads them. A third kind of batch is a BatchKind and a workflow of a few lines.
//
// The order of commands is the one both workflows issued before the engine (start, status, page,
// the page's steps, continue-as-new; on failure the batch's failing step, then the status), so
// their running histories replay unchanged (test/integration/replay.test.ts).
import { CancellationScope, isCancellation, setCurrentDetails } from '@temporalio/workflow';
import { setVouchStatus } from './status.ts';

/** One kind of batch, as the engine drives it (each step an activity of that kind). */
export type BatchKind = {
  /** What the Temporal UI's current details say of this run (ids only). */
  details: string;
  /** The batch is under way (its first run only). */
  start(): Promise<void>;
  /** Row numbers still pending after `after`, at most `limit`, in order; none once the batch has stopped. */
  nextRows(after: number, limit: number): Promise<number[]>;
  /** Handles one page of rows; resolves once every row is handled (or its failure recorded). */
  handle(rows: number[]): Promise<void>;
  /** Every row handled: the batch is completed. */
  finish(): Promise<void>;
  /** The reason this failure fails the whole batch, or undefined when it only ends the run. */
  failsBatch(err: unknown): string | undefined;
  /** The batch failed, with the reason. */
  fail(reason: string): Promise<void>;
};

/** Where a run ends: after a page (continue as new after `next`), or with the batch completed. */
export type BatchPage = { next: number } | { status: 'completed' };

/** Runs one page of a batch; the workflow continues as new after `next`, or returns the completion. */
export async function runBatchPage(input: { cursor?: number; pageSize: number }, kind: BatchKind): Promise<BatchPage> {
  setCurrentDetails(kind.details);
  try {
    if (input.cursor === undefined) {
      await kind.start();
      setVouchStatus('in_progress');
    }
    const rows = await kind.nextRows(input.cursor ?? 0, input.pageSize);
    if (rows.length > 0) {
      await kind.handle(rows);
      return { next: rows.at(-1)! };
    }
    await kind.finish();
    setVouchStatus('completed');
    return { status: 'completed' };
  } catch (err) {
    if (isCancellation(err)) {
      setVouchStatus('canceled');
      throw err; // the API marked the batch canceled before cancelling us
    }
    const reason = kind.failsBatch(err);
    if (reason !== undefined) {
      await CancellationScope.nonCancellable(() => kind.fail(reason));
      setVouchStatus('failed');
    }
    throw err;
  }
}
