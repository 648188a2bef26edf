// A write and its audit entry commit together (store/audit-log.ts): a store function that records an
// entry runs in the caller's transaction when handed one, else opens its own for the write and the entry.
import { isTx, type Db, type Tx } from './db.ts';

/** A transaction, or the database to open one on. */
export type Writer = Tx | Db;

export function inTx<T>(db: Writer, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return isTx(db) ? fn(db) : db.tx(fn);
}
