// Sealed is gone on every path (issue 37). Under a retention policy DELETE /entity seals a person
// instead of removing them, and a sealed person must look exactly as a deleted one does — also when
// reached through the business entity that declared them (an owner through its KYB profile, a member
// through POST /entity/{id}/members): by memberId, in member and assignment lists, in the documents
// manifest and the KYB profile, in a batch record. Two businesses are set up alike, a declared owner
// and a member each, verified, with documents and a feature assignment: one under a five-year policy
// (its people sealed), one under none (its people deleted for good). Every operation of the live
// OpenAPI document that names an entity or a member is called for the sealed people and for the
// deleted ones (the table OPERATIONS below, which must cover the document): what names a sealed
// person answers as for a deleted one, never 2xx; a list of the business leaves them out; and no
// answer holds their names or document numbers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { features } from '../../domain/feature-catalog.ts';
import { setRetentionPolicy } from '../../store/retention.ts';
import { pdfOf, uniqueName, uniqueNumber } from '../helpers/person-data.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { jsonLines, uploadRecords, waitForRequirementBatch } from '../helpers/requirement-batches.ts';
import { startStack, type Reply, type Stack } from '../helpers/stack.ts';
import { canonicalPayload, documentsForm, FILES, filesForm } from '../helpers/ukyc.ts';
import { eventually } from '../helpers/eventually.ts';

const CARDHOLDER = features.find((f) => f.slug === 'business-cardholder')!.id;
const KYB_DOCUMENTS = ['ukyb-certificate-of-incorporation', 'ukyb-proof-of-address', 'ukyb-register-of-shareholders'];
const ENTITY_NOT_FOUND = '0702000100';
const BUSINESS = {
  legalName: 'Sealed Paths Ltd',
  registrationNumber: '24681357',
  country: 'GBR',
  address: { country: 'GBR', postCode: 'EC1A 1BB', street: 'King Street', town: 'London' },
  incorporationDate: '2015-06-01',
};

/** One business's setup: B declares the owner O (KYB profile) and the member M (members), both verified. */
type World = {
  label: 'sealed' | 'deleted';
  key: string;
  businessId: string;
  b: string;
  o: string;
  m: string;
  oExternalId: string;
  /** Names and document numbers of O and M, found nowhere else. */
  personal: string[];
  /** O's passport (a KYB owner document) and O's universal KYC identity document. */
  oPassport: string;
  oIdDocument: string;
  /** The path of a download link to O's passport, issued before the delete. */
  oPassportLink: string;
};

type Expect = 'gone' | 'list' | 'audit';
/**
 * A call naming a sealed (or deleted) person. `gone`: refused (not 2xx) as for a deleted person, same
 * status and code. `list`: a 2xx answer about the business that leaves the people out (as for deleted
 * ones). `audit`: the audit log, which outlives a delete (ids and hashes): answered as for a deleted
 * person. `before`: what it answered while the person was live (read-only calls), to show the call
 * reaches them then.
 */
type Call = {
  method: string;
  path: string;
  json?: unknown;
  form?: () => FormData;
  expect: Expect;
  before?: { status: number; includes: string[] };
  /** Changes the business entity: run after the others. */
  last?: boolean;
};

const canonical = () => JSON.stringify(canonicalPayload());
const declaring = (entityId: string) => ({ requirementSlug: 'kyb-ubo-declaration', value: { members: [{ entityId, role: 'UBO', ownershipPercent: 50 }] } });
const pdf = () => filesForm([{ bytes: FILES.pdf, name: 'doc.pdf' }]);

