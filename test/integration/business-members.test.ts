// Members of a business entity beyond its owners, and multi-member feature assignments (interface
// v1.1.0), over HTTP against real workers: declaring many at once (each rule refused with its field,
// nothing changed), memberId accepted on the person endpoints, assigning business-cardholder to many,
// each assignment's state, the feature enabled when the person's own decision (hosted SDK through the
// sandbox, universal KYC) and the business's KYB decision are APPROVED — whichever comes last — with a
// signed feature_access_change, and removed again (unassign, member removed, business entity deleted).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { features } from '../../domain/feature-catalog.ts';
import { publicKeyOf } from '../../domain/webhook-signature.ts';
import { verifyWebhook } from '../../receiver/verify-webhook.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, testKeyRing, type Stack } from '../helpers/stack.ts';
import { canonicalPayload, documentsForm, FILES, filesForm } from '../helpers/ukyc.ts';
import * as world from '../helpers/world.ts';

const CARDHOLDER = features.find((f) => f.slug === 'business-cardholder')!.id;
const CARD_ISSUANCE = features.find((f) => f.slug === 'card-issuance-api-access')!.id;
const KYB_DOCUMENTS = ['ukyb-certificate-of-incorporation', 'ukyb-proof-of-address', 'ukyb-register-of-shareholders'];

