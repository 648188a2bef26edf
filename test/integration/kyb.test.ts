// Universal KYB over HTTP against real workers: the profile and its owners, business and owner
// documents, the manifest's five rules, presigned downloads (local store: signed links, 403 when
// expired or changed), the submission's completeness check, and the KYB workflow waiting for its
// owners' decisions (played through the sandbox's real provider callbacks) to a signed
// kyb_status_change webhook. Every refusal names its field and leaves nothing behind.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { kybProgressQuery, universalKybWorkflowId } from '../../contract/universal-kyb.ts';
import { publicKeyOf } from '../../domain/webhook-signature.ts';
import { signDownloadLink } from '../../files/download-links.ts';
import { eventBodySchema } from '../../api/webhook-events.ts';
import { verifyWebhook } from '../../receiver/verify-webhook.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, testKeyRing, type Stack } from '../helpers/stack.ts';
import { canonicalPayload, documentsForm, FILES, filesForm } from '../helpers/ukyc.ts';
import * as world from '../helpers/world.ts';

const LINK_SECRET = `kyb-test-link-secret-${randomUUID()}`;
const DEADLINE_SECONDS = 6;
const REQUIRED = ['ukyb-certificate-of-incorporation', 'ukyb-proof-of-address', 'ukyb-register-of-shareholders'];

const business = (change: (b: any) => void = () => {}) => {
  const b: any = {
    legalName: 'Acme Trading Ltd',
    registrationNumber: '12345678',
    country: 'GBR',
    address: { country: 'GBR', postCode: 'EC1A 1BB', street: 'King Street', town: 'London' },
    incorporationDate: '2015-06-01',
  };
  change(b);
  return b;
};
let owners = 0;
const owner = (change: (o: any) => void = () => {}) => {
  const o: any = {
    externalId: `owner-${owners++}-${randomUUID().slice(0, 6)}`,
    firstName: 'Ada',
    lastName: 'Lovelace',
    dob: '1980-12-10',
    nationality: 'GBR',
    ownershipPercentage: 40,
  };
  change(o);
  return o;
};

