// One lock order for a person's or a business's rows (issue 18): every transaction that locks an
// entity and its submission takes the entity first. Two writers taking them in opposite orders —
// PATCH /ukyb (entity, then the waiting submission it supersedes) against the KYB decision
// (submission, then entity), as before — can each hold what the other waits for: a deadlock
// PostgreSQL breaks by failing one of them. Each writer's statements are recorded against a real
// database and the order of its first lock on each table is checked. And a business entity before
// its members: deleting a declared owner while its business entity's profile is saved (the links
// rewritten) is played with the saving transaction held at its worst moment.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createBusiness } from '../../store/businesses.ts';
import { connectDb, type Db, type Queryable } from '../../store/db.ts';
import { deleteEntity } from '../../onboarding/entities.ts';
import { createEntity } from '../../store/entities.ts';
import { saveProfile } from '../../onboarding/kyb-profiles.ts';
import { loadKybSubmission, openKybSubmission, settleKybSubmission } from '../../store/kyb.ts';
import { loadSubmission, recordUploadedFiles, settleSubmission, submitCanonicalData } from '../../store/universal-kyc.ts';
import { isolatedDatabaseUrl } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';

/** The same database, with every statement it runs (in a transaction or not) written down. */
function recording(db: Db): { db: Db; statements: string[] } {
  const statements: string[] = [];
  const wrap = <Q extends Queryable>(q: Q): Q => ({
    ...q,
    query: (sql: string, params?: readonly unknown[]) => {
      statements.push(sql.replace(/\s+/g, ' '));
      return q.query(sql, params);
    },
  });
  return { statements, db: { ...db, query: wrap(db).query, tx: (fn) => db.tx((q) => fn(wrap(q))) } };
}

/** Where a statement first locks a row of the entity or of a submission (a locking read, or a write). */
function firstLocks(statements: string[], submissions: 'kyb_submissions' | 'ukyc_submissions') {
  const locks = (s: string, table: string) =>
    new RegExp(`FROM ${table}\\b[^;]*FOR (UPDATE|NO KEY UPDATE|SHARE|KEY SHARE)|^(UPDATE|DELETE FROM|INSERT INTO) ${table}\\b`, 'i').test(s.trim());
  return { entity: statements.findIndex((s) => locks(s, 'entities')), submission: statements.findIndex((s) => locks(s, submissions)) };
}

/** The writer locks its entity, and before any submission row it locks itself (a cascade from the entity's deletion comes after it by nature). */
function check(name: string, statements: string[], submissions: 'kyb_submissions' | 'ukyc_submissions') {
  const { entity, submission } = firstLocks(statements, submissions);
  assert.ok(entity >= 0, `${name} locks its entity:\n${statements.join('\n')}`);
  if (submission >= 0) assert.ok(entity < submission, `${name} locks its submission before its entity:\n${statements.join('\n')}`);
}

type Writer = [name: string, write: (d: Db) => Promise<unknown>];

