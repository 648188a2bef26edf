import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startStack, type Stack } from '../helpers/stack.ts';
import { entity } from '../helpers/world.ts';

const V = { 'Accept-Version': 'v1.0' };

describe('entities API', () => {
  let stack: Stack;
  let key: string;
  let businessId: string;
  let otherKey: string;

  const entityCount = async (id = businessId) =>
    Number((await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM entities WHERE business_id = $1', [id]))[0]!.n);
  const requirementCount = async () =>
    Number(
      (
        await stack.db.query<{ n: string }>('SELECT count(*) AS n FROM entity_requirements r JOIN entities e ON e.id = r.entity_id WHERE e.business_id = $1', [
          businessId,
        ])
      )[0]!.n,
    );

  before(async () => {
    stack = await startStack();
    ({ apiKey: key, businessId } = await stack.newBusiness());
    ({ apiKey: otherKey } = await stack.newBusiness({ name: 'Other' }));
  });
  after(() => stack.close());

  describe('POST /entity', () => {
    it('creates an individual and answers 201 with its UUID', async () => {
      const res = await stack.request('POST', '/entity', { key, json: { externalId: 'cardholder-1', type: 'INDIVIDUAL' } });
      assert.equal(res.status, 201);
      assert.match(res.body.id, /^[0-9a-f-]{36}$/);
      assert.deepEqual(Object.keys(res.body), ['id']);
    });

    it('creates a business with requirement values of every non-file type, stored as PENDING', async () => {
      const jane = (await stack.request('POST', '/entity', { key, json: { externalId: 'jane-doe', type: 'INDIVIDUAL' } })).body.id;
      const requirements = [
        { requirementSlug: 'kyb-legal-name', value: 'Acme Ltd' },
        { requirementSlug: 'kyb-country-of-incorporation', value: 'GBR' },
        { requirementSlug: 'kyb-annual-turnover', value: 1250000.5 },
        { requirementSlug: 'kyb-regulated-entity', value: false },
        { requirementSlug: 'kyb-ubo-declaration', value: { members: [{ entityId: jane, role: 'UBO', ownershipPercent: 60 }] } },
      ];
      const res = await stack.request('POST', '/entity', { key, json: { externalId: 'acme', type: 'BUSINESS', requirements } });
      assert.equal(res.status, 201);
      const read = await stack.request('GET', `/entity/${res.body.id}`, { key });
      assert.equal(read.status, 200);
      assert.deepEqual(
        read.body.submittedRequirements.map((r: any) => [r.requirementSlug, r.value, r.status]).sort(),
        requirements.map((r) => [r.requirementSlug, r.value, 'PENDING']).sort(),
      );
    });

    it('refuses a second entity with the same externalId in one business (409) and stores nothing', async () => {
      await stack.request('POST', '/entity', { key, json: { externalId: 'dup-1', type: 'INDIVIDUAL' } });
      const before = await entityCount();
      const res = await stack.request('POST', '/entity', { key, json: { externalId: 'dup-1', type: 'BUSINESS' } });
      assert.equal(res.status, 409);
      assert.deepEqual(res.body, {
        code: '0702000200',
        message: 'Your business already has an entity with externalId "dup-1"; use that entity, or choose another externalId.',
        parameter: 'externalId',
      });
      assert.equal(await entityCount(), before);
    });

    it('lets two businesses use the same externalId', async () => {
      await stack.request('POST', '/entity', { key, json: { externalId: 'shared-ref', type: 'INDIVIDUAL' } });
      const res = await stack.request('POST', '/entity', { key: otherKey, json: { externalId: 'shared-ref', type: 'INDIVIDUAL' } });
      assert.equal(res.status, 201);
    });

    const bad: [string, unknown, string, string][] = [
      ['a missing externalId', { type: 'INDIVIDUAL' }, 'externalId', 'externalId is required'],
      ['a numeric externalId', { externalId: 42, type: 'INDIVIDUAL' }, 'externalId', 'expected string'],
      ['an empty externalId', { externalId: '', type: 'INDIVIDUAL' }, 'externalId', 'must not be empty'],
      ['a blank externalId', { externalId: '   ', type: 'INDIVIDUAL' }, 'externalId', 'must not be blank'],
      ['an oversized externalId', { externalId: 'x'.repeat(256), type: 'INDIVIDUAL' }, 'externalId', 'at most 255'],
      ['a control character', { externalId: 'a\u0000b', type: 'INDIVIDUAL' }, 'externalId', 'control characters'],
      ['an unknown type', { externalId: 'e', type: 'PERSON' }, 'type', 'INDIVIDUAL'],
      ['a lower-case type', { externalId: 'e', type: 'individual' }, 'type', 'INDIVIDUAL'],
      ['an unknown field', { externalId: 'e', type: 'INDIVIDUAL', nickname: 'x' }, 'nickname', 'unknown field "nickname"'],
      ['a body that is an array', [{ externalId: 'e' }], '', 'expected object'],
      ['requirements not an array', { externalId: 'e', type: 'BUSINESS', requirements: {} }, 'requirements', 'expected array'],
      [
        'an unknown requirement slug',
        { externalId: 'e', type: 'BUSINESS', requirements: [{ requirementSlug: 'shoe-size', value: 1 }] },
        'requirements[0].requirementSlug',
        'unknown requirement slug',
      ],
      [
        'a requirement of the other entity type',
        { externalId: 'e', type: 'INDIVIDUAL', requirements: [{ requirementSlug: 'kyb-legal-name', value: 'A' }] },
        'requirements[0].requirementSlug',
        'applies to BUSINESS',
      ],
      [
        'a value of the wrong type',
        { externalId: 'e', type: 'BUSINESS', requirements: [{ requirementSlug: 'kyb-annual-turnover', value: '12' }] },
        'requirements[0].value',
        'finite number',
      ],
      [
        'a value breaking its pattern',
        { externalId: 'e', type: 'INDIVIDUAL', requirements: [{ requirementSlug: 'card-processor-public-token', value: '12345678' }] },
        'requirements[0].value',
        'exactly 9 digits',
      ],
      [
        'a file requirement',
        { externalId: 'e', type: 'INDIVIDUAL', requirements: [{ requirementSlug: 'ukyc-id-document', value: 'x' }] },
        'requirements[0].value',
        'is a file',
      ],
      [
        'canonical KYC data at creation',
        { externalId: 'e', type: 'INDIVIDUAL', requirements: [{ requirementSlug: 'ukyc-canonical-kyc-data', value: {} }] },
        'requirements[0].requirementSlug',
        '/requirement',
      ],
      [
        'the same requirement twice',
        {
          externalId: 'e',
          type: 'BUSINESS',
          requirements: [
            { requirementSlug: 'kyb-legal-name', value: 'A' },
            { requirementSlug: 'kyb-legal-name', value: 'B' },
          ],
        },
        'requirements[1].requirementSlug',
        'given twice',
      ],
      [
        'an unknown field in a requirement',
        { externalId: 'e', type: 'BUSINESS', requirements: [{ requirementSlug: 'kyb-legal-name', value: 'A', status: 'APPROVED' }] },
        'requirements[0].status',
        'unknown field',
      ],
    ];
    for (const [what, json, parameter, message] of bad) {
      it(`answers 400 0000000300 to ${what}, naming ${parameter || 'the body'}, and stores nothing`, async () => {
        const [entities, requirements] = [await entityCount(), await requirementCount()];
        const res = await stack.request('POST', '/entity', { key, json });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.code, '0000000300');
        assert.equal(res.body.parameter, parameter);
        assert.ok(res.body.message.includes(message), `"${res.body.message}" should mention "${message}"`);
        assert.deepEqual([await entityCount(), await requirementCount()], [entities, requirements]);
      });
    }

    it('answers 400 0000000310 to malformed JSON', async () => {
      const res = await stack.request('POST', '/entity', { key, body: '{"externalId": "x",', headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, {
        code: '0000000310',
        message: 'The body is not valid JSON; check its quotes, commas and brackets and send it again.',
        parameter: '',
      });
    });

    it('answers 415 0000000320 to a body that is not JSON', async () => {
      const res = await stack.request('POST', '/entity', {
        key,
        body: 'externalId=x&type=INDIVIDUAL',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(res.status, 415);
      assert.equal(res.body.code, '0000000320');
      assert.equal(res.body.parameter, 'Content-Type');
    });

    it('answers 413 0000000330 to a body over the JSON limit', async () => {
      const res = await stack.request('POST', '/entity', { key, json: { externalId: 'x', type: 'INDIVIDUAL', pad: 'y'.repeat(1024 * 1024) } });
      assert.equal(res.status, 413);
      assert.equal(res.body.code, '0000000330');
    });

    describe('members declared by a business (kyb-ubo-declaration)', () => {
      const person = (k = key) => entity(stack, k, `member-${Math.random()}`);
      const business = (members: unknown[], k = key) =>
        stack.request('POST', '/entity', {
          key: k,
          json: { externalId: `company-${Math.random()}`, type: 'BUSINESS', requirements: [{ requirementSlug: 'kyb-ubo-declaration', value: { members } }] },
        });
      const memberRows = async (id: string) =>
        (await stack.db.query('SELECT member_entity_id, role FROM entity_members WHERE business_entity_id = $1', [id])).map((r) => [
          r.member_entity_id,
          r.role,
        ]);

      it('records INDIVIDUAL entities of the business as members, with their roles', async () => {
        const [owner, director] = [await person(), await person()];
        const res = await business([
          { entityId: owner, role: 'UBO', ownershipPercent: 75 },
          { entityId: director, role: 'DIRECTOR' },
        ]);
        assert.equal(res.status, 201, res.text);
        assert.deepEqual(
          (await memberRows(res.body.id)).sort(),
          [
            [owner, 'UBO'],
            [director, 'DIRECTOR'],
          ].sort(),
        );
      });

      it('refuses a member that is not an INDIVIDUAL of the business (400 naming it) and stores nothing', async () => {
        const company = (await business([{ entityId: await person(), role: 'UBO' }])).body.id as string;
        const theirs = await person(otherKey);
        const ok = await person();
        for (const [bad, why] of [
          [theirs, /no entity/],
          ['6d1f3b9a-0c2e-4f5a-8b7c-9d0e1f2a3b4c', /no entity/],
          [company, /BUSINESS/],
        ] as const) {
          const before = await entityCount();
          const res = await business([
            { entityId: ok, role: 'UBO' },
            { entityId: bad, role: 'DIRECTOR' },
          ]);
          assert.equal(res.status, 400);
          assert.equal(res.body.parameter, 'requirements[0].value.members[1].entityId');
          assert.match(res.body.message, why);
          assert.equal(await entityCount(), before, 'nothing stored');
        }
      });

      it('names the field at fault inside the declaration', async () => {
        const res = await business([{ entityId: await person(), role: 'OWNER' }]);
        assert.equal(res.status, 400);
        assert.equal(res.body.parameter, 'requirements[0].value.members[0].role');
      });
    });
  });

  describe('GET /entity', () => {
    let listKey: string;
    let listBusiness: string;
    before(async () => {
      ({ apiKey: listKey, businessId: listBusiness } = await stack.newBusiness({ name: 'Lister' }));
      for (let i = 0; i < 5; i++) await stack.request('POST', '/entity', { key: listKey, json: { externalId: `list-${i}`, type: 'INDIVIDUAL' } });
    });

    it('pages through the business own entities, oldest first, with meta', async () => {
      const first = await stack.request('GET', '/entity?page=1&limit=2', { key: listKey, headers: V });
      assert.equal(first.status, 200);
      assert.deepEqual(first.body.meta, { page: 1, limit: 2, totalItems: 5, totalPages: 3 });
      assert.deepEqual(
        first.body.items.map((e: any) => e.externalId),
        ['list-0', 'list-1'],
      );
      const last = await stack.request('GET', '/entity?page=3&limit=2', { key: listKey, headers: V });
      assert.deepEqual(
        last.body.items.map((e: any) => e.externalId),
        ['list-4'],
      );
      const item = last.body.items[0];
      assert.deepEqual(Object.keys(item).sort(), ['businessId', 'createdAt', 'externalId', 'id', 'type', 'updatedAt']);
      assert.equal(item.businessId, listBusiness);
      assert.ok(!Number.isNaN(Date.parse(item.createdAt)));
    });

    it('defaults to page 1 and limit 20, and answers an empty page past the end', async () => {
      const res = await stack.request('GET', '/entity', { key: listKey, headers: V });
      assert.deepEqual(res.body.meta, { page: 1, limit: 20, totalItems: 5, totalPages: 1 });
      const beyond = await stack.request('GET', '/entity?page=9', { key: listKey, headers: V });
      assert.deepEqual(beyond.body.items, []);
    });

    for (const [query, parameter] of [
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['page=abc', 'page'],
      ['limit=0', 'limit'],
      ['limit=1000', 'limit'],
      ['limit=2.5', 'limit'],
      ['sort=name', 'sort'],
    ] as const) {
      it(`answers 400 to ${query}`, async () => {
        const res = await stack.request('GET', `/entity?${query}`, { key: listKey, headers: V });
        assert.equal(res.status, 400);
        assert.equal(res.body.code, '0000000300');
        assert.equal(res.body.parameter, parameter);
      });
    }

    it('requires Accept-Version: v1.0', async () => {
      const missing = await stack.request('GET', '/entity', { key: listKey });
      assert.equal(missing.status, 400);
      assert.deepEqual([missing.body.code, missing.body.parameter], ['0000000400', 'Accept-Version']);
      const unknown = await stack.request('GET', '/entity', { key: listKey, headers: { 'Accept-Version': 'v2.0' } });
      assert.equal(unknown.status, 400);
      assert.deepEqual([unknown.body.code, unknown.body.parameter], ['0000000410', 'Accept-Version']);
    });
  });

  describe('GET and DELETE /entity/{id}', () => {
    it('reads the full record', async () => {
      const { body } = await stack.request('POST', '/entity', {
        key,
        json: { externalId: 'full-1', type: 'INDIVIDUAL', requirements: [{ requirementSlug: 'card-processor-public-token', value: '123456789' }] },
      });
      const res = await stack.request('GET', `/entity/${body.id}`, { key });
      assert.equal(res.status, 200);
      assert.equal(res.body.id, body.id);
      assert.equal(res.body.externalId, 'full-1');
      assert.equal(res.body.type, 'INDIVIDUAL');
      assert.equal(res.body.businessId, businessId);
      assert.equal(res.body.verifiedBy, null);
      assert.deepEqual(res.body.enabledFeatures, []);
      assert.equal(res.body.submittedRequirements.length, 1);
      assert.deepEqual(Object.keys(res.body.submittedRequirements[0]).sort(), ['createdAt', 'requirementSlug', 'status', 'updatedAt', 'value']);
    });

    it('deletes permanently: 204, then 404 on read and on a second delete', async () => {
      const { body } = await stack.request('POST', '/entity', {
        key,
        json: { externalId: 'gone-1', type: 'BUSINESS', requirements: [{ requirementSlug: 'kyb-legal-name', value: 'Gone Ltd' }] },
      });
      const del = await stack.request('DELETE', `/entity/${body.id}`, { key });
      assert.equal(del.status, 204);
      assert.equal(del.text, '');
      const read = await stack.request('GET', `/entity/${body.id}`, { key });
      assert.equal(read.status, 404);
      assert.deepEqual(read.body, {
        code: '0702000100',
        message: `Entity ${body.id} not found in your business; check the id (GET /entity lists your entities).`,
        parameter: 'entityId',
      });
      assert.equal((await stack.request('DELETE', `/entity/${body.id}`, { key })).status, 404);
      const rows = await stack.db.query('SELECT 1 FROM entity_requirements WHERE entity_id = $1', [body.id]);
      assert.equal(rows.length, 0);
      // the externalId is free again
      assert.equal((await stack.request('POST', '/entity', { key, json: { externalId: 'gone-1', type: 'BUSINESS' } })).status, 201);
    });

    it("answers 404 for another business's entity, on read and on delete, and leaves it alone", async () => {
      const { body } = await stack.request('POST', '/entity', { key: otherKey, json: { externalId: 'theirs', type: 'INDIVIDUAL' } });
      assert.equal((await stack.request('GET', `/entity/${body.id}`, { key })).status, 404);
      assert.equal((await stack.request('DELETE', `/entity/${body.id}`, { key })).status, 404);
      assert.equal((await stack.request('GET', `/entity/${body.id}`, { key: otherKey })).status, 200);
    });

    it('answers 404 for an unknown UUID and 400 for a malformed one', async () => {
      assert.equal((await stack.request('GET', '/entity/7b0b7d8e-35f5-4f4f-9f57-2f1f1c1c1c1c', { key })).status, 404);
      const bad = await stack.request('GET', '/entity/not-a-uuid', { key });
      assert.equal(bad.status, 400);
      assert.deepEqual([bad.body.code, bad.body.parameter], ['0000000300', 'entityId']);
      assert.equal((await stack.request('DELETE', "/entity/1'%20OR%201=1", { key })).status, 400);
    });
  });
});
