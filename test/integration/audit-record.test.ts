// The record keeps its promises (issue 37), against a caller and a neighbour: no text a caller chose
// enters the audit log (an unknown field of 200 KB is recorded as `<unknown>`, a client's
// X-Request-Id not at all, and the answer echoes a short prefix of it); another business probing an
// entity's id leaves nothing in that entity's record, whose evidence still verifies; and
// `vouch audit verify` reads one consistent chain while writers append, so an intact chain of more
// than 5,000 entries is never reported broken on a live service.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { AUDIT_DETAILS_MAX_BYTES, UNKNOWN_NAME } from '../../domain/audit-bounds.ts';
import { checkAudit } from '../../domain/evidence.ts';
import { actAs } from '../../store/audit-actor.ts';
import { linkAll, linkNow } from '../../store/audit-chainer.ts';
import { auditOfEntity, recordAudit } from '../../store/audit-log.ts';
import { verifyChainOf } from '../../store/audit-verify.ts';
import { evidenceOf } from '../../store/evidence.ts';
import { startStack, type Stack } from '../helpers/stack.ts';

describe('the audit record against callers and neighbours', () => {
  let stack: Stack;
  let key: string;
  let businessId: string;

  before(async () => {
    stack = await startStack({ env: { API_RATE_LIMIT_PER_SECOND: '100000' } });
    ({ apiKey: key, businessId } = await stack.newBusiness({ name: 'Record' }));
  });
  after(async () => stack?.close());

  /** Every stored entry's text, linked or waiting (details, actor, request id), in one string. */
  const storedText = async () => {
    await linkAll(stack.db);
    const rows = await stack.db.query<{ t: string }>(
      `SELECT concat_ws(' ', actor_id, request_id, details, subject_id) AS t FROM audit_log
        UNION ALL SELECT concat_ws(' ', actor_id, request_id, details, subject_id) FROM audit_pending`,
    );
    return rows.map((r) => r.t).join('\n');
  };

  it("records a caller's unknown field by its shape, never its name; the answer echoes a short prefix", async () => {
    const name = `secret-${'x'.repeat(200_000)}`;
    const res = await stack.request('POST', '/entity', { key, json: { externalId: 'bounded', type: 'INDIVIDUAL', [name]: 1 } });
    assert.equal(res.status, 400, res.text.slice(0, 200));
    assert.ok(res.text.length < 1000, `the answer is ${res.text.length} characters`);
    assert.match(res.body.parameter, /^secret-x+…$/);
    assert.ok(res.body.parameter.length <= 65);
    await linkAll(stack.db);
    const [refused] = await stack.db.query<{ details: string }>(
      "SELECT details FROM audit_log WHERE business_id = $1 AND action = 'request.refused' AND subject_id = 'createEntity' ORDER BY seq DESC LIMIT 1",
      [businessId],
    );
    assert.ok(refused, 'the refusal is recorded');
    assert.deepEqual(JSON.parse(refused.details), { parameter: UNKNOWN_NAME, status: 400 });
    assert.ok(!(await storedText()).includes('secret-x'), 'nothing of the name is stored');
  });

  it('records a nested unknown name as <unknown> beside the names the API defines', async () => {
    const res = await stack.request('POST', '/entity', {
      key,
      json: { externalId: 'nested', type: 'INDIVIDUAL', requirements: [{ requirementSlug: 'kyc-first-name', value: 'A', mySsn123: '078-05-1120' }] },
    });
    assert.equal(res.status, 400, res.text);
    await linkAll(stack.db);
    const [refused] = await stack.db.query<{ details: string }>(
      "SELECT details FROM audit_log WHERE business_id = $1 AND action = 'request.refused' ORDER BY seq DESC LIMIT 1",
      [businessId],
    );
    assert.equal(JSON.parse(refused!.details).parameter, `requirements[0].${UNKNOWN_NAME}`);
    assert.ok(!(await storedText()).includes('mySsn123'));
  });

  it("keeps a client's X-Request-Id out of the log: the entry names the request by our own id", async () => {
    const res = await stack.request('POST', '/entity', {
      key,
      json: { externalId: `req-${randomUUID()}`, type: 'INDIVIDUAL' },
      headers: { 'X-Request-Id': 'jane.doe-1988-04-12' },
    });
    assert.equal(res.status, 201, res.text);
    await linkAll(stack.db);
    const [created] = await stack.db.query<{ request_id: string }>("SELECT request_id FROM audit_log WHERE entity_id = $1 AND action = 'entity.created'", [
      res.body.id,
    ]);
    assert.equal(created!.request_id, res.headers.get('x-request-id'));
    assert.ok(!(await storedText()).includes('jane.doe'));
  });

  it('caps the details of an entry, whatever a writer passes', async () => {
    const huge = 'y'.repeat(10 * AUDIT_DETAILS_MAX_BYTES);
    await actAs({ type: 'admin_cli', id: 'z'.repeat(10_000) }, null, () =>
      stack.db.tx(async (q) => recordAudit(q, { businessId, action: 'retention.policy_set', details: { huge } })),
    );
    await linkNow(stack.db, businessId);
    const [row] = await stack.db.query<{ details: string; actor_id: string }>(
      "SELECT details, actor_id FROM audit_log WHERE business_id = $1 AND action = 'retention.policy_set' ORDER BY seq DESC LIMIT 1",
      [businessId],
    );
    assert.ok(Buffer.byteLength(row!.details) <= AUDIT_DETAILS_MAX_BYTES, `${Buffer.byteLength(row!.details)} bytes`);
    assert.equal(JSON.parse(row!.details).capped, true);
    assert.ok(row!.actor_id.length <= 129);
    // a small one as given
    await actAs({ type: 'admin_cli', id: 'test' }, null, () =>
      stack.db.tx(async (q) => recordAudit(q, { businessId, action: 'retention.policy_set', details: { years: 5 } })),
    );
    await linkNow(stack.db, businessId);
    const [small] = await stack.db.query<{ details: string }>(
      "SELECT details FROM audit_log WHERE business_id = $1 AND action = 'retention.policy_set' ORDER BY seq DESC LIMIT 1",
      [businessId],
    );
    assert.deepEqual(JSON.parse(small!.details), { years: 5 });
  });

  it("another business probing an entity's id leaves nothing in its record; its evidence still verifies", async () => {
    const created = await stack.request('POST', '/entity', { key, json: { externalId: `probed-${randomUUID()}`, type: 'INDIVIDUAL' } });
    assert.equal(created.status, 201, created.text);
    const target = created.body.id as string;
    const other = await stack.newBusiness({ name: 'Neighbour' });
    const probes: [string, string, object?][] = [
      ['GET', `/entity/${target}/signed-payload`],
      ['DELETE', `/entity/${target}`],
      ['POST', `/entity/${target}/requirement`, { requirementSlug: 'kyc-first-name', value: 'X' }],
      ['POST', `/entity/${target}/kyc`, {}],
      ['POST', `/entity/${target}/members`, { members: [{ entityId: randomUUID(), role: 'EMPLOYEE' }] }],
      ['GET', `/entity/${target}/history`],
    ];
    for (const [method, path, json] of probes) {
      const res = await stack.request(method, path, { key: other.apiKey, ...(json ? { json } : {}), headers: { 'Accept-Version': 'v1.0' } });
      assert.ok(res.status >= 400 && res.status < 500, `${method} ${path}: ${res.status}`);
    }
    await linkAll(stack.db);
    const refusals = await stack.db.query<{ entity_id: string | null }>(
      "SELECT entity_id FROM audit_log WHERE business_id = $1 AND action = 'request.refused'",
      [other.businessId],
    );
    assert.ok(refusals.length >= 4, 'the refusals are recorded, in the caller’s own chain');
    assert.ok(
      refusals.every((r) => r.entity_id === null),
      'naming no entity of another business',
    );
    assert.deepEqual(
      (await auditOfEntity(stack.db, businessId, target)).map((e) => e.businessId),
      [businessId],
      "the entity's entries are its business's alone",
    );
    const record = await evidenceOf(stack.db, target);
    assert.ok(record);
    assert.deepEqual(checkAudit(record.audit, businessId), []);
    assert.ok(record.audit.entries.every((e) => e.businessId === businessId));
    // its own business's refused call on it is part of its record
    const own = await stack.request('POST', `/entity/${target}/requirement`, { key, json: { requirementSlug: 'no-such-slug', value: 'X' } });
    assert.equal(own.status, 400, own.text);
    await linkAll(stack.db);
    assert.ok((await auditOfEntity(stack.db, businessId, target)).some((e) => e.action === 'request.refused'));
  });

  it('verify reads one consistent chain of more than 5,000 entries while writers append: never a false break', async () => {
    const { businessId: busy } = await stack.newBusiness({ name: 'Busy' });
    await actAs({ type: 'admin_cli', id: 'test' }, null, () =>
      stack.db.tx(async (q) => {
        for (let i = 0; i < 6000; i++) recordAudit(q, { businessId: busy, action: 'retention.policy_set', details: { years: (i % 9) + 1 } });
      }),
    );
    await linkNow(stack.db, busy);
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await actAs({ type: 'admin_cli', id: 'writer' }, null, () =>
          stack.db.tx(async (q) => {
            for (let i = 0; i < 5; i++) recordAudit(q, { businessId: busy, action: 'retention.policy_set', details: { years: 1 } });
          }),
        );
        await linkNow(stack.db, busy);
        written += 5;
      }
    })();
    try {
      for (let round = 0; round < 5; round++) {
        const verdict = await verifyChainOf(stack.db, busy);
        assert.equal(verdict.intact, true, JSON.stringify(verdict.firstBreak));
        assert.ok(verdict.entries >= 6000);
      }
    } finally {
      writing = false;
      await writer;
    }
    assert.ok(written > 0, 'the writers appended while verify read');
    // a break is still found: an entry written beyond the head by someone who switched the table's guards off
    await stack.db.query('ALTER TABLE audit_log DISABLE TRIGGER USER');
    const [last] = await stack.db.query<{ seq: string }>('SELECT max(seq) AS seq FROM audit_log WHERE business_id = $1', [busy]);
    await stack.db.query(
      `INSERT INTO audit_log (business_id, seq, id, occurred_at, actor_type, actor_id, action, details, outcome, prev_hash, hash)
       VALUES ($1, $2, $3, now(), 'system', 'forger', 'retention.policy_set', '{}', 'ok', 'x', 'y')`,
      [busy, Number(last!.seq) + 1, randomUUID()],
    );
    await stack.db.query('ALTER TABLE audit_log ENABLE TRIGGER USER');
    const forged = await verifyChainOf(stack.db, busy);
    assert.equal(forged.firstBreak?.problem, 'added');
  });
});