/** How to call each operation with the sealed ids (O and M as the entity; B with memberId O or M; B's lists; bodies naming O or M). */
const OPERATIONS: Record<string, (w: World) => Call[]> = {
  getEntity: (w) => [
    { method: 'GET', path: `/entity/${w.o}`, expect: 'gone', before: { status: 200, includes: [w.o] } },
    { method: 'GET', path: `/entity/${w.m}`, expect: 'gone', before: { status: 200, includes: [w.m] } },
  ],
  deleteEntity: (w) => [
    { method: 'DELETE', path: `/entity/${w.o}`, expect: 'gone' },
    { method: 'DELETE', path: `/entity/${w.m}`, expect: 'gone' },
  ],
  // a BUSINESS entity created declaring owners by their entityId (kyb-ubo-declaration)
  createEntity: (w) => [
    { method: 'POST', path: '/entity', json: { externalId: `sp-${w.label}-again`, type: 'BUSINESS', requirements: [declaring(w.o)] }, expect: 'gone' },
    { method: 'POST', path: '/entity', json: { externalId: `sp-${w.label}-again`, type: 'BUSINESS', requirements: [declaring(w.m)] }, expect: 'gone' },
  ],
  listEntities: (w) => [{ method: 'GET', path: '/entity?limit=100', expect: 'list', before: { status: 200, includes: [w.o, w.m, w.b] } }],
  declareBusinessMembers: (w) => [
    { method: 'POST', path: `/entity/${w.b}/members`, json: { members: [{ entityId: w.m, role: 'EMPLOYEE' }] }, expect: 'gone' },
    { method: 'POST', path: `/entity/${w.b}/members`, json: { members: [{ entityId: w.o, role: 'DIRECTOR' }] }, expect: 'gone' },
    { method: 'POST', path: `/entity/${w.o}/members`, json: { members: [{ entityId: w.m, role: 'EMPLOYEE' }] }, expect: 'gone' },
  ],
  listBusinessMembers: (w) => [
    { method: 'GET', path: `/entity/${w.b}/members`, expect: 'list', before: { status: 200, includes: [w.m, w.o] } },
    { method: 'GET', path: `/entity/${w.m}/members`, expect: 'gone' },
  ],
  removeBusinessMember: (w) => [
    { method: 'DELETE', path: `/entity/${w.b}/members/${w.m}`, expect: 'gone' },
    { method: 'DELETE', path: `/entity/${w.b}/members/${w.o}`, expect: 'gone' },
    { method: 'DELETE', path: `/entity/${w.o}/members/${w.m}`, expect: 'gone' },
  ],
  assignFeatureToMembers: (w) => [
    { method: 'POST', path: `/entity/${w.b}/feature/${CARDHOLDER}/assignments`, json: { memberIds: [w.m] }, expect: 'gone' },
    { method: 'POST', path: `/entity/${w.b}/feature/${CARDHOLDER}/assignments`, json: { memberIds: [w.o] }, expect: 'gone' },
    { method: 'POST', path: `/entity/${w.m}/feature/${CARDHOLDER}/assignments`, json: { memberIds: [w.m] }, expect: 'gone' },
  ],
  listFeatureAssignments: (w) => [
    { method: 'GET', path: `/entity/${w.b}/feature/${CARDHOLDER}/assignments`, expect: 'list', before: { status: 200, includes: [w.m, w.o] } },
    { method: 'GET', path: `/entity/${w.b}/feature/${CARDHOLDER}/assignments?page=1&limit=1`, expect: 'list', before: { status: 200, includes: [] } },
    { method: 'GET', path: `/entity/${w.o}/feature/${CARDHOLDER}/assignments`, expect: 'gone' },
  ],
  unassignFeature: (w) => [
    { method: 'DELETE', path: `/entity/${w.b}/feature/${CARDHOLDER}/assignments/${w.m}`, expect: 'gone' },
    { method: 'DELETE', path: `/entity/${w.b}/feature/${CARDHOLDER}/assignments/${w.o}`, expect: 'gone' },
    { method: 'DELETE', path: `/entity/${w.m}/feature/${CARDHOLDER}/assignments/${w.m}`, expect: 'gone' },
  ],
  createSdkToken: (w) => [
    { method: 'POST', path: `/entity/${w.o}/kyc`, expect: 'gone' },
    { method: 'POST', path: `/entity/${w.m}/kyc`, expect: 'gone' },
    { method: 'POST', path: `/entity/${w.b}/kyc?memberId=${w.o}`, expect: 'gone', before: { status: 200, includes: ['sdkToken'] } },
    { method: 'POST', path: `/entity/${w.b}/kyc?memberId=${w.m}`, expect: 'gone', before: { status: 200, includes: ['sdkToken'] } },
  ],
  submitRequirement: (w) => [
    { method: 'POST', path: `/entity/${w.o}/requirement`, json: { requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() }, expect: 'gone' },
    { method: 'POST', path: `/entity/${w.m}/requirement`, json: { requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() }, expect: 'gone' },
  ],
  uploadRequirementFiles: (w) => [
    { method: 'POST', path: `/entity/${w.o}/requirement-slug/ukyc-id-document/upload`, form: pdf, expect: 'gone' },
    { method: 'POST', path: `/entity/${w.b}/requirement-slug/ukyc-id-document/upload?memberId=${w.o}`, form: pdf, expect: 'gone' },
    { method: 'POST', path: `/entity/${w.b}/requirement-slug/ukyc-id-document/upload?memberId=${w.m}`, form: pdf, expect: 'gone' },
  ],
  readSignedPayload: (w) => [
    { method: 'GET', path: `/entity/${w.o}/signed-payload`, expect: 'gone', before: { status: 200, includes: w.personal.slice(0, 2) } },
    { method: 'GET', path: `/entity/${w.m}/signed-payload`, expect: 'gone', before: { status: 200, includes: w.personal.slice(2) } },
    { method: 'GET', path: `/entity/${w.b}/signed-payload?memberId=${w.o}`, expect: 'gone', before: { status: 200, includes: w.personal.slice(0, 2) } },
    { method: 'GET', path: `/entity/${w.b}/signed-payload?memberId=${w.m}`, expect: 'gone', before: { status: 200, includes: w.personal.slice(2) } },
  ],
  sandboxCompleteKyc: (w) => [
    { method: 'POST', path: `/sandbox/entity/${w.m}/kyc/complete`, json: { reviewAnswer: 'GREEN' }, expect: 'gone' },
    { method: 'POST', path: `/sandbox/entity/${w.b}/kyc/complete?memberId=${w.o}`, json: { reviewAnswer: 'GREEN' }, expect: 'gone' },
    { method: 'POST', path: `/sandbox/entity/${w.b}/kyc/complete?memberId=${w.m}`, json: { reviewAnswer: 'GREEN' }, expect: 'gone' },
  ],
  createKybProfile: (w) => [
    { method: 'POST', path: '/ukyb', json: { entityId: w.o, business: BUSINESS, ubos: [] }, expect: 'gone' },
    { method: 'POST', path: '/ukyb', json: { entityId: w.m, business: BUSINESS, ubos: [] }, expect: 'gone' },
  ],
  changeKybProfile: (w) => [
    { method: 'PATCH', path: '/ukyb', json: { entityId: w.o, business: { tradingName: 'Gone' } }, expect: 'gone' },
    { method: 'PATCH', path: '/ukyb', json: { entityId: w.b, business: { tradingName: 'Still here' } }, expect: 'list', last: true },
  ],
  readKybProfile: (w) => [
    { method: 'GET', path: `/ukyb/${w.b}`, expect: 'list', before: { status: 200, includes: [w.o] } },
    { method: 'GET', path: `/ukyb/${w.o}`, expect: 'gone' },
  ],
  uploadKybDocuments: (w) => [
    { method: 'POST', path: '/ukyb/documents', form: () => documentsForm({ entityId: w.b, memberId: w.o, documentType: 'PASSPORT' }), expect: 'gone' },
    { method: 'POST', path: '/ukyb/documents', form: () => documentsForm({ entityId: w.b, memberId: w.m, documentType: 'PASSPORT' }), expect: 'gone' },
    { method: 'POST', path: '/ukyb/documents', form: () => documentsForm({ entityId: w.o, requirementSlug: KYB_DOCUMENTS[0]! }), expect: 'gone' },
  ],
  submitKyb: (w) => [
    { method: 'POST', path: '/ukyb/submit', json: { entityId: w.o }, expect: 'gone' },
    { method: 'POST', path: '/ukyb/submit', json: { entityId: w.b }, expect: 'list', last: true },
  ],
  readDocumentManifest: (w) => [
    { method: 'GET', path: `/entity/${w.b}/documents`, expect: 'list', before: { status: 200, includes: [w.o, w.oPassport] } },
    { method: 'GET', path: `/entity/${w.b}/documents?page=1&limit=10`, expect: 'list', before: { status: 200, includes: [w.o, w.oPassport] } },
    { method: 'GET', path: `/entity/${w.o}/documents`, expect: 'gone', before: { status: 200, includes: [] } },
  ],
  presignFile: (w) => [
    { method: 'GET', path: `/entity/${w.o}/file/${w.oPassport}/presigned-url`, expect: 'gone', before: { status: 200, includes: ['url'] } },
    { method: 'GET', path: `/entity/${w.o}/file/${w.oIdDocument}/presigned-url`, expect: 'gone', before: { status: 200, includes: ['url'] } },
    { method: 'GET', path: `/entity/${w.b}/file/${w.oPassport}/presigned-url`, expect: 'gone' },
  ],
  downloadFile: (w) => [{ method: 'GET', path: w.oPassportLink, expect: 'gone', before: { status: 200, includes: w.personal.slice(0, 2) } }],
  readEntityHistory: (w) => [
    { method: 'GET', path: `/entity/${w.o}/history`, expect: 'gone', before: { status: 200, includes: [] } },
    { method: 'GET', path: `/entity/${w.m}/history`, expect: 'gone', before: { status: 200, includes: [] } },
    { method: 'GET', path: `/entity/${w.b}/history?limit=100`, expect: 'list', before: { status: 200, includes: [w.o] } },
  ],
  readAuditLog: (w) => [
    { method: 'GET', path: `/audit-log?entityId=${w.o}&limit=100`, expect: 'audit' },
    { method: 'GET', path: `/audit-log?entityId=${w.m}&limit=100`, expect: 'audit' },
  ],
};

