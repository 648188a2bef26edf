// The audit log's rules (issue 21): the chain finds a changed, removed, reordered, added or cut-off
// entry and nothing in an intact one; every action of the catalogue is written somewhere in the code
// and none is written that the catalogue lacks; the README's table is the catalogue's; the CLI's
// commands do not declare one option two ways.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AUDIT_ACTIONS } from '../../domain/audit-actions.ts';
import { entryHash, GENESIS_HASH, verifyChain, type AuditEntry, type AuditFields } from '../../domain/audit-chain.ts';
import { auditActionsMarkdown } from '../../scripts/print-audit-actions.ts';
import { COMMANDS } from '../../cli/commands/index.ts';

const root = path.resolve(import.meta.dirname, '..', '..');

function chainOf(n: number): AuditEntry[] {
  const out: AuditEntry[] = [];
  let prevHash = GENESIS_HASH;
  for (let seq = 1; seq <= n; seq++) {
    const f: AuditFields = {
      businessId: 'b',
      seq,
      id: `id-${seq}`,
      occurredAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
      actorType: 'api_key',
      actorId: 'k',
      runId: null,
      requestId: `r-${seq}`,
      action: 'entity.created',
      entityId: `e-${seq}`,
      subjectType: null,
      subjectId: null,
      details: { n: seq },
      outcome: 'ok',
      prevHash,
    };
    const hash = entryHash(f);
    out.push({ ...f, hash });
    prevHash = hash;
  }
  return out;
}
const headOf = (c: AuditEntry[]) => ({ seq: c.at(-1)!.seq, hash: c.at(-1)!.hash });

describe('the audit chain', () => {
  it('holds when untouched', () => {
    const c = chainOf(5);
    assert.equal(verifyChain(c, headOf(c)), null);
    assert.equal(verifyChain([], null), null, 'no entries, no head');
  });
  it('names a changed entry, even one whose hash was recomputed', () => {
    const c = chainOf(5);
    const head = headOf(c);
    c[2] = { ...c[2]!, actorId: 'mallory' };
    assert.deepEqual(pick(verifyChain(c, head)), { seq: 3, problem: 'changed' });
    const d = chainOf(5);
    d[1] = { ...d[1]!, details: {} };
    d[1] = { ...d[1]!, hash: entryHash(d[1]!) };
    assert.deepEqual(pick(verifyChain(d, headOf(chainOf(5)))), { seq: 3, problem: 'reordered' }, 'the next entry no longer names it');
  });
  it('names a removed, a reordered, an added and a cut-off entry, and a missing head', () => {
    const c = chainOf(5);
    assert.deepEqual(pick(verifyChain([c[0]!, c[1]!, c[3]!, c[4]!], headOf(c))), { seq: 3, problem: 'removed' });
    assert.deepEqual(pick(verifyChain([c[0]!, { ...c[2]!, seq: 2 }, { ...c[1]!, seq: 3 }, c[3]!, c[4]!], headOf(c))), { seq: 2, problem: 'reordered' });
    assert.deepEqual(pick(verifyChain(c.slice(0, 3), headOf(c))), { seq: 4, problem: 'cut-off' });
    assert.deepEqual(pick(verifyChain(c, headOf(c.slice(0, 4)))), { seq: 5, problem: 'added' });
    assert.deepEqual(pick(verifyChain(c, null)), { seq: 5, problem: 'head-missing' });
  });
});

const pick = (b: { seq: number; problem: string } | null) => (b ? { seq: b.seq, problem: b.problem } : null);

function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [readFileSync(path.join(root, dir, e.name), 'utf8')] : [],
  );
}

describe('the audit actions', () => {
  const code = ['store', 'usecases', 'activities', 'api', 'cli'].flatMap(sources).join('\n');
  it('are each written somewhere in the code', () => {
    const unused = Object.keys(AUDIT_ACTIONS).filter((a) => !code.includes(`'${a}'`));
    assert.deepEqual(unused, [], 'catalogued but never written');
  });
  it('are the README table', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const table = readme.split('<!-- audit-actions:start')[1]?.split('<!-- audit-actions:end -->')[0]?.split('\n').slice(1).join('\n').trim();
    assert.equal(table, auditActionsMarkdown(), 'README audit table out of date: npm run docs:audit and paste it between the audit-actions markers');
  });
});

describe('the admin CLI', () => {
  it('declares each option one way', () => {
    const seen = new Map<string, string>();
    for (const c of COMMANDS)
      for (const [name, o] of Object.entries(c.options ?? {})) {
        const shape = JSON.stringify(o);
        assert.equal(seen.get(name) ?? shape, shape, `--${name} of ${c.name}`);
        seen.set(name, shape);
      }
  });
});