describe('universal KYB', () => {
  let stack: Stack;
  let key: string;
  let otherKey: string;
  let noHookKey: string;
  let receiver: Receiver;
  let n = 0;

  before(async () => {
    stack = await startStack({
      workers: true,
      providerCallbacks: true,
      env: {
        WEBHOOK_ALLOW_INSECURE_URLS: 'true',
        KYB_SUBMISSION_DEADLINE_SECONDS: String(DEADLINE_SECONDS),
        FILE_LINK_SECRET: LINK_SECRET,
        UPLOAD_MAX_FILES: '3',
        API_RATE_LIMIT_PER_SECOND: '100000',
      },
    });
    receiver = await startReceiver();
    ({ apiKey: key } = await stack.newBusiness({ name: 'KYB' }));
    ({ apiKey: otherKey } = await stack.newBusiness({ name: 'Other' }));
    ({ apiKey: noHookKey } = await stack.newBusiness({ name: 'No hook' }));
    for (const k of [key, otherKey]) {
      await world.subscribe(stack, k, receiver.url, ['account_status_change', 'kyb_status_change', 'verification_status_change']);
    }
    const only = await world.subscribe(stack, noHookKey, receiver.url);
  });
  after(async () => {
    if (process.env.KYB_TEST_LOGS) for (const l of stack.logs.filter((l) => Number(l.level) >= 50)) console.log(JSON.stringify(l).slice(0, 2000));
    await receiver.close();
    await stack.close();
  });

  const entity = (type: 'INDIVIDUAL' | 'BUSINESS' = 'BUSINESS', k = key) => world.entity(stack, k, `kyb-${type}-${n++}`, type);
  const create = (json: unknown, k = key) => stack.request('POST', '/ukyb', { key: k, json });
  const patch = (json: unknown, k = key) => stack.request('PATCH', '/ukyb', { key: k, json });
  const profile = async (ubos: unknown[] = [owner()], k = key) => {
    const entityId = await entity('BUSINESS', k);
    const res = await create({ entityId, business: business(), ubos }, k);
    assert.equal(res.status, 201, res.text);
    return { entityId, ubos: res.body.ubos as { entityId: string; externalId: string }[] };
  };
  const documents = (fields: Record<string, string>, files: { bytes: Buffer; name: string }[] = [{ bytes: FILES.pdf, name: 'doc.pdf' }], k = key) => {
    const form = documentsForm(fields, files);
    return stack.request('POST', '/ukyb/documents', { key: k, form });
  };
  const manifest = async (entityId: string, k = key) => {
    const res = await stack.request('GET', `/entity/${entityId}/documents`, { key: k });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const complete = async (entityId: string, ownerIds: string[]) => {
    for (const slug of REQUIRED) assert.equal((await documents({ entityId, requirementSlug: slug })).status, 201);
    for (const memberId of ownerIds) assert.equal((await documents({ entityId, memberId, documentType: 'PASSPORT' })).status, 201);
  };
  const submit = (entityId: string, k = key) => stack.request('POST', '/ukyb/submit', { key: k, json: { entityId } });
  const verifyOwner = async (businessEntityId: string, ownerId: string, json: unknown = { reviewAnswer: 'GREEN' }) => {
    const res = await stack.request('POST', `/sandbox/entity/${businessEntityId}/kyc/complete?memberId=${ownerId}`, { key, json });
    assert.equal(res.status, 202, res.text);
  };
  const events = async (entityId: string, type: string, count: number, timeoutMs = 30_000) => {
    const mine = await world.eventually(
      `${count} ${type} events for ${entityId}`,
      () => {
        const got = receiver.received.filter((r) => {
          const b = JSON.parse(r.body.toString());
          return b.eventType === type && b.data.entityId === entityId;
        });
        return got.length >= count && got;
      },
      { timeoutMs, everyMs: 100 },
    );
    return mine.map((r) => ({ raw: r, body: JSON.parse(r.body.toString()) }));
  };
  const noProfile = async (entityId: string) => assert.equal((await stack.request('GET', `/ukyb/${entityId}`, { key })).body.code, '0709000300');

  describe('profile', () => {
    it('creates the profile: each owner becomes an INDIVIDUAL entity of the business (an existing one reused by externalId), declared in order', async () => {
      const existingRef = `existing-owner-${n++}`;
      const existing = await stack.request('POST', '/entity', { key, json: { externalId: existingRef, type: 'INDIVIDUAL' } });
      const entityId = await entity();
      const ubos = [owner(), owner((o) => (o.externalId = existingRef))];
      const res = await create({ entityId, business: business(), ubos });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.entityId, entityId);
      assert.equal(res.body.status, 'DRAFT');
      assert.deepEqual(
        res.body.ubos.map((u: any) => u.externalId),
        ubos.map((u) => u.externalId),
      );
      assert.equal(res.body.ubos[1].entityId, existing.body.id);
      const person = await stack.request('GET', `/entity/${res.body.ubos[0].entityId}`, { key });
      assert.equal(person.body.type, 'INDIVIDUAL');
      const read = await stack.request('GET', `/ukyb/${entityId}`, { key });
      assert.equal(read.status, 200, read.text);
      assert.deepEqual(read.body.business, business());
      assert.equal(read.body.latestSubmission, null);
      const e = await stack.request('GET', `/entity/${entityId}`, { key });
      assert.deepEqual(
        e.body.submittedRequirements.map((r: any) => `${r.requirementSlug}:${r.status}`),
        ['ukyb-business-profile:PENDING'],
      );
    });

    const refusals: [string, (body: any) => void, string][] = [
      ['a country that is not ISO 3166-1 alpha-3', (b) => (b.business.country = 'GB'), 'business.country'],
      ["an address's country", (b) => (b.business.address.country = 'XXX'), 'business.address.country'],
      ['an empty legal name', (b) => (b.business.legalName = '  '), 'business.legalName'],
      ['a missing registration number', (b) => delete b.business.registrationNumber, 'business.registrationNumber'],
      ['an incorporation date in the future', (b) => (b.business.incorporationDate = '2999-01-01'), 'business.incorporationDate'],
      ['an impossible incorporation date', (b) => (b.business.incorporationDate = '2015-02-30'), 'business.incorporationDate'],
      ['an unknown business field', (b) => (b.business.colour = 'blue'), 'business.colour'],
      ['an owner under 18', (b) => (b.ubos[0].dob = new Date(Date.now() - 17 * 365 * 86_400_000).toISOString().slice(0, 10)), 'ubos[0].dob'],
      ["an owner's nationality", (b) => (b.ubos[0].nationality = 'Irish'), 'ubos[0].nationality'],
      ['an ownership of 0', (b) => (b.ubos[0].ownershipPercentage = 0), 'ubos[0].ownershipPercentage'],
      ['an ownership over 100', (b) => (b.ubos[0].ownershipPercentage = 100.5), 'ubos[0].ownershipPercentage'],
      ['ownership adding up to more than 100', (b) => b.ubos.push(owner((o) => (o.ownershipPercentage = 61))), 'ubos'],
      [
        'an externalId listed twice',
        (b) => b.ubos.push(owner((o) => ((o.externalId = b.ubos[0].externalId), (o.ownershipPercentage = 1)))),
        'ubos[1].externalId',
      ],
      ['an unknown role', (b) => (b.ubos[0].roles = ['CEO']), 'ubos[0].roles[0]'],
      ['a non-UUID entityId', (b) => (b.entityId = 'acme'), 'entityId'],
    ];
    for (const [what, change, parameter] of refusals) {
      it(`answers 400 to ${what}, naming ${parameter}, and stores nothing`, async () => {
        const entityId = await entity();
        const body: any = { entityId, business: business(), ubos: [owner()] };
        change(body);
        const res = await create(body);
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.code, '0000000300');
        assert.equal(res.body.parameter, parameter, res.text);
        await noProfile(entityId);
      });
    }

    it('answers 400 to an owner whose externalId names a BUSINESS entity, and stores nothing', async () => {
      const other = await entity();
      const otherExternal = (await stack.request('GET', `/entity/${other}`, { key })).body.externalId;
      const entityId = await entity();
      const res = await create({ entityId, business: business(), ubos: [owner(), owner((o) => (o.externalId = otherExternal))] });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.parameter, 'ubos[1].externalId');
      await noProfile(entityId);
      assert.deepEqual((await manifest(entityId)).ubos, []);
    });

    it("answers 400 for an INDIVIDUAL entity, 404 for another business's entity, 409 for a second POST", async () => {
      const person = await entity('INDIVIDUAL');
      const asPerson = await create({ entityId: person, business: business(), ubos: [] });
      assert.deepEqual([asPerson.status, asPerson.body.code, asPerson.body.parameter], [400, '0709000100', 'entityId']);
      const theirs = await entity('BUSINESS', otherKey);
      const cross = await create({ entityId: theirs, business: business(), ubos: [] });
      assert.deepEqual([cross.status, cross.body.code], [404, '0702000100']);
      assert.equal((await stack.request('GET', `/ukyb/${theirs}`, { key: otherKey })).status, 404);
      const { entityId } = await profile();
      const again = await create({ entityId, business: business(), ubos: [] });
      assert.deepEqual([again.status, again.body.code], [409, '0709000200']);
    });

    it('PATCH changes the given parts: business fields replace, the address merges, ubos replaces the declared set', async () => {
      const { entityId, ubos } = await profile([owner(), owner()]);
      const res = await patch({ entityId, business: { legalName: 'Acme Holdings Ltd', address: { postCode: 'SW1A 1AA' } }, ubos: [owner()] });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.ubos.length, 1);
      assert.ok(!ubos.some((u) => u.entityId === res.body.ubos[0].entityId));
      const read = (await stack.request('GET', `/ukyb/${entityId}`, { key })).body;
      assert.equal(read.business.legalName, 'Acme Holdings Ltd');
      assert.deepEqual(read.business.address, { ...business().address, postCode: 'SW1A 1AA' });
      assert.deepEqual(
        (await manifest(entityId)).ubos.map((u: any) => u.entityId),
        [res.body.ubos[0].entityId],
      );
      const statuses = (await stack.request('GET', `/entity/${entityId}`, { key })).body.submittedRequirements.map((r: any) => r.status);
      assert.deepEqual(statuses, ['SUPERSEDED', 'PENDING']);
    });

    it('PATCH answers 404 without a profile or for another business, and 400 naming a bad field, changing nothing', async () => {
      const bare = await entity();
      assert.deepEqual([(await patch({ entityId: bare, business: { legalName: 'X' } })).body.code], ['0709000300']);
      const { entityId } = await profile();
      const cross = await patch({ entityId, business: { legalName: 'Taken Over Ltd' } }, otherKey);
      assert.deepEqual([cross.status, cross.body.code], [404, '0702000100']);
      const bad = await patch({ entityId, business: { address: { country: 'ZZZ' } } });
      assert.deepEqual([bad.status, bad.body.parameter], [400, 'business.address.country']);
      const kept = (await stack.request('GET', `/ukyb/${entityId}`, { key })).body.business;
      assert.deepEqual([kept.address.country, kept.legalName], ['GBR', 'Acme Trading Ltd']);
    });
  });

  describe('documents and the manifest', () => {
    it('an existing entity with nothing uploaded: 200 with business {} and owners without documents; an INDIVIDUAL too', async () => {
      const bare = await entity();
      assert.deepEqual(await manifest(bare), { entityId: bare, business: {}, ubos: [] });
      const { entityId, ubos } = await profile([owner()]);
      assert.deepEqual(await manifest(entityId), {
        entityId,
        business: {},
        ubos: [{ entityId: ubos[0]!.entityId, externalId: ubos[0]!.externalId, documents: {} }],
      });
      const person = await entity('INDIVIDUAL');
      assert.deepEqual(await manifest(person), { entityId: person, business: {}, ubos: [] });
      assert.equal((await stack.request('GET', `/entity/${randomUUID()}/documents`, { key })).status, 404);
      assert.equal((await stack.request('GET', `/entity/${bare}/documents`, { key: otherKey })).status, 404);
    });

    it("business documents accumulate; an owner's re-upload of a kind replaces it; no fileId is answered", async () => {
      const { entityId, ubos } = await profile([owner()]);
      const first = await documents({ entityId, requirementSlug: 'ukyb-certificate-of-incorporation' }, [{ bytes: FILES.pdf, name: 'cert-1.pdf' }]);
      assert.equal(first.status, 201, first.text);
      assert.equal(JSON.stringify(first.body).includes('fileId'), false);
      assert.deepEqual(
        first.body.files.map((f: any) => [f.fileName, f.contentType]),
        [['cert-1.pdf', 'application/pdf']],
      );
      await documents({ entityId, requirementSlug: 'ukyb-certificate-of-incorporation' }, [{ bytes: FILES.png, name: 'cert-2.png' }]);
      const memberId = ubos[0]!.entityId;
      const p1 = await documents({ entityId, memberId, documentType: 'PASSPORT' }, [{ bytes: FILES.jpeg, name: 'passport-old.jpg' }]);
      assert.equal(p1.status, 201, p1.text);
      assert.deepEqual([p1.body.memberId, p1.body.documentType], [memberId, 'PASSPORT']);
      await documents({ entityId, memberId, documentType: 'PASSPORT' }, [{ bytes: FILES.pdf, name: 'passport-new.pdf' }]);
      await documents({ entityId, memberId, documentType: 'UTILITY_BILL' }, [{ bytes: FILES.pdf, name: 'bill.pdf' }]);
      const m = await manifest(entityId);
      assert.deepEqual(
        m.business['ukyb-certificate-of-incorporation'].map((f: any) => f.fileName),
        ['cert-1.pdf', 'cert-2.png'],
      );
      assert.deepEqual(
        m.ubos[0].documents.PASSPORT.map((f: any) => f.fileName),
        ['passport-new.pdf'],
      );
      assert.deepEqual(
        m.ubos[0].documents.UTILITY_BILL.map((f: any) => f.fileName),
        ['bill.pdf'],
      );
      for (const f of [...m.business['ukyb-certificate-of-incorporation'], ...m.ubos[0].documents.PASSPORT]) {
        assert.match(f.fileId, /^[0-9a-f-]{36}$/);
        assert.ok(f.size > 0 && Date.parse(f.uploadedAt));
      }
      assert.equal('meta' in m, false, 'without page or limit: the whole manifest, as v1.0.1');

      // v1.0.2: pages of files (business first, then each owner's), every owner listed on every page
      const page = async (query: string) => {
        const res = await stack.request('GET', `/entity/${entityId}/documents${query}`, { key });
        assert.equal(res.status, 200, res.text);
        return res.body;
      };
      const p1m = await page('?limit=2');
      assert.deepEqual(
        p1m.business['ukyb-certificate-of-incorporation'].map((f: any) => f.fileName),
        ['cert-1.pdf', 'cert-2.png'],
      );
      assert.deepEqual(p1m.ubos, [{ entityId: memberId, externalId: ubos[0]!.externalId, documents: {} }]);
      assert.deepEqual(p1m.meta, { page: 1, limit: 2, totalItems: 4, totalPages: 2 });
      const p2m = await page('?page=2&limit=2');
      assert.deepEqual(p2m.business, {});
      assert.deepEqual(Object.keys(p2m.ubos[0].documents).sort(), ['PASSPORT', 'UTILITY_BILL']);
      assert.deepEqual((await page('?page=3&limit=2')).ubos[0].documents, {});
      assert.equal((await stack.request('GET', `/entity/${entityId}/documents?limit=0`, { key })).status, 400);
    });

    const refused: [
      string,
      () => Promise<{ fields: Record<string, string>; files?: { bytes: Buffer; name: string }[]; k?: string }>,
      number,
      string,
      string,
    ][] = [
      [
        'both requirementSlug and memberId',
        async () => ({ fields: { requirementSlug: 'ukyb-proof-of-address', memberId: randomUUID(), documentType: 'PASSPORT' } }),
        400,
        '0000000300',
        'requirementSlug',
      ],
      ['neither requirementSlug nor memberId', async () => ({ fields: {} }), 400, '0000000300', 'requirementSlug'],
      ['an unknown requirementSlug', async () => ({ fields: { requirementSlug: 'ukyc-id-document' } }), 400, '0000000300', 'requirementSlug'],
      ['memberId without documentType', async () => ({ fields: { memberId: randomUUID() } }), 400, '0000000300', 'documentType'],
      ['an unknown documentType', async () => ({ fields: { memberId: randomUUID(), documentType: 'SELFIE' } }), 400, '0000000300', 'documentType'],
      [
        'a memberId that is not a declared owner',
        async () => ({ fields: { memberId: await entity('INDIVIDUAL'), documentType: 'PASSPORT' } }),
        404,
        '0707000200',
        'memberId',
      ],
      [
        'a file that is not a document',
        async () => ({ fields: { requirementSlug: 'ukyb-proof-of-address' }, files: [{ bytes: FILES.text, name: 'a.pdf' }] }),
        415,
        '0708000500',
        'files',
      ],
      [
        'an empty file',
        async () => ({ fields: { requirementSlug: 'ukyb-proof-of-address' }, files: [{ bytes: Buffer.alloc(0), name: 'a.pdf' }] }),
        400,
        '0708000200',
        'files',
      ],
      [
        'too many files',
        async () => ({ fields: { requirementSlug: 'ukyb-proof-of-address' }, files: Array.from({ length: 4 }, () => ({ bytes: FILES.pdf, name: 'a.pdf' })) }),
        400,
        '0708000400',
        'files',
      ],
      ['no file', async () => ({ fields: { requirementSlug: 'ukyb-proof-of-address' }, files: [] }), 400, '0708000100', 'files'],
      ['an unknown form field', async () => ({ fields: { requirementSlug: 'ukyb-proof-of-address', colour: 'blue' } }), 400, '0000000300', 'colour'],
      ["another business's entity", async () => ({ fields: { requirementSlug: 'ukyb-proof-of-address' }, k: otherKey }), 404, '0702000100', 'entityId'],
    ];
    for (const [what, make, status, code, parameter] of refused) {
      it(`answers ${status} ${code} to ${what}, naming ${parameter}, and stores nothing`, async () => {
        const { entityId } = await profile([owner()]);
        const r = await make();
        const res = await documents({ entityId, ...r.fields }, r.files ?? [{ bytes: FILES.pdf, name: 'a.pdf' }], r.k ?? key);
        assert.deepEqual([res.status, res.body.code, res.body.parameter], [status, code, parameter], res.text);
        const m = await manifest(entityId);
        assert.deepEqual([m.business, m.ubos[0].documents], [{}, {}]);
      });
    }

    it('answers 400 for an INDIVIDUAL entityId and a missing entityId', async () => {
      const person = await entity('INDIVIDUAL');
      const res = await documents({ entityId: person, requirementSlug: 'ukyb-proof-of-address' });
      assert.deepEqual([res.status, res.body.code], [400, '0709000100']);
      const form = filesForm([{ bytes: FILES.pdf, name: 'a.pdf' }]);
      form.append('requirementSlug', 'ukyb-proof-of-address');
      const missing = await stack.request('POST', '/ukyb/documents', { key, form });
      assert.deepEqual([missing.status, missing.body.parameter], [400, 'entityId']);
    });
  });

  describe('presigned downloads (local store)', () => {
    it(
      "downloads the bytes without an API key; an owner's file only through the owner's entityId;" +
        ' 404 across businesses and for replaced files, old links included',
      async () => {
        const { entityId, ubos } = await profile([owner()]);
        const memberId = ubos[0]!.entityId;
        await documents({ entityId, requirementSlug: 'ukyb-register-of-shareholders' }, [{ bytes: FILES.png, name: 'register.png' }]);
        await documents({ entityId, memberId, documentType: 'ID_CARD' }, [{ bytes: FILES.jpeg, name: 'id-old.jpg' }]);
        const old = (await manifest(entityId)).ubos[0].documents.ID_CARD[0].fileId;
        const oldLink = (await stack.request('GET', `/entity/${memberId}/file/${old}/presigned-url`, { key })).body.url as string;
        assert.equal((await fetch(oldLink)).status, 200, 'the link works while the file is live');
        await documents({ entityId, memberId, documentType: 'ID_CARD' }, [{ bytes: FILES.pdf, name: 'id.pdf' }]);
        // replaced: a link issued before the replacement is dead too, not only new requests for one
        const dead = await fetch(oldLink);
        assert.deepEqual([dead.status, ((await dead.json()) as any).code], [404, '0709000600']);
        const m = await manifest(entityId);
        const register = m.business['ukyb-register-of-shareholders'][0].fileId;
        const idCard = m.ubos[0].documents.ID_CARD[0].fileId;

        const signed = await stack.request('GET', `/entity/${entityId}/file/${register}/presigned-url`, { key });
        assert.equal(signed.status, 200, signed.text);
        assert.ok(Date.parse(signed.body.expiresAt) > Date.now() + 14 * 60_000 && Date.parse(signed.body.expiresAt) <= Date.now() + 15 * 60_000 + 1000);
        const got = await fetch(signed.body.url);
        assert.equal(got.status, 200);
        assert.deepEqual(Buffer.from(await got.arrayBuffer()), FILES.png);
        assert.equal(got.headers.get('content-type'), 'image/png');
        assert.match(got.headers.get('content-disposition') ?? '', /attachment; filename="register.png"/);
        // a link is a credential: the request log names it by a hash only
        const token = new URL(signed.body.url).pathname.slice('/files/'.length);
        await world.eventually('the download logged', () => stack.logs.some((l) => String(l.path ?? '').startsWith('/files/')), {
          timeoutMs: 1000,
          everyMs: 20,
        });
        const logged = stack.logs.filter((l) => String(l.path ?? '').startsWith('/files/'));
        assert.ok(logged.length > 0, 'downloads are logged');
        assert.ok(
          logged.every((l) => /^\/files\/\[link sha256:[0-9a-f]{12}\]$/.test(String(l.path))),
          JSON.stringify(logged.map((l) => l.path)),
        );
        assert.ok(!JSON.stringify(stack.logs).includes(token), 'the link appears nowhere in the logs');

        const viaBusiness = await stack.request('GET', `/entity/${entityId}/file/${idCard}/presigned-url`, { key });
        assert.deepEqual([viaBusiness.status, viaBusiness.body.code], [404, '0709000600']);
        const viaOwner = await stack.request('GET', `/entity/${memberId}/file/${idCard}/presigned-url`, { key });
        assert.equal(viaOwner.status, 200);
        assert.deepEqual(Buffer.from(await (await fetch(viaOwner.body.url)).arrayBuffer()), FILES.pdf);
        assert.equal((await stack.request('GET', `/entity/${memberId}/file/${old}/presigned-url`, { key })).status, 404);
        assert.equal((await stack.request('GET', `/entity/${entityId}/file/${register}/presigned-url`, { key: otherKey })).status, 404);
        assert.equal((await stack.request('GET', `/entity/${entityId}/file/${randomUUID()}/presigned-url`, { key })).status, 404);
      },
    );

    it('answers 403 to a changed or expired link, and 200 to the same link unchanged', async () => {
      const { entityId } = await profile([]);
      await documents({ entityId, requirementSlug: 'ukyb-proof-of-address' }, [{ bytes: FILES.pdf, name: 'poa.pdf' }]);
      const fileId = (await manifest(entityId)).business['ukyb-proof-of-address'][0].fileId;
      const { url } = (await stack.request('GET', `/entity/${entityId}/file/${fileId}/presigned-url`, { key })).body;
      const [claims, signature] = new URL(url).pathname.slice('/files/'.length).split('.');
      const claimsJson = JSON.parse(Buffer.from(claims!, 'base64url').toString());
      const changedClaims = Buffer.from(JSON.stringify({ ...claimsJson, e: claimsJson.e + 86_400 })).toString('base64url');
      const flipped = signature!.startsWith('A') ? `B${signature!.slice(1)}` : `A${signature!.slice(1)}`;
      for (const bad of [`${changedClaims}.${signature}`, `${claims}.${flipped}`, `${claims}`, 'nonsense']) {
        const res = await fetch(`${stack.url}/files/${bad}`);
        assert.equal(res.status, 403, bad);
        assert.equal(((await res.json()) as any).code, '0709000700');
      }
      const expired = signDownloadLink(Buffer.from(LINK_SECRET), { key: claimsJson.k, expiresAt: new Date(Date.now() - 1000) });
      const res = await fetch(`${stack.url}${expired}`);
      assert.equal(res.status, 403);
      assert.match(((await res.json()) as any).message, /expired/);
      assert.equal((await fetch(url)).status, 200);
    });
  });

  describe('submission and decision', () => {
    it('answers 409 without a kyb_status_change subscription, 404 without a profile, 400 for an INDIVIDUAL', async () => {
      const theirs = await entity('BUSINESS', noHookKey);
      const noHook = await submit(theirs, noHookKey);
      assert.deepEqual([noHook.status, noHook.body.code], [409, '0709000500']);
      assert.match(noHook.body.message, /kyb_status_change/);
      const bare = await entity();
      assert.deepEqual([(await submit(bare)).status, (await submit(bare)).body.code], [404, '0709000300']);
      assert.equal((await submit(await entity('INDIVIDUAL'))).body.code, '0709000100');
      assert.equal((await submit(bare, otherKey)).status, 404);
    });

    it('answers 400 with missing naming each missing business document and each owner without an identity document', async () => {
      const { entityId, ubos } = await profile([owner(), owner()]);
      await documents({ entityId, requirementSlug: 'ukyb-proof-of-address' });
      await documents({ entityId, memberId: ubos[0]!.entityId, documentType: 'DRIVERS_LICENCE' });
      await documents({ entityId, memberId: ubos[1]!.entityId, documentType: 'UTILITY_BILL' }); // not an identity document
      const res = await submit(entityId);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.code, '0709000400');
      assert.deepEqual(res.body.missing, ['ukyb-certificate-of-incorporation', 'ukyb-register-of-shareholders', `${ubos[1]!.entityId}:IDENTITY_DOCUMENT`]);
      assert.equal((await stack.request('GET', `/ukyb/${entityId}`, { key })).body.latestSubmission, null);
    });

    it('owners decided together by a requirement batch wake the submission waiting on them: APPROVED', async () => {
      const { entityId, ubos } = await profile([owner(), owner()]);
      const ownerIds = ubos.map((u) => u.entityId);
      await complete(entityId, ownerIds);
      const res = await submit(entityId);
      assert.equal(res.status, 202, res.text);
      // each owner's identity document, then their KYC data in one batch: both decided in one step, one look for both
      for (const id of ownerIds) {
        const up = await stack.request('POST', `/entity/${id}/requirement-slug/ukyc-id-document/upload`, {
          key,
          form: filesForm([{ bytes: FILES.pdf, name: 'p.pdf' }]),
        });
        assert.equal(up.status, 201, up.text);
      }
      const form = new FormData();
      const data = JSON.stringify(canonicalPayload());
      const records = ownerIds.map((id) => JSON.stringify({ entityId: id, requirementSlug: 'ukyc-canonical-kyc-data', value: data }));
      form.append('file', new Blob([records.join('\n') + '\n']), 'owners.jsonl');
      const batch = await stack.request('POST', '/entity/requirement/batch', { key, form, headers: { 'Idempotency-Key': `owners-${randomUUID()}` } });
      assert.equal(batch.status, 201, batch.text);
      const [e] = await events(entityId, 'kyb_status_change', 1);
      assert.equal(e!.body.data.status, 'APPROVED');
      assert.equal(e!.body.data.submissionId, res.body.submissionId);
      assert.deepEqual(
        e!.body.data.ubos.map((u: any) => u.status),
        ['APPROVED', 'APPROVED'],
      );
    });

    it(
      'waits for every owner, then APPROVED by a signed kyb_status_change webhook; the business ' + 'card program enabled; no personal data in the history',
      async () => {
        const { entityId, ubos } = await profile([owner(), owner((o) => ((o.firstName = 'Grace'), (o.lastName = 'Hopper')))]);
        await complete(
          entityId,
          ubos.map((u) => u.entityId),
        );
        const res = await submit(entityId);
        assert.equal(res.status, 202, res.text);
        assert.equal(res.body.status, 'IN_REVIEW');
        const again = await submit(entityId);
        assert.equal(again.body.submissionId, res.body.submissionId);
        await verifyOwner(entityId, ubos[0]!.entityId);
        const handle = stack.temporal.workflow.getHandle(universalKybWorkflowId(res.body.submissionId));
        await world.eventually('the first owner decided', async () => (await handle.query(kybProgressQuery)).ownersDecided >= 1, {
          timeoutMs: 5000,
          everyMs: 100,
        });
        assert.equal((await stack.request('GET', `/ukyb/${entityId}`, { key })).body.status, 'IN_REVIEW');
        await verifyOwner(entityId, ubos[1]!.entityId);
        const [e] = await events(entityId, 'kyb_status_change', 1);
        assert.ok(verifyWebhook(e!.raw.body, e!.raw.headers['vouch-signature'] as string, testKeyRing().map(publicKeyOf)));
        assert.equal(e!.body.eventName, 'kyb_status_updated');
        assert.deepEqual(eventBodySchema('kyb_status_change')!.parse(e!.body), e!.body, 'as the API description documents it');
        assert.equal(e!.body.data.status, 'APPROVED');
        assert.equal(e!.body.data.submissionId, res.body.submissionId);
        assert.deepEqual(
          e!.body.data.ubos.map((u: any) => u.status),
          ['APPROVED', 'APPROVED'],
        );
        assert.equal('rejectLabels' in e!.body.data, false);
        const read = (await stack.request('GET', `/ukyb/${entityId}`, { key })).body;
        assert.deepEqual([read.status, read.latestSubmission.status], ['DECIDED', 'DECIDED'], 'the stage, not the outcome (1.4: the webhook alone tells it)');
        const ent = (await stack.request('GET', `/entity/${entityId}`, { key })).body;
        assert.deepEqual(
          ent.enabledFeatures.map((f: any) => f.slug),
          ['business-card-program'],
        );
        assert.equal(ent.verifiedBy, 'universal-kyb');
        assert.ok(
          ent.submittedRequirements.every((r: any) => r.status === 'APPROVED'),
          JSON.stringify(ent.submittedRequirements),
        );
        assert.deepEqual(await handle.result(), { outcome: 'decided', status: 'APPROVED' });
        const history = JSON.stringify(await handle.fetchHistory());
        for (const secret of ['Grace', 'Hopper', 'Lovelace', '1980-12-10', 'Acme']) assert.equal(history.includes(secret), false, secret);
        assert.equal((await events(entityId, 'kyb_status_change', 1)).length, 1);
        // the business's verification moved: waiting for its owners, in review once they were decided, decided
        const stages = await events(entityId, 'verification_status_change', 3);
        assert.deepEqual(stages.map((s) => s.body.data.verificationStatus).sort(), ['DECIDED', 'IN_REVIEW', 'WAITING_FOR_PERSON']);
        assert.ok(stages.every((s) => s.body.data.verificationPath === 'universal-kyb' && s.body.data.verificationId === res.body.submissionId));
      },
    );

    it('an owner already verified before submission counts; one REJECTED makes the business REJECTED with its labels', async () => {
      const { entityId, ubos } = await profile([owner(), owner()]);
      await verifyOwner(entityId, ubos[0]!.entityId); // verified before the submission
      await events(ubos[0]!.entityId, 'account_status_change', 1);
      await complete(
        entityId,
        ubos.map((u) => u.entityId),
      );
      const res = await submit(entityId);
      assert.equal(res.status, 202, res.text);
      await verifyOwner(entityId, ubos[1]!.entityId, { reviewAnswer: 'RED', rejectLabels: ['FORGERY'], reviewRejectType: 'FINAL' });
      const [e] = await events(entityId, 'kyb_status_change', 1);
      assert.equal(e!.body.data.status, 'REJECTED');
      assert.deepEqual(e!.body.data.rejectLabels, ['UBO_REJECTED', 'FORGERY']);
      assert.equal(e!.body.data.reviewRejectType, 'FINAL');
      assert.match(e!.body.data.moderationComment, new RegExp(ubos[1]!.externalId));
      assert.deepEqual(
        e!.body.data.ubos.map((u: any) => u.status),
        ['APPROVED', 'REJECTED'],
      );
      assert.deepEqual((await stack.request('GET', `/entity/${entityId}`, { key })).body.enabledFeatures, []);
      const read = (await stack.request('GET', `/ukyb/${entityId}`, { key })).body;
      assert.equal(read.status, 'DECIDED', 'a rejected business reads as an approved one does');
      assert.doesNotMatch(JSON.stringify(read), /APPROVED|REJECTED/);
    });

    it(
      'decides REJECTED (RETRY) when owners are still unverified at the deadline; a change ' +
        'supersedes a waiting submission and a new submission decides again',
      async () => {
        const { entityId, ubos } = await profile([owner()]);
        await complete(
          entityId,
          ubos.map((u) => u.entityId),
        );
        const first = await submit(entityId);
        const [e] = await events(entityId, 'kyb_status_change', 1, (DEADLINE_SECONDS + 20) * 1000);
        assert.equal(e!.body.data.status, 'REJECTED');
        assert.deepEqual([e!.body.data.rejectLabels, e!.body.data.reviewRejectType], [['UBO_VERIFICATION_INCOMPLETE'], 'RETRY']);
        assert.deepEqual(
          e!.body.data.ubos.map((u: any) => u.status),
          ['PENDING'],
        );
        // decided at its deadline (always REJECTED): the read says DECIDED, as for any decision (1.4)
        assert.equal((await stack.request('GET', `/ukyb/${entityId}`, { key })).body.latestSubmission.status, 'DECIDED');

        const second = await submit(entityId);
        assert.notEqual(second.body.submissionId, first.body.submissionId);
        const changed = await patch({ entityId, business: { tradingName: 'Acme' } });
        assert.equal(changed.body.status, 'DRAFT');
        const superseded = stack.temporal.workflow.getHandle(universalKybWorkflowId(second.body.submissionId));
        assert.deepEqual(await superseded.result(), { outcome: 'superseded' });
        // the replaced submission's verification ends as SUPERSEDED (verification_status_change), not left waiting
        const isSuperseded = (b: any) => b.data.verificationId === second.body.submissionId && b.data.verificationStatus === 'SUPERSEDED';
        await world.eventually(
          'SUPERSEDED delivered',
          async () => (await events(entityId, 'verification_status_change', 1)).some((e) => isSuperseded(e.body)),
          {
            everyMs: 100,
          },
        );
        const third = await submit(entityId);
        await verifyOwner(entityId, ubos[0]!.entityId);
        const all = await events(entityId, 'kyb_status_change', 2);
        assert.equal(all.length, 2);
        assert.deepEqual([all[1]!.body.data.submissionId, all[1]!.body.data.status], [third.body.submissionId, 'APPROVED']);
      },
    );

    it('decides an owner verified through universal KYC too (any individual path wakes the submission)', async () => {
      const { entityId, ubos } = await profile([owner()]);
      await complete(
        entityId,
        ubos.map((u) => u.entityId),
      );
      assert.equal((await submit(entityId)).status, 202);
      const memberId = ubos[0]!.entityId;
      const data = await stack.request('POST', `/entity/${memberId}/requirement`, {
        key,
        json: { requirementSlug: 'ukyc-canonical-kyc-data', value: JSON.stringify(canonicalPayload()) },
      });
      assert.equal(data.status, 201, data.text);
      const up = await stack.request('POST', `/entity/${memberId}/requirement-slug/ukyc-id-document/upload`, {
        key,
        form: filesForm([{ bytes: FILES.pdf, name: 'p.pdf' }]),
      });
      assert.equal(up.status, 201, up.text);
      const [e] = await events(entityId, 'kyb_status_change', 1);
      assert.equal(e!.body.data.status, 'APPROVED');
    });
  });
});
