// Which statements run as named prepared statements. PostgreSQL plans an unnamed statement every
// time it runs it; for the short statements a decision is made of, planning cost about as much as
// running them (measured: 15.6 s of planning beside 20 s of execution for 3,000 decisions). A
// statement text seen often enough gets a name, and each connection then parses it once and may
// reuse its plan (PostgreSQL's plan cache picks a generic plan only where it costs no more than
// planning each time). A statement that unnests arrays stays unnamed: a generic plan cannot know
// how many rows an array holds, and PostgreSQL's guess made two of ours ten times slower (the
// dispatcher's recording of attempts: 5.3 ms a call instead of 0.6).
//
// Bounded: only texts seen HOT_AFTER times get a name, and at most MAX_NAMED of them (each connection
// keeps what it prepared until it closes), so text built per call (a bulk INSERT's placeholders)
// never fills a connection's memory; texts counted are capped too. Not for PGlite, which serves
// every connection from one session (runtime/database.ts): two connections preparing one name
// would collide there.

/** Runs of one text before it is prepared. */
export const HOT_AFTER = 3;
/** Named statements at most (per pool, and so per connection). */
export const MAX_NAMED = 400;
/** Distinct texts counted at most. */
const MAX_COUNTED = 5_000;

/** What a named statement meets when its connection's prepared form no longer fits: a migration changed a table it reads, or a pooler lost it. */
export function isStaleStatement(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return (e?.code === '0A000' && /cached plan must not change result type/.test(e.message ?? '')) || e?.code === '26000';
}
/** Times the names are given up (isStaleStatement) before statements stay unnamed for good. */
const MAX_GENERATIONS = 3;
const UNNEST = /\bunnest\s*\(/i;

export function preparedStatementNames() {
  let named = new Map<string, string>();
  const seen = new Map<string, number>();
  let generation = 1;
  return {
    /** The name `sql` runs under, or undefined (unnamed) while it is not hot, or once the bound is reached. */
    nameOf(sql: string): string | undefined {
      const name = named.get(sql);
      if (name !== undefined || named.size >= MAX_NAMED || generation > MAX_GENERATIONS || UNNEST.test(sql)) return name;
      const n = (seen.get(sql) ?? 0) + 1;
      if (n < HOT_AFTER) {
        if (seen.size < MAX_COUNTED || seen.has(sql)) seen.set(sql, n);
        return undefined;
      }
      seen.delete(sql);
      const given = `vouch_${generation}_${named.size + 1}`;
      named.set(sql, given);
      return given;
    },
    /**
     * Gives every name up after a stale statement (its connection's prepared form no longer fits):
     * texts are prepared again under new names, on every connection; after MAX_GENERATIONS times
     * (a pooler that keeps losing them), never again.
     */
    forget(): void {
      generation++;
      named = new Map();
    },
    get size() {
      return named.size;
    },
  };
}
