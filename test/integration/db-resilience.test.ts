// The database connection lost in the middle of a transaction (PostgreSQL restarted, a connection
// killed): the transaction fails and the process lives on. A checked-out pg client has no error
// listener of the pool's, so without ours its 'error' event would end the process; the fault test
// saw a worker die that way after a PostgreSQL restart.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { connectDb, type Db } from '../../store/db.ts';
import { isolatedDatabaseUrl } from '../helpers/stack.ts';

let db: Db;
let admin: Db;
before(async () => {
  const url = await isolatedDatabaseUrl();
  db = connectDb(url, 2);
  admin = connectDb(url, 1);
});
after(async () => {
  await db.close();
  await admin.close();
});

it('fails the transaction whose connection is killed between two statements, and goes on', async () => {
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    await assert.rejects(
      db.tx(async (q) => {
        const [{ pid }] = (await q.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')) as [{ pid: number }];
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        await new Promise((r) => setTimeout(r, 300)); // the termination arrives while no statement runs
        await q.query('SELECT 1');
      }),
    );
    assert.deepEqual(uncaught, [], 'no uncaught error event');
    assert.deepEqual(await db.query('SELECT 1 AS ok'), [{ ok: 1 }], 'the pool serves the next statement');
  } finally {
    process.off('uncaughtException', onUncaught);
  }
});

it("a prepared statement outlives a migration that changes its table: run again unnamed at once, in a transaction after the caller's retry", async () => {
  const url = await isolatedDatabaseUrl();
  const prepared = connectDb(url, 1, { prepare: true }); // one connection: every run on the one that prepared it
  try {
    await prepared.query('CREATE TABLE migrated (id int)');
    await prepared.query('INSERT INTO migrated VALUES (1)');
    const read = () => prepared.query('SELECT * FROM migrated');
    for (let i = 0; i < 4; i++) assert.deepEqual(await read(), [{ id: 1 }]); // hot: named and prepared
    await admin.query('SELECT 1'); // (another pool)
    const other = connectDb(url, 1);
    await other.query('ALTER TABLE migrated ADD COLUMN note text'); // a new release's migration, from another process
    await other.close();
    assert.deepEqual(await read(), [{ id: 1, note: null }], 'on its own: run again unnamed, the new column there');
    for (let i = 0; i < 4; i++) assert.deepEqual(await read(), [{ id: 1, note: null }], 'prepared again under a new name');
    const again = connectDb(url, 1);
    await again.query('ALTER TABLE migrated ADD COLUMN more text');
    await again.close();
    await assert.rejects(
      prepared.tx((q) => q.query('SELECT * FROM migrated')),
      /cached plan must not change result type/,
      'in a transaction the statement fails (the transaction cannot go on)',
    );
    assert.deepEqual(await prepared.tx((q) => q.query('SELECT * FROM migrated')), [{ id: 1, note: null, more: null }], "the caller's retry works");
  } finally {
    await prepared.close();
  }
});