describe('one lock order: a business entity before its members, an entity before its submission', () => {
  let db: Db;
  let businessId: string;
  before(async () => {
    db = connectDb(await isolatedDatabaseUrl(), 4);
    businessId = (await createBusiness(db, { name: 'Locks', binSponsored: false, environment: 'sandbox' })).business.id;
  });
  after(() => db.close());

  /** Runs each writer against the recording database and checks its order. */
  const checkEach = async (writers: Writer[], submissions: 'kyb_submissions' | 'ukyc_submissions') => {
    for (const [name, write] of writers) {
      const r = recording(db);
      await write(r.db);
      check(name, r.statements, submissions);
    }
  };

  const profile = (entityId: string, mode: 'create' | 'change') => (d: Db) =>
    saveProfile(d, { mode, businessId, entityId, business: () => ({ legalName: 'Locks Ltd' }), owners: [] });

  it('universal KYB: saving, submitting, settling and deleting', async () => {
    const company = await createEntity(db, businessId, { externalId: `co-${randomUUID()}`, type: 'BUSINESS' });
    await profile(company, 'create')(db);
    const writers: Writer[] = [
      ['openKybSubmission', (d) => openKybSubmission(d, { businessId, entityId: company, deadlineSeconds: 60 })],
      [
        'the decision (loadKybSubmission with its lock, then settleKybSubmission)',
        async (d) => {
          const { submissionId } = await openKybSubmission(db, { businessId, entityId: company, deadlineSeconds: 60 });
          return d.tx(async (q) => {
            const s = await loadKybSubmission(q, submissionId, true);
            await settleKybSubmission(q, submissionId, { entityId: s!.entityId, status: 'decided', decision: 'APPROVED', eventId: randomUUID() });
          });
        },
      ],
      [
        'PATCH /ukyb (saveProfile superseding a waiting submission)',
        async (d) => {
          await openKybSubmission(db, { businessId, entityId: company, deadlineSeconds: 60 });
          return profile(company, 'change')(d);
        },
      ],
      [
        'DELETE /entity',
        async (d) => {
          await openKybSubmission(db, { businessId, entityId: company, deadlineSeconds: 60 });
          return deleteEntity(d, businessId, company);
        },
      ],
    ];
    await checkEach(writers, 'kyb_submissions');
  });

  it('universal KYC: data, uploads, settling and deleting', async () => {
    const person = await createEntity(db, businessId, { externalId: `p-${randomUUID()}`, type: 'INDIVIDUAL' });
    const file = () => {
      const id = randomUUID();
      return { id, fileName: 'id.pdf', contentType: 'application/pdf', size: 1, sha256: 'x', storageKey: `${businessId}/${person}/${id}` };
    };
    const data = (d: Db) => submitCanonicalData(d, { businessId, entityId: person, value: '{}', deadlineSeconds: 60 });
    const writers: Writer[] = [
      ['submitCanonicalData', data],
      [
        'an upload joining the open submission (recordUploadedFiles)',
        async (d) => {
          const f = file();
          await db.query('INSERT INTO file_store_cleanup (storage_key, not_before) VALUES ($1, now())', [f.storageKey]);
          return recordUploadedFiles(d, { businessId, entityId: person, slug: 'ukyc-id-document', files: [f] });
        },
      ],
      [
        'the decision (loadSubmission with its lock, then settleSubmission)',
        async (d) => {
          const open = await data(db);
          assert.notEqual(open, 'entity-gone');
          return d.tx(async (q) => {
            await loadSubmission(q, (open as { submissionId: string }).submissionId, true);
            await settleSubmission(q, (open as { submissionId: string }).submissionId, { status: 'decided', decision: 'APPROVED', eventId: randomUUID() });
          });
        },
      ],
      [
        'DELETE /entity',
        async (d) => {
          await data(db);
          return deleteEntity(d, businessId, person);
        },
      ],
    ];
    await checkEach(writers, 'ukyc_submissions');
  });

  it('deleting a declared owner while its business entity saves its profile: the delete waits for the business entity, neither deadlocks', async () => {
    const company = await createEntity(db, businessId, { externalId: `co-${randomUUID()}`, type: 'BUSINESS' });
    const owner = { externalId: `owner-${randomUUID()}`, role: 'UBO', ownershipPercentage: 100, details: {} };
    const save = (d: Db, mode: 'create' | 'change') =>
      saveProfile(d, { mode, businessId, entityId: company, business: () => ({ legalName: 'Locks Ltd' }), owners: [owner] });
    const created = await save(db, 'create');
    assert.ok(!('problem' in created));
    const ownerId = created.owners[0]!.entityId;

    // PATCH /ukyb with the same owner, held just after it removed the company's old member links
    // (their rows locked); it then links the owner again (a key-share lock on the owner's row)
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let saving!: Promise<unknown>;
    const paused = new Promise<number>((resolve) => {
      const pausing: Db = {
        ...db,
        tx: (fn) =>
          db.tx((q) =>
            fn({
              ...q,
              query: async (sql, params) => {
                const rows = await q.query(sql, params);
                if (/^DELETE FROM entity_members/.test(sql.trim())) {
                  const [me] = await q.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
                  resolve(me!.pid);
                  await held;
                }
                return rows as never;
              },
            }),
          ),
      };
      saving = save(pausing, 'change');
    });
    const pid = await paused;
    const deleting = deleteEntity(db, businessId, ownerId);
    // the delete is under way and waits on the saving transaction (not a timer: PostgreSQL says so)
    await eventually(
      'the delete waiting on the saving transaction',
      async () => {
        const [w] = await db.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))', [pid]);
        return Number(w!.n) > 0;
      },
      { everyMs: 10 },
    );
    release();
    const [saved, deleted] = await Promise.allSettled([saving, deleting]);
    assert.equal(saved.status, 'fulfilled', `the profile saved: ${saved.status === 'rejected' ? String(saved.reason) : ''}`);
    assert.equal(deleted.status, 'fulfilled', `the owner deleted: ${deleted.status === 'rejected' ? String(deleted.reason) : ''}`);
    assert.equal((await db.query('SELECT 1 FROM entities WHERE id = $1', [ownerId])).length, 0, 'the owner is gone');
    assert.equal((await db.query('SELECT 1 FROM entity_members WHERE member_entity_id = $1', [ownerId])).length, 0, 'and its link with it');
  });
});
