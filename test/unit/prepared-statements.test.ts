// Which statements run as named prepared statements (store/prepared-statements.ts): a text once hot,
// never one that unnests arrays, and never more than the bound.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HOT_AFTER, MAX_NAMED, preparedStatementNames } from '../../store/prepared-statements.ts';

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