const NAMING = new Set(['entityId', 'memberId', 'memberIds', 'members']);
/** Whether a schema names a field that holds an entity's or a member's id, at any depth. */
const schemaNames = (v: unknown): boolean => {
  if (Array.isArray(v)) return v.some(schemaNames);
  if (!v || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  if (o.properties && typeof o.properties === 'object' && Object.keys(o.properties).some((k) => NAMING.has(k))) return true;
  return Object.values(o).some(schemaNames);
};
/** An operation that names an entity or a member: in its path, a query parameter or a field of its body. */
const namesAPerson = (path: string, op: any): boolean =>
  /\{(entityId|memberId)\}/.test(path) ||
  (op.parameters ?? []).some((p: any) => p.in !== 'header' && NAMING.has(p.name)) ||
  schemaNames(op.requestBody?.content ?? {});

describe('a sealed person is gone on every path, as a deleted one is', () => {
  let stack: Stack;
  let receiver: Receiver;
  let doc: any;
  let sealed: World;
  let deleted: World;
  let n = 0;
  /** Every answer given after the delete, to search for the people's data. */
  const answers: { label: string; text: string }[] = [];

  before(async () => {
    stack = await startStack({
      workers: true,
      providerCallbacks: true,
      env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', API_RATE_LIMIT_PER_SECOND: '100000' },
    });
    receiver = await startReceiver();
    const openapi = await stack.request('GET', '/openapi.json');
    assert.equal(openapi.status, 200, openapi.text);
    doc = openapi.body;
    // both set up at once; should one fail, the other is waited for (its polls have deadlines) before the stack closes
    const worlds = await Promise.allSettled([setUp('sealed'), setUp('deleted')]);
    for (const w of worlds) if (w.status === 'rejected') throw w.reason;
    [sealed, deleted] = worlds.map((w) => (w as PromiseFulfilledResult<World>).value) as [World, World];
  });
  after(async () => {
    await receiver?.close();
    await stack?.close();
  });

  const events = () => receiver.received.map((r) => JSON.parse(r.body.toString()));
  async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
    const found = await eventually(
      what,
      async () => {
        const got = await probe();
        return got !== undefined && { got };
      },
      { timeoutMs, everyMs: 100 },
    );
    return found.got;
  }
  const ok = (res: Reply, status = 201) => {
    assert.equal(res.status, status, res.text);
    return res.body;
  };

  /** A business with B, its owner O and member M verified (O by universal KYC, M by the sandbox), documents, an assignment, KYB decided. */
  async function setUp(label: World['label']): Promise<World> {
    const { apiKey: key, businessId } = await stack.newBusiness({ name: `Sealed paths ${label}` });
    if (label === 'sealed') assert.ok(await setRetentionPolicy(stack.db, businessId, { years: 5 }));
    const types = ['account_status_change', 'kyb_status_change', 'feature_access_change'];
    ok(await stack.request('POST', '/notification', { key, json: { notificationChannel: 'WEBHOOK', notificationTypes: types, webhookUrl: receiver.url } }));
    const entity = async (type: string) => ok(await stack.request('POST', '/entity', { key, json: { externalId: `sp-${label}-${n++}`, type } })).id as string;
    const [oName, oNumber, mName, mNumber] = [uniqueName(), uniqueNumber(), uniqueName(), uniqueNumber()];
    const b = await entity('BUSINESS');
    const oExternalId = `sp-${label}-owner-${n++}`;
    const ubo = { externalId: oExternalId, firstName: oName, lastName: 'Owner', dob: '1980-12-10', nationality: 'GBR', ownershipPercentage: 60 };
    const o = ok(await stack.request('POST', '/ukyb', { key, json: { entityId: b, business: BUSINESS, ubos: [ubo] } })).ubos[0].entityId as string;
    const m = await entity('INDIVIDUAL');
    // O is a member too (a director), beside its ownership: both tables of members name it
    const members = [
      { entityId: m, role: 'EMPLOYEE' },
      { entityId: o, role: 'DIRECTOR' },
    ];
    ok(await stack.request('POST', `/entity/${b}/members`, { key, json: { members } }));

    // O: universal KYC on its own entity, its identity document uploaded through the business (memberId)
    const value = JSON.stringify(
      canonicalPayload((p) => {
        p.identity.firstName = oName;
        p.identity.fullName = `${oName} Owner`;
        p.document[0].number = oNumber;
      }),
    );
    ok(await stack.request('POST', `/entity/${o}/requirement`, { key, json: { requirementSlug: 'ukyc-canonical-kyc-data', value } }));
    ok(
      await stack.request('POST', `/entity/${b}/requirement-slug/ukyc-id-document/upload?memberId=${o}`, {
        key,
        form: filesForm([{ bytes: pdfOf(oName, oNumber), name: 'id.pdf' }]),
      }),
    );
    // M: the hosted SDK played by the sandbox, through the business (memberId)
    const person = { firstName: mName, lastName: 'Member', idDocument: { type: 'PASSPORT', country: 'GBR', number: mNumber } };
    ok(await stack.request('POST', `/sandbox/entity/${b}/kyc/complete?memberId=${m}`, { key, json: { reviewAnswer: 'GREEN', person } }), 202);
    // the KYB documents, O's passport, the cardholder feature for both, and the submission
    for (const slug of KYB_DOCUMENTS) ok(await stack.request('POST', '/ukyb/documents', { key, form: documentsForm({ entityId: b, requirementSlug: slug }) }));
    const passport = documentsForm({ entityId: b, memberId: o, documentType: 'PASSPORT' }, [{ bytes: pdfOf(oName, oNumber), name: 'passport.pdf' }]);
    ok(await stack.request('POST', '/ukyb/documents', { key, form: passport }));
    ok(await stack.request('POST', `/entity/${b}/feature/${CARDHOLDER}/assignments`, { key, json: { memberIds: [m, o] } }));
    ok(await stack.request('POST', '/ukyb/submit', { key, json: { entityId: b } }), 202);

    // settled before the delete: both people decided, the business's KYB decided, both assignments enabled
    const decided = (type: string, entityId: string) => events().some((e) => e.eventType === type && e.data?.entityId === entityId) || undefined;
    await until(`${label}: O decided`, () => decided('account_status_change', o));
    await until(`${label}: M decided`, () => decided('account_status_change', m));
    await until(`${label}: KYB decided`, () => decided('kyb_status_change', b));
    await until(`${label}: both assignments enabled`, async () => {
      const res = await stack.request('GET', `/entity/${b}/feature/${CARDHOLDER}/assignments`, { key });
      return ok(res, 200).items.every((i: any) => i.enabled) && res.body.items.length === 2 ? true : undefined;
    });

    const manifest = ok(await stack.request('GET', `/entity/${b}/documents`, { key }), 200);
    const oPassport = manifest.ubos.find((u: any) => u.entityId === o).documents.PASSPORT[0].fileId as string;
    const [idDocument] = await stack.db.query<{ id: string }>("SELECT id FROM files WHERE entity_id = $1 AND slug = 'ukyc-id-document'", [o]);
    const link = ok(await stack.request('GET', `/entity/${o}/file/${oPassport}/presigned-url`, { key }), 200).url as string;
    return {
      label,
      key,
      businessId,
      b,
      o,
      m,
      oExternalId,
      personal: [oName, oNumber, mName, mNumber],
      oPassport,
      oIdDocument: String(idDocument!.id),
      oPassportLink: new URL(link).pathname,
    };
  }

  /** The operation of the document that a call is for: its method, and its path template matching the call's path. */
  const operationOf = (c: Call): string | undefined => {
    const path = c.path.split('?')[0]!;
    for (const [template, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      const op = ops[c.method.toLowerCase()];
      if (op && pattern.test(path) && !/\{/.test(path)) return op.operationId;
    }
    return undefined;
  };
  const versioned = (operationId: string) =>
    Object.values(doc.paths as Record<string, Record<string, any>>)
      .flatMap((ops) => Object.values(ops))
      .some((op) => op.operationId === operationId && (op.parameters ?? []).some((p: any) => p.in === 'header' && p.name === 'Accept-Version'));

  const call = (w: World, operationId: string, c: Call) =>
    stack.request(c.method, c.path, {
      key: w.key,
      ...(c.json !== undefined ? { json: c.json } : {}),
      ...(c.form ? { form: c.form() } : {}),
      headers: versioned(operationId) ? { 'Accept-Version': 'v1.0' } : {},
    });
  /** What an answer tells, the same for both businesses: its status and, refused, its error with the world's ids left out. */
  const answerOf = (w: World, r: Reply) => {
    if (r.status < 300) return { status: r.status };
    const anonymous = (text: unknown) =>
      typeof text !== 'string'
        ? text
        : Object.entries({ B: w.b, O: w.o, M: w.m, file: w.oPassport, idDocument: w.oIdDocument, externalId: `sp-${w.label}` }).reduce(
            (t, [name, id]) => t.replaceAll(id, `{${name}}`),
            text,
          );
    return { status: r.status, code: r.body?.code, parameter: r.body?.parameter, message: anonymous(r.body?.message) };
  };
  const describeCall = (operationId: string, c: Call) => `${operationId}: ${c.method} ${c.path}`;
  const calls = () =>
    Object.entries(OPERATIONS).flatMap(([operationId, of]) => {
      const [s, d] = [of(sealed), of(deleted)];
      assert.equal(s.length, d.length);
      return s.map((c, i) => ({ operationId, sealed: c, deleted: d[i]! }));
    });

  it('the table covers every operation of the live OpenAPI document that names an entity or a member, and each call is for its operation', () => {
    const naming: string[] = [];
    const all = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>))
      for (const op of Object.values(ops)) {
        all.add(op.operationId);
        if (namesAPerson(path, op)) naming.push(op.operationId);
      }
    assert.ok(naming.length >= 20, `the document's operations that name a person: ${naming.join(', ')}`);
    const missing = naming.filter((id) => !OPERATIONS[id]?.(sealed).length);
    assert.deepEqual(missing, [], `operations that name an entity or a member with no calls in OPERATIONS: add them (${missing.join(', ')})`);
    assert.deepEqual(
      Object.keys(OPERATIONS).filter((id) => !all.has(id)),
      [],
      'every operation of the table is in the document',
    );
    for (const c of calls()) assert.equal(operationOf(c.sealed), c.operationId, describeCall(c.operationId, c.sealed));
  });

  it('before the delete, the calls reach the owner and the member (directly and through the business entity)', async () => {
    for (const w of [sealed, deleted])
      for (const [operationId, of] of Object.entries(OPERATIONS))
        for (const c of of(w)) {
          if (!c.before) continue;
          const res = await call(w, operationId, c);
          assert.equal(res.status, c.before.status, `${w.label} ${describeCall(operationId, c)}: ${res.text.slice(0, 500)}`);
          for (const s of c.before.includes)
            assert.ok(res.text.includes(s), `${w.label} ${describeCall(operationId, c)} holds ${s}: ${res.text.slice(0, 500)}`);
        }
  });

  it('DELETE seals the owner and the member under the policy, and removes them under none', async () => {
    for (const w of [sealed, deleted])
      for (const id of [w.o, w.m]) assert.equal((await stack.request('DELETE', `/entity/${id}`, { key: w.key })).status, 204, `${w.label} ${id}`);
    const rows = async (w: World) =>
      (await stack.db.query<{ sealed: boolean }>('SELECT sealed_at IS NOT NULL AS sealed FROM entity_records WHERE id IN ($1, $2)', [w.o, w.m])).map(
        (r) => r.sealed,
      );
    assert.deepEqual(await rows(sealed), [true, true], 'sealed: the records are kept');
    assert.deepEqual(await rows(deleted), [], 'deleted: nothing is kept');
  });

  it('every call naming a sealed person answers as for a deleted one: refused, or a list of the business without them', async () => {
    const all = calls();
    const ordered = [
      ...all.filter((c) => !c.sealed.last),
      ...all.filter((c) => c.sealed.last),
      ...all.filter((c) => c.sealed.expect === 'list' && !c.sealed.last),
    ];
    const failures: string[] = [];
    for (const { operationId, sealed: s, deleted: d } of ordered) {
      const [rs, rd] = [await call(sealed, operationId, s), await call(deleted, operationId, d)];
      const what = describeCall(operationId, s);
      answers.push({ label: `sealed ${what}`, text: rs.text }, { label: `deleted ${describeCall(operationId, d)}`, text: rd.text });
      const wrong: string[] = [];
      if (!isDeepStrictEqual(answerOf(sealed, rs), answerOf(deleted, rd))) wrong.push('not as for a deleted person');
      const two = rs.status >= 200 && rs.status < 300;
      if (s.expect === 'gone' && (rs.status < 400 || rs.status >= 500)) wrong.push('not refused');
      // a sealed entity addressed as the entity itself: 404 entity-not-found (domain/errors.ts), as a deleted one (a file under it: file not found)
      const addressed = operationId !== 'presignFile' && [sealed.o, sealed.m].some((id) => new RegExp(`^(/sandbox)?/entity/${id}(/|$)`).test(s.path));
      if (addressed && (rs.status !== 404 || rs.body?.code !== ENTITY_NOT_FOUND)) wrong.push(`not 404 ${ENTITY_NOT_FOUND}`);
      if (s.expect !== 'gone' && !two) wrong.push('refused');
      if (s.expect === 'list') {
        for (const [w, r] of [
          [sealed, rs],
          [deleted, rd],
        ] as const)
          for (const id of [w.o, w.m, w.oPassport, w.oIdDocument]) if (r.text.includes(id)) wrong.push(`${w.label}: lists ${id}`);
        // a page counts the same people (the history is left out: the last calls' workflows may still be adding to it)
        if (operationId !== 'readEntityHistory' && !isDeepStrictEqual(rs.body?.meta, rd.body?.meta)) wrong.push('not counted alike');
      }
      if (wrong.length)
        failures.push(`${what}: ${wrong.join(', ')} — sealed ${rs.status} ${rs.text.slice(0, 240)} | deleted ${rd.status} ${rd.text.slice(0, 240)}`);
    }
    assert.deepEqual(failures, []);
  });

  it('a requirement batch record naming a sealed person fails as for a deleted one; the rest of the file is submitted', async () => {
    const control = async (w: World) =>
      ok(await stack.request('POST', '/entity', { key: w.key, json: { externalId: `sp-${w.label}-${n++}`, type: 'INDIVIDUAL' } })).id as string;
    const outcome = async (w: World) => {
      const records = [
        { entityId: w.b, memberId: w.o, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() },
        { entityId: w.b, memberId: w.m, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() },
        { entityId: w.o, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() },
        { entityId: w.m, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() },
        { externalId: w.oExternalId, requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() },
        { entityId: await control(w), requirementSlug: 'ukyc-canonical-kyc-data', value: canonical() },
      ];
      const up = await uploadRecords(stack, w.key, jsonLines(records));
      answers.push({ label: `${w.label} batch upload`, text: up.text });
      const status = await waitForRequirementBatch(stack, w.key, ok(up).batchId, 60_000);
      answers.push({ label: `${w.label} batch status`, text: JSON.stringify(status) });
      const failed = await stack.request('GET', `/entity/requirement/batch/${up.body.batchId}/failed-records`, { key: w.key });
      answers.push({ label: `${w.label} batch failed records`, text: failed.text });
      return {
        successful: status.summary.successfulRecords,
        errors: status.summary.errors.map((e: any) => [e.rowNumber, e.errorDetail.category, e.errorDetail.path]).sort(),
      };
    };
    const [s, d] = [await outcome(sealed), await outcome(deleted)];
    assert.deepEqual(
      s.errors.map((e: unknown[]) => e[0]),
      [1, 2, 3, 4, 5],
      `every record naming a sealed person fails: ${JSON.stringify(s)}`,
    );
    assert.equal(s.successful, 1, 'the record of a live person is submitted');
    assert.deepEqual(s, d, 'as for the deleted people');
  });

  it('no answer given after the delete holds a name or a document number of the people', () => {
    assert.ok(answers.length > 100, `${answers.length} answers searched`);
    const found: string[] = [];
    for (const w of [sealed, deleted])
      for (const needle of w.personal)
        for (const a of answers) if (a.text.includes(needle)) found.push(`${needle} (${w.label}) in ${a.label}: ${a.text.slice(0, 300)}`);
    assert.deepEqual(found, []);
  });
});
