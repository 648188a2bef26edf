// Reading the record itself, sealed entities included (issue 37). The product reads views that
// show only the rows of entities not sealed (store/migrations/026_sealed_is_gone.sql), so a sealed
// entity is gone on every path that names it. Trace, evidence export and the retention purge read
// the record as it is kept: they switch the views to include sealed rows for their own transaction
// only (SET LOCAL: gone at its end, never seen by another transaction, even on the embedded
// database's one shared session).
import type { Db, Tx } from './db.ts';

/** Lets this transaction see sealed entities' rows through the views. */
export async function includeSealed(tx: Tx): Promise<void> {
  await tx.query("SELECT set_config('vouch.include_sealed', 'on', true)");
}

/**
 * Runs fn in one read-only snapshot of the whole record, sealed entities included: what it reads
 * is of one moment (the audit chain's head and the entries with the rest).
 */
export function readRecord<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.tx(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    await includeSealed(tx);
    return fn(tx);
  });
}
