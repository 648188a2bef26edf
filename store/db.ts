// The one way code reaches PostgreSQL: a pool speaking the wire protocol, whether the server is
// a real PostgreSQL or the embedded PGlite served over a socket (store/embedded-postgres.ts).
import pg from 'pg';
import { isStaleStatement, preparedStatementNames } from './prepared-statements.ts';

export type Row = Record<string, unknown>;

export interface Queryable {
  query<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

/** A transaction: its statements, work to do last before it commits, and work to start once it has committed. */
export interface Tx extends Queryable {
  beforeCommit(fn: () => Promise<void>): void;
  /**
   * Started after COMMIT succeeds (never on rollback), without delaying the transaction's caller:
   * the audit chain's linking (store/audit-chainer.ts). Its failure is its own to handle; db.close()
   * waits for it.
   */
  afterCommit(fn: (db: Db) => Promise<void>): void;
  /**
   * What this transaction has established and need not ask again (store functions' own keys): the
   * rows it locked (store/entities.ts lockEntity), the event types its business subscribes to
   * (store/subscriptions.ts). Gone with the transaction.
   */
  readonly memo: Map<string, unknown>;
}

export const isTx = (db: Queryable): db is Tx => typeof (db as Partial<Tx>).beforeCommit === 'function';

export interface Db extends Queryable {
  /** Runs fn in one transaction; commits if it resolves, rolls back if it throws. */
  tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  ping(): Promise<number>;
  close(): Promise<void>;
}

/** `prepare`: hot statements run as named prepared statements (store/prepared-statements.ts) — a real PostgreSQL's, never PGlite's. */
export function connectDb(url: string, poolSize = 10, options: { prepare?: boolean } = {}): Db {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 10_000 });
  // A pooled client that errors while idle must not take the process down; the pool replaces it.
  pool.on('error', () => {});
  // Nor one in use: when the server goes away mid-query (a restart: 57P01, then the socket's end),
  // a client may emit 'error' more than once, and pool.query listens only once. The query itself
  // still fails (its callback gets the error), so a listener on every client is all that is needed.
  pool.on('connect', (client) => client.on('error', () => {}));
  const names = options.prepare ? preparedStatementNames() : null;
  const run = async <T extends Row>(client: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[]) => {
    const values = params as unknown[] | undefined;
    const name = names?.nameOf(sql);
    try {
      return (await client.query<T>({ text: sql, values, name })).rows;
    } catch (err) {
      if (name === undefined || !isStaleStatement(err)) throw err;
      // a migration changed a table the statement reads (or a pooler lost it): prepared again under new names;
      // on its own it is run again unnamed (it failed before running); in a transaction, that fails and its caller retries
      names!.forget();
      if (client !== pool) throw err;
      return (await client.query<T>({ text: sql, values })).rows;
    }
  };
  // work started after commits, awaited by close() so that none is cut off by the pool's end
  const afterWork = new Set<Promise<void>>();
  const startAfter = (fn: (db: Db) => Promise<void>) => {
    const p: Promise<void> = fn(db)
      .catch(() => {})
      .finally(() => afterWork.delete(p));
    afterWork.add(p);
  };
  const db: Db = {
    query: (sql, params) => run(pool, sql, params),
    async tx(fn) {
      const client = await pool.connect();
      // A checked-out client has no 'error' listener of the pool's: if the server goes away between
      // two statements (a restart), its 'error' event would kill the process. The failed statement
      // (or COMMIT) rejects anyway, so noting it is enough.
      const onError = () => {};
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const last: (() => Promise<void>)[] = [];
        const after: ((db: Db) => Promise<void>)[] = [];
        const result = await fn({
          query: (sql, params) => run(client, sql, params),
          beforeCommit: (f) => void last.push(f),
          afterCommit: (f) => void after.push(f),
          memo: new Map(),
        });
        // hooks may add hooks; each runs once, in the order added
        for (let i = 0; i < last.length; i++) await last[i]!();
        await client.query('COMMIT');
        for (const f of after) startAfter(f);
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.off('error', onError);
        client.release();
      }
    },
    async ping() {
      const started = performance.now();
      await pool.query('SELECT 1');
      return performance.now() - started;
    },
    async close() {
      while (afterWork.size > 0) await Promise.allSettled([...afterWork]);
      await pool.end();
    },
  };
  return db;
}

export const iso = (d: unknown): string => (d instanceof Date ? d.toISOString() : new Date(String(d)).toISOString());

/** True when err is PostgreSQL's unique violation, optionally on a named constraint. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/** A row that names a row of another table which is not there (an entity deleted meanwhile, say). */
export function isForeignKeyViolation(err: unknown): boolean {
  return (err as { code?: string })?.code === '23503';
}

/**
 * Runs the reads at once on a pool (each on a connection of its own), one after another in a
 * transaction, whose one connection runs one query at a time (and whose driver would warn of them
 * queued at once).
 */
export async function readAll<const T extends readonly (() => Promise<unknown>)[]>(
  db: Queryable,
  reads: T,
): Promise<{ -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> }> {
  type Out = { -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> };
  if (!isTx(db)) return (await Promise.all(reads.map((r) => r()))) as Out;
  const out: unknown[] = [];
  for (const r of reads) out.push(await r());
  return out as Out;
}
