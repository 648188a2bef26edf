// The audit log's rules (issue 21): the chain finds a changed, removed, reordered, added or cut-off
// entry and nothing in an intact one; every action of the catalogue is written somewhere in the code
// and none is written that the catalogue lacks; docs/compliance.md's table is the catalogue's; the CLI's
// commands do not declare one option two ways.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AUDIT_ACTIONS } from '../../domain/audit-actions.ts';
import { apiVocabulary, buildOpenApi } from '../../api/openapi.ts';
import { allRoutes } from '../../api/app.ts';
import { AUDIT_DETAILS_MAX_BYTES, boundedDetails, clip, parameterShape, UNKNOWN_NAME } from '../../domain/audit-bounds.ts';
import { chainChecker, entryHash, GENESIS_HASH, verifyChain, type AuditEntry, type AuditFields } from '../../domain/audit-chain.ts';
import { loadConfig } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { auditActionsMarkdown } from '../../scripts/print-audit-actions.ts';
import { markedTable } from '../helpers/docs.ts';
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
  it('holds a chain rewritten whole after a signed checkpoint against it, naming the checkpoint', () => {
    const c = chainOf(8);
    const attested = { id: 'cp-1', seq: 6, hash: c[5]!.hash, at: '2026-01-01T00:00:06.000Z' };
    const walk = (entries: AuditEntry[], head: { seq: number; hash: string }, cps = [attested]) => {
      const check = chainChecker(cps);
      for (const e of entries) {
        const broken = check.push(e);
        if (broken) return broken;
      }
      return check.end(head);
    };
    assert.equal(walk(c, headOf(c)), null, 'intact: the checkpoint is in the chain');
    // the last five cut and the head moved back: consistent in itself, but the checkpoint attests seq 6
    const cut = c.slice(0, 3);
    assert.equal(verifyChain(cut, headOf(cut)), null, 'without the checkpoint, nothing shows');
    const b = walk(cut, headOf(cut))!;
    assert.deepEqual([b.problem, b.checkpoint], ['checkpoint', 'cp-1']);
    assert.match(b.detail, /attests seq 6; the chain ends at 3/);
    // entry 4 changed and every hash after it recomputed: the checkpoint's hash is no longer the chain's
    const rewritten = chainOf(8).map((e) => ({ ...e }));
    let prevHash = rewritten[2]!.hash;
    for (let i = 3; i < 8; i++) {
      const f = { ...rewritten[i]!, details: i === 3 ? { n: 999 } : rewritten[i]!.details, prevHash };
      rewritten[i] = { ...f, hash: entryHash(f) };
      prevHash = rewritten[i]!.hash;
    }
    assert.equal(verifyChain(rewritten, headOf(rewritten)), null);
    assert.deepEqual(pick(walk(rewritten, headOf(rewritten))), { seq: 6, problem: 'checkpoint' });
  });
});

describe('what enters an entry', () => {
  it("records a parameter by its shape: the API's names kept, a caller's made-up names as <unknown>, indexes as they are", () => {
    const known = (n: string) => ['requirements', 'value', 'entityId', 'Content-Type'].includes(n);
    assert.equal(parameterShape('requirements[0].value', known), 'requirements[0].value');
    assert.equal(parameterShape('requirements[12].mySsn', known), `requirements[12].${UNKNOWN_NAME}`);
    assert.equal(parameterShape('x'.repeat(200_000), known), UNKNOWN_NAME);
    assert.equal(parameterShape('Content-Type', known), 'Content-Type');
    assert.equal(parameterShape('', known), '');
    assert.equal(parameterShape('a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s', known).split('.').length, 17, 'at most 16 parts, then one <unknown>');
  });
  it('caps details: within the cap as given, beyond it their digest', () => {
    assert.deepEqual(boundedDetails({ a: 'b' }), { a: 'b' });
    const big = boundedDetails({ a: 'z'.repeat(AUDIT_DETAILS_MAX_BYTES) });
    assert.equal(big.capped, true);
    assert.match(String(big.sha256), /^[0-9a-f]{64}$/);
  });
  it("clips a caller's text to a short prefix", () => {
    assert.equal(clip('abc', 5), 'abc');
    assert.equal(clip('abcdef', 3), 'abc…');
    assert.equal(clip('😀😀😀', 2), '😀😀…', 'never splitting a character');
  });
  it('knows every parameter name the code refuses with, so their shapes keep them', () => {
    const doc = buildOpenApi(
      allRoutes({
        config: loadConfig({ FILE_LINK_SECRET: 'describing-the-routes-only-never-signing-a-link' }),
        db: {} as never,
        temporal: {} as never,
        log: createLogger('silent'),
        keys: { webhooks: [], standardWebhooks: [], signedPayloads: [], auditCheckpoints: [], sealing: [] },
      }),
    );
    const vocabulary = apiVocabulary(doc);
    const named = new Set(['api', 'usecases', 'domain'].flatMap(sources).flatMap((c) => [...c.matchAll(/parameter: '([^']+)'/g)].map((m) => m[1]!)));
    const provider = new Set(['x-payload-digest', 'link']); // the provider's callback and a download link: no API key, no refusal entry
    assert.deepEqual(
      [...named].filter((n) => !vocabulary.has(n) && !provider.has(n)),
      [],
    );
  });
});

const pick = (b: { seq: number; problem: string } | null) => (b ? { seq: b.seq, problem: b.problem } : null);

function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [readFileSync(path.join(root, dir, e.name), 'utf8')] : [],
  );
}

describe('the audit actions', () => {
  const code = ['store', 'onboarding', 'usecases', 'activities', 'api', 'cli'].flatMap(sources).join('\n');
  it('are each written somewhere in the code', () => {
    const unused = Object.keys(AUDIT_ACTIONS).filter((a) => !code.includes(`'${a}'`));
    assert.deepEqual(unused, [], 'catalogued but never written');
  });
  it("are the compliance guide's table", () => {
    const table = markedTable('docs/compliance.md', 'audit-actions');
    assert.equal(
      table,
      auditActionsMarkdown(),
      'docs/compliance.md audit table out of date: npm run docs:audit and paste it between the audit-actions markers',
    );
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
