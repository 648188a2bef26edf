// Which statements run as named prepared statements (store/prepared-statements.ts): a text once hot,
// never one that unnests arrays, and never more than the bound.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HOT_AFTER, isStaleStatement, MAX_NAMED, preparedStatementNames } from '../../store/prepared-statements.ts';

describe('prepared statement names', () => {
  it('names a text once it has run HOT_AFTER times, always the same name; another text another name', () => {
    const names = preparedStatementNames();
    const sql = 'SELECT 1 FROM entities WHERE id = $1';
    for (let i = 1; i < HOT_AFTER; i++) assert.equal(names.nameOf(sql), undefined, `run ${i}: not hot yet`);
    const name = names.nameOf(sql);
    assert.ok(name);
    assert.equal(names.nameOf(sql), name);
    const other = 'SELECT 2 FROM entities WHERE id = $1';
    for (let i = 1; i < HOT_AFTER; i++) names.nameOf(other);
    const otherName = names.nameOf(other);
    assert.ok(otherName && otherName !== name);
  });

  it('leaves a statement that unnests arrays unnamed, however often it runs (a generic plan cannot know their size)', () => {
    const names = preparedStatementNames();
    const sql = 'UPDATE t SET x = u.x FROM unnest($1::uuid[], $2::int[]) AS u(id, x) WHERE t.id = u.id';
    for (let i = 0; i < HOT_AFTER * 3; i++) assert.equal(names.nameOf(sql), undefined);
  });

  it('names at most MAX_NAMED texts: text built per call never fills a connection', () => {
    const names = preparedStatementNames();
    for (let i = 0; i < MAX_NAMED + 50; i++) for (let j = 0; j < HOT_AFTER; j++) names.nameOf(`SELECT ${i}`);
    assert.equal(names.size, MAX_NAMED);
    assert.equal(names.nameOf(`SELECT ${MAX_NAMED + 10}`), undefined);
    assert.ok(names.nameOf('SELECT 0'), 'those named keep their names');
  });
});

describe('prepared statement names given up', () => {
  it('after a stale statement, texts get new names; after three times, none', () => {
    const names = preparedStatementNames();
    const hot = (sql: string) => {
      for (let j = 1; j < HOT_AFTER; j++) names.nameOf(sql);
      return names.nameOf(sql);
    };
    const first = hot('SELECT 1');
    names.forget();
    const second = hot('SELECT 1');
    assert.ok(first && second && first !== second, 'a new name: the connections prepared the old one with the old table');
    names.forget();
    assert.ok(hot('SELECT 1'));
    names.forget();
    assert.equal(hot('SELECT 1'), undefined, 'a pooler that keeps losing them: unnamed for good');
  });

  it('knows a stale statement by its error, and nothing else', () => {
    assert.equal(isStaleStatement({ code: '0A000', message: 'cached plan must not change result type' }), true);
    assert.equal(isStaleStatement({ code: '26000', message: 'prepared statement "vouch_1_3" does not exist' }), true);
    assert.equal(isStaleStatement({ code: '0A000', message: 'FOR UPDATE cannot be applied to the nullable side of an outer join' }), false);
    assert.equal(isStaleStatement({ code: '23505' }), false);
  });

  it('leaves UNNEST unnamed whatever its case and spacing', () => {
    const names = preparedStatementNames();
    for (const sql of ['SELECT * FROM UNNEST ($1::int[])', 'SELECT * FROM unnest  ($1::int[])'])
      for (let i = 0; i < HOT_AFTER * 2; i++) assert.equal(names.nameOf(sql), undefined);
  });
});