describe('business members and feature assignments', () => {
  let stack: Stack;
  let key: string;
  let otherKey: string;
  let receiver: Receiver;
  let n = 0;

  before(async () => {
    stack = await startStack({
      workers: true,
      providerCallbacks: true,
      env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', API_RATE_LIMIT_PER_SECOND: '100000' },
    });
    receiver = await startReceiver();
    ({ apiKey: key } = await stack.newBusiness({ name: 'Members' }));
    ({ apiKey: otherKey } = await stack.newBusiness({ name: 'Other' }));
    for (const k of [key, otherKey]) {
      await world.subscribe(stack, k, receiver.url, ['account_status_change', 'kyb_status_change', 'feature_access_change']);
    }
  });
  after(async () => {
    await receiver.close();
    await stack.close();
  });

  const entity = (type: 'INDIVIDUAL' | 'BUSINESS' = 'INDIVIDUAL', k = key) => world.entity(stack, k, `bm-${type}-${n++}`, type);
  const people = async (count: number, k = key) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 25) ids.push(...(await Promise.all(Array.from({ length: Math.min(25, count - i) }, () => entity('INDIVIDUAL', k)))));
    return ids;
  };
  const declare = (businessEntityId: string, members: unknown, k = key) =>
    stack.request('POST', `/entity/${businessEntityId}/members`, { key: k, json: { members } });
  const assign = (businessEntityId: string, memberIds: unknown, featureId = CARDHOLDER, k = key) =>
    stack.request('POST', `/entity/${businessEntityId}/feature/${featureId}/assignments`, { key: k, json: { memberIds } });
  const assignments = async (businessEntityId: string, query = '') => {
    const res = await stack.request('GET', `/entity/${businessEntityId}/feature/${CARDHOLDER}/assignments${query}`, { key });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const rows = async (table: 'business_members' | 'member_feature_assignments', businessEntityId: string) =>
    Number((await stack.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE business_entity_id = $1`, [businessEntityId]))[0]!.n);
  const refused = (res: { status: number; body: any; text: string }, status: number, code: string, parameter: string) => {
    assert.equal(res.status, status, res.text);
    assert.equal(res.body.code, code, res.text);
    assert.equal(res.body.parameter, parameter, res.text);
    assert.ok(res.body.message.length > 10);
  };
  /** The feature_access_change events of the business-cardholder feature for this entity, signed and checked. */
  const cardholderEvents = (entityId: string) =>
    receiver.received
      .map((r) => ({ raw: r, body: JSON.parse(r.body.toString()) }))
      .filter((e) => e.body.eventType === 'feature_access_change' && e.body.data.entityId === entityId && e.body.data.feature.id === CARDHOLDER);
  const waitForAccess = async (entityId: string, access: string[], timeoutMs = 30_000) => {
    const got = await world.eventually(
      `${access.join(', ')} for ${entityId}`,
      () => cardholderEvents(entityId).length >= access.length && cardholderEvents(entityId),
      {
        timeoutMs,
        everyMs: 100,
        state: () => cardholderEvents(entityId).map((e) => e.body.data.access),
      },
    );
    assert.deepEqual(
      got.map((e) => e.body.data.access),
      access,
    );
    for (const e of got) assert.ok(verifyWebhook(e.raw.body, e.raw.headers['vouch-signature'] as string, testKeyRing().map(publicKeyOf)));
    return got;
  };
  const verifyBySandbox = async (businessEntityId: string, memberId: string) => {
    const res = await stack.request('POST', `/sandbox/entity/${businessEntityId}/kyc/complete?memberId=${memberId}`, { key, json: { reviewAnswer: 'GREEN' } });
    assert.equal(res.status, 202, res.text);
  };
  /** A business entity whose KYB is APPROVED through the real flow: profile with one owner, documents, the owner verified, submitted. */
  const approveKyb = async (entityId: string) => {
    const profile = await stack.request('POST', '/ukyb', {
      key,
      json: {
        entityId,
        business: {
          legalName: 'Acme Cards Ltd',
          registrationNumber: '87654321',
          country: 'GBR',
          address: { country: 'GBR', postCode: 'EC1A 1BB', street: 'King Street', town: 'London' },
          incorporationDate: '2015-06-01',
        },
        ubos: [{ externalId: `bm-owner-${n++}`, firstName: 'Ada', lastName: 'Lovelace', dob: '1980-12-10', nationality: 'GBR', ownershipPercentage: 60 }],
      },
    });
    assert.equal(profile.status, 201, profile.text);
    const ownerId = profile.body.ubos[0].entityId as string;
    for (const slug of KYB_DOCUMENTS)
      assert.equal((await stack.request('POST', '/ukyb/documents', { key, form: documentsForm({ entityId, requirementSlug: slug }) })).status, 201);
    assert.equal(
      (await stack.request('POST', '/ukyb/documents', { key, form: documentsForm({ entityId, memberId: ownerId, documentType: 'PASSPORT' }) })).status,
      201,
    );
    await verifyBySandbox(entityId, ownerId);
    const submitted = await stack.request('POST', '/ukyb/submit', { key, json: { entityId } });
    assert.equal(submitted.status, 202, submitted.text);
    await world.eventually(
      'the KYB approved (business-card-program enabled)',
      async () =>
        ((await stack.request('GET', `/entity/${entityId}`, { key })).body.enabledFeatures as { slug: string }[]).some(
          (f) => f.slug === 'business-card-program',
        ),
      { everyMs: 100 },
    );
  };

  describe('declaring members', () => {
    it('declares several with roles at once, lists them paginated, re-declares idempotently (a new role is a change), removes one', async () => {
      const b = await entity('BUSINESS');
      const [p1, p2, p3] = (await people(3)) as [string, string, string];
      const res = await declare(b, [
        { entityId: p1, role: 'EMPLOYEE' },
        { entityId: p2, role: 'DIRECTOR' },
        { entityId: p3, role: 'CONTRACTOR' },
      ]);
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.businessEntityId, b);
      assert.equal(res.body.changed, 3);
      assert.deepEqual(
        res.body.items.map((m: any) => [m.memberId, m.role]),
        [
          [p1, 'EMPLOYEE'],
          [p2, 'DIRECTOR'],
          [p3, 'CONTRACTOR'],
        ],
      );
      const again = await declare(b, [
        { entityId: p1, role: 'EMPLOYEE' },
        { entityId: p2, role: 'REPRESENTATIVE' },
      ]);
      assert.equal(again.status, 201, again.text);
      assert.equal(again.body.changed, 1, 'only the new role is a change');
      const page = await stack.request('GET', `/entity/${b}/members?page=2&limit=2`, { key });
      assert.equal(page.status, 200, page.text);
      assert.deepEqual(page.body.meta, { page: 2, limit: 2, totalItems: 3, totalPages: 2 });
      assert.equal(page.body.items.length, 1);
      assert.equal((await stack.request('DELETE', `/entity/${b}/members/${p3}`, { key })).status, 204);
      refused(await stack.request('DELETE', `/entity/${b}/members/${p3}`, { key }), 404, '0710010600', 'memberId');
      const rest = await stack.request('GET', `/entity/${b}/members`, { key });
      assert.deepEqual(
        rest.body.items.map((m: any) => [m.memberId, m.role]),
        [
          [p1, 'EMPLOYEE'],
          [p2, 'REPRESENTATIVE'],
        ],
      );
      // not owners: the KYB declaration is untouched
      assert.equal((await stack.db.query('SELECT 1 FROM entity_members WHERE business_entity_id = $1', [b])).length, 0);
      const audit = await stack.db.query<{ action: string }>(
        `SELECT action FROM audit_log WHERE entity_id = $1 AND action LIKE 'business_member.%' UNION ALL
         SELECT action FROM audit_pending WHERE entity_id = $1 AND action LIKE 'business_member.%'`,
        [b],
      );
      assert.equal(audit.filter((a) => a.action === 'business_member.declared').length, 4);
      assert.equal(audit.filter((a) => a.action === 'business_member.removed').length, 1);
    });

    it('refuses each bad list with the field at fault, and changes nothing', async () => {
      const b = await entity('BUSINESS');
      const [p1] = (await people(1)) as [string];
      const theirs = await entity('INDIVIDUAL', otherKey);
      const otherBusiness = await entity('BUSINESS');
      const cases: [unknown, number, string, string][] = [
        [
          [
            { entityId: p1, role: 'EMPLOYEE' },
            { entityId: p1.toUpperCase(), role: 'DIRECTOR' },
          ],
          400,
          '0710010400',
          'members[1].entityId',
        ],
        [
          [
            { entityId: p1, role: 'EMPLOYEE' },
            { entityId: theirs, role: 'EMPLOYEE' },
          ],
          404,
          '0710010200',
          'members[1].entityId',
        ],
        [[{ entityId: otherBusiness, role: 'EMPLOYEE' }], 400, '0710010300', 'members[0].entityId'],
        [[{ entityId: p1, role: 'UBO' }], 400, '0000000300', 'members[0].role'],
        [[{ entityId: 'not-a-uuid', role: 'EMPLOYEE' }], 400, '0000000300', 'members[0].entityId'],
        [[], 400, '0000000300', 'members'],
        [Array.from({ length: 501 }, () => ({ entityId: p1, role: 'EMPLOYEE' })), 400, '0000000300', 'members'],
      ];
      for (const [members, status, code, parameter] of cases) refused(await declare(b, members), status, code, parameter);
      refused(await declare(p1, [{ entityId: p1, role: 'EMPLOYEE' }]), 400, '0710010100', 'entityId');
      refused(await declare(b, [{ entityId: p1, role: 'EMPLOYEE' }], otherKey), 404, '0702000100', 'entityId');
      assert.equal(await rows('business_members', b), 0, 'nothing declared');
      // and the passing case of the same list
      assert.equal((await declare(b, [{ entityId: p1, role: 'EMPLOYEE' }])).status, 201);
      assert.equal(await rows('business_members', b), 1);
    });

    it('accepts a declared member as memberId on the person endpoints, and refuses it before it is declared', async () => {
      const b = await entity('BUSINESS');
      const [p] = (await people(1)) as [string];
      const upload = () =>
        stack.request('POST', `/entity/${b}/requirement-slug/ukyc-id-document/upload?memberId=${p}`, {
          key,
          form: filesForm([{ bytes: FILES.pdf, name: 'passport.pdf' }]),
        });
      refused(await upload(), 404, '0707000200', 'memberId');
      assert.equal((await declare(b, [{ entityId: p, role: 'EMPLOYEE' }])).status, 201);
      const ok = await upload();
      assert.equal(ok.status, 201, ok.text);
      // a card member is not an owner: the KYB owner documents still refuse it
      const ownerDoc = await stack.request('POST', '/ukyb/documents', { key, form: documentsForm({ entityId: b, memberId: p, documentType: 'PASSPORT' }) });
      assert.equal(ownerDoc.status, 404, ownerDoc.text);
    });
  });

  describe('assigning a feature', () => {
    it('refuses each bad assignment with the field at fault, and changes nothing', async () => {
      const b = await entity('BUSINESS');
      const [p1, p2] = (await people(2)) as [string, string];
      const theirs = await entity('INDIVIDUAL', otherKey);
      assert.equal((await declare(b, [{ entityId: p1, role: 'EMPLOYEE' }])).status, 201);
      refused(await assign(b, [p1, p2]), 404, '0710010600', 'memberIds[1]');
      refused(await assign(b, [p1, theirs]), 404, '0710010600', 'memberIds[1]');
      refused(await assign(b, [p1, p1]), 400, '0710010400', 'memberIds[1]');
      refused(await assign(b, []), 400, '0000000300', 'memberIds');
      refused(
        await assign(
          b,
          Array.from({ length: 501 }, () => p1),
        ),
        400,
        '0000000300',
        'memberIds',
      );
      refused(await assign(b, [p1], CARD_ISSUANCE), 400, '0710010500', 'featureId');
      refused(await assign(b, [p1], '00000000-0000-4000-8000-000000000000'), 404, '0703000100', 'featureId');
      refused(await assign(p1, [p1]), 400, '0710010100', 'entityId');
      refused(await assign(b, [p1], CARDHOLDER, otherKey), 404, '0702000100', 'entityId');
      assert.equal(await rows('member_feature_assignments', b), 0, 'nothing assigned');
      refused(await stack.request('DELETE', `/entity/${b}/feature/${CARDHOLDER}/assignments/${p1}`, { key }), 404, '0710010700', 'memberId');
      const ok = await assign(b, [p1]);
      assert.equal(ok.status, 201, ok.text);
      assert.equal(ok.body.assigned, 1);
      assert.equal((await assign(b, [p1])).body.assigned, 0, 'assigning again changes nothing');
    });

    it(
      'answers what each member still needs; enables the feature when the person and the business are both APPROVED, whichever ' +
        'comes last, with a signed feature_access_change; removing the assignment, the member or the business entity removes it',
      async () => {
        const b = await entity('BUSINESS');
        const [early, late, third] = (await people(3)) as [string, string, string];
        assert.equal(
          (
            await declare(b, [
              { entityId: early, role: 'EMPLOYEE' },
              { entityId: late, role: 'EMPLOYEE' },
              { entityId: third, role: 'DIRECTOR' },
            ])
          ).status,
          201,
        );
        const first = await assign(b, [early, late, third]);
        assert.equal(first.status, 201, first.text);
        assert.equal(first.body.assigned, 3);
        assert.deepEqual(first.body.feature.id, CARDHOLDER);
        assert.deepEqual(first.body.business, {
          requiredFeature: { id: features.find((f) => f.slug === 'business-card-program')!.id, slug: 'business-card-program', name: 'Business card program' },
          enabled: false,
        });
        for (const item of first.body.items) {
          assert.equal(item.enabled, false);
          assert.deepEqual(item.verification, { status: 'NONE', decisionEventId: null });
          assert.deepEqual(
            item.stillRequired.map((r: any) => r.requirementSlug),
            ['ukyc-canonical-kyc-data', 'ukyc-id-document'],
          );
        }

        // the person approved first (hosted SDK via the sandbox, memberId a declared member): not yet enabled — KYB is not
        await verifyBySandbox(b, early);
        let state = await world.eventually(
          'the early person DECIDED',
          async () => {
            const now = await assignments(b);
            return now.items[0].verification.status === 'DECIDED' && now;
          },
          { everyMs: 100 },
        );
        assert.equal(state.items[0].memberId, early);
        assert.match(state.items[0].verification.decisionEventId, /^[0-9a-f-]{36}$/);
        assert.deepEqual(state.items[0].stillRequired, []);
        assert.equal(state.items[0].enabled, false, 'the business part is not met');
        // no feature event was recorded (it would be, in the decision's own transaction): read where it is written, not where it arrives
        const recorded = await stack.db.query(
          `SELECT 1 FROM events WHERE entity_id = $1 AND event_type = 'feature_access_change' AND payload->'data'->'feature'->>'id' = $2`,
          [early, CARDHOLDER],
        );
        assert.equal(recorded.length, 0);

        // then the business's KYB approved: the member already approved gets the feature (the KYB decision's transaction)
        await approveKyb(b);
        await waitForAccess(early, ['ENABLED']);
        state = await assignments(b);
        assert.equal(state.business.enabled, true);
        assert.equal(state.items[0].enabled, true);
        assert.ok(state.items[0].enabledAt);
        assert.equal(state.items[1].enabled, false, 'not verified yet');
        const person = (await stack.request('GET', `/entity/${early}`, { key })).body;
        assert.ok(person.enabledFeatures.some((f: any) => f.id === CARDHOLDER));

        // a member verified after: universal KYC on the person's own entity; half-way it still needs its document
        const submitted = await stack.request('POST', `/entity/${late}/requirement`, {
          key,
          json: { requirementSlug: 'ukyc-canonical-kyc-data', value: JSON.stringify(canonicalPayload()) },
        });
        assert.equal(submitted.status, 201, submitted.text);
        state = await assignments(b);
        assert.equal(state.items[1].verification.status, 'IN_PROGRESS');
        assert.deepEqual(
          state.items[1].stillRequired.map((r: any) => r.requirementSlug),
          ['ukyc-id-document'],
        );
        const doc = await stack.request('POST', `/entity/${late}/requirement-slug/ukyc-id-document/upload`, {
          key,
          form: filesForm([{ bytes: FILES.pdf, name: 'passport.pdf' }]),
        });
        assert.equal(doc.status, 201, doc.text);
        await waitForAccess(late, ['ENABLED']);
        state = await assignments(b, '?page=1&limit=2');
        assert.deepEqual(state.meta, { page: 1, limit: 2, totalItems: 3, totalPages: 2 });
        assert.deepEqual(
          state.items.map((i: any) => [i.memberId, i.enabled, i.verification.status]),
          [
            [early, true, 'DECIDED'],
            [late, true, 'DECIDED'],
          ],
        );
        assert.equal(cardholderEvents(third).length, 0, 'a member not verified gets nothing');

        // removal: the assignment, then the member, each removes the feature once
        assert.equal((await stack.request('DELETE', `/entity/${b}/feature/${CARDHOLDER}/assignments/${early}`, { key })).status, 204);
        await waitForAccess(early, ['ENABLED', 'REMOVED']);
        assert.ok(!(await stack.request('GET', `/entity/${early}`, { key })).body.enabledFeatures.some((f: any) => f.id === CARDHOLDER));
        assert.ok(
          (await stack.request('GET', `/entity/${early}`, { key })).body.enabledFeatures.some((f: any) => f.id === CARD_ISSUANCE),
          "the person's own feature stays",
        );
        assert.equal((await stack.request('DELETE', `/entity/${b}/members/${late}`, { key })).status, 204);
        await waitForAccess(late, ['ENABLED', 'REMOVED']);
        assert.deepEqual(
          (await assignments(b)).items.map((i: any) => i.memberId),
          [third],
        );

        // the business entity deleted: its members' features go with it, and its memberships and assignments
        assert.equal((await declare(b, [{ entityId: early, role: 'EMPLOYEE' }])).status, 201);
        assert.equal((await assign(b, [early])).body.items[0].enabled, true);
        await waitForAccess(early, ['ENABLED', 'REMOVED', 'ENABLED']);
        assert.equal((await stack.request('DELETE', `/entity/${b}`, { key })).status, 204);
        await waitForAccess(early, ['ENABLED', 'REMOVED', 'ENABLED', 'REMOVED']);
        assert.equal(await rows('business_members', b), 0);
        assert.equal(await rows('member_feature_assignments', b), 0);
        const audit = await stack.db.query<{ action: string }>(
          `SELECT action FROM audit_log WHERE entity_id = $1 AND action LIKE 'feature.%assigned' UNION ALL
           SELECT action FROM audit_pending WHERE entity_id = $1 AND action LIKE 'feature.%assigned'`,
          [b],
        );
        assert.equal(audit.filter((a) => a.action === 'feature.assigned').length, 4);
        assert.equal(audit.filter((a) => a.action === 'feature.unassigned').length, 2);
      },
    );

    it('deleting a member entity removes its memberships and assignments', async () => {
      const b = await entity('BUSINESS');
      const [p] = (await people(1)) as [string];
      assert.equal((await declare(b, [{ entityId: p, role: 'EMPLOYEE' }])).status, 201);
      assert.equal((await assign(b, [p])).status, 201);
      assert.equal((await stack.request('DELETE', `/entity/${p}`, { key })).status, 204);
      assert.equal(await rows('business_members', b), 0);
      assert.equal(await rows('member_feature_assignments', b), 0);
      assert.equal((await stack.request('GET', `/entity/${b}/members`, { key })).body.meta.totalItems, 0);
    });

    it('declares and assigns 500 members in one call each, with an audit entry for every change', async () => {
      const b = await entity('BUSINESS');
      const ids = await people(500);
      const declared = await declare(
        b,
        ids.map((entityId) => ({ entityId, role: 'EMPLOYEE' })),
      );
      assert.equal(declared.status, 201, declared.text);
      assert.equal(declared.body.changed, 500);
      const res = await assign(b, ids);
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.assigned, 500);
      assert.deepEqual(
        res.body.items.map((i: any) => i.memberId),
        ids,
      );
      assert.equal((await assignments(b, '?limit=100&page=5')).items.length, 100);
      const [audit] = await stack.db.query<{ n: string }>(
        `SELECT count(*) AS n FROM (SELECT 1 FROM audit_log WHERE entity_id = $1 AND action IN ('business_member.declared', 'feature.assigned')
          UNION ALL SELECT 1 FROM audit_pending WHERE entity_id = $1 AND action IN ('business_member.declared', 'feature.assigned')) x`,
        [b],
      );
      assert.equal(Number(audit!.n), 1000);
    });
  });
});
