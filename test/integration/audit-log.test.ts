// The audit log written by every change and every read of a person's data (issue 21, item 1), on
// one stack driven through the API: each action with its actor (the API key's id and the request's
// id, the workflow id and run id of what activities did, the provider's callback, the download link),
// its ids, and no personal data anywhere in audit_log; a rolled-back transaction leaves no entry; a
// refused write is request.refused with its code; GET /audit-log pages and filters a business's own
// entries only; `vouch audit verify` finds every chain intact at the end.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import canonicalize from 'canonicalize';
import { batchWorkflowId } from '../../contract/batch-import.ts';
import { personVerificationWorkflowId } from '../../contract/person-verification.ts';
import { universalKybWorkflowId } from '../../contract/universal-kyb.ts';
import { universalKycWorkflowId } from '../../contract/universal-kyc.ts';
import { canonicalSha256, DECISION_RULES, keyedDigest, storedDecision } from '../../domain/digests.ts';
import type { Decision } from '../../domain/reliance.ts';
import { linkNow } from '../../store/audit-chainer.ts';
import { recordAudit } from '../../store/audit-log.ts';
import { recordEvent } from '../../store/events.ts';
import { csvOf, createEntities, donorAt, upload, waitForBatch, type Donor } from '../helpers/imports.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { canonicalPayload, documentsForm, FILES, filesForm } from '../helpers/ukyc.ts';
import { eventually, subscribe } from '../helpers/world.ts';

/** Letters only (universal KYC names are Latin), and a document number: unlikely anywhere by chance. */
const uniqueName = () =>
  `Zq${randomBytes(6)
    .toString('hex')
    .replace(/\d/g, (d) => 'ghijklmnop'[Number(d)]!)}`;
const uniqueNumber = () => `DN${randomBytes(5).toString('hex').toUpperCase()}`;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const V = { 'Accept-Version': 'v1.0' };
const REQUIRED_KYB = ['ukyb-certificate-of-incorporation', 'ukyb-proof-of-address', 'ukyb-register-of-shareholders'];

type Entry = {
  seq: number;
  occurredAt: string;
  actorType: string;
  actorId: string;
  runId: string | null;
  requestId: string | null;
  action: string;
  entityId: string | null;
  subjectType: string | null;
  subjectId: string | null;
  details: Record<string, string | number | boolean | null>;
  outcome: string;
};

describe('audit log entries of every change and read', () => {
  let stack: Stack;
  let receiver: Receiver;
  let donor: Donor;
  let key: string;
  let businessId: string;
  let keyId: string;
  let otherKey: string;
  let otherBusinessId: string;
  // what must never be in the log: a person's names and document number, moderation comments, the
  // clients' externalIds, and the outcome of any decision (spec 1.4)
  const FIRST = uniqueName();
  const LAST = uniqueName();
  const DOC = uniqueNumber();
  const OWNER_FIRST = uniqueName();
  const COMMENT = `comment ${uniqueName()}`;
  const externalIds: string[] = [];
  const ext = (label: string) => {
    const id = `${label}-${uniqueName()}`;
    externalIds.push(id);
    return id;
  };

  const entries = async (business: string, action?: string): Promise<Entry[]> => {
    await linkNow(stack.db, business); // what has committed, in chain order
    const rows = await stack.db.query(
      `SELECT seq, occurred_at, actor_type, actor_id, run_id, request_id, action, entity_id, subject_type, subject_id, details, outcome
         FROM audit_log WHERE business_id = $1${action ? ' AND action = $2' : ''} ORDER BY seq`,
      action ? [business, action] : [business],
    );
    return rows.map((r) => ({
      seq: Number(r.seq),
      occurredAt: new Date(r.occurred_at as string).toISOString(),
      actorType: String(r.actor_type),
      actorId: String(r.actor_id),
      runId: (r.run_id as string | null) ?? null,
      requestId: (r.request_id as string | null) ?? null,
      action: String(r.action),
      entityId: (r.entity_id as string | null) ?? null,
      subjectType: (r.subject_type as string | null) ?? null,
      subjectId: (r.subject_id as string | null) ?? null,
      details: JSON.parse(String(r.details)),
      outcome: String(r.outcome),
    }));
  };
  /** The entries of an action that match, once there are at least `count` (activities write theirs in their own time). */
  const awaitEntries = async (action: string, match: (e: Entry) => boolean, count = 1, business = businessId, timeoutMs = 45_000) => {
    return eventually(
      `${count} ${action} entries that match`,
      async () => {
        const found = (await entries(business, action)).filter(match);
        return found.length >= count && found;
      },
      { timeoutMs, everyMs: 100 },
    );
  };
  const one = async (action: string, match: (e: Entry) => boolean) => {
    const found = await awaitEntries(action, match);
    assert.equal(found.length, 1, `exactly one ${action}: ${JSON.stringify(found)}`);
    return found[0]!;
  };
  /** An entry the API request wrote: the key's id and the request's id. */
  const byRequest = (e: Entry, requestId: string | null) => {
    assert.deepEqual([e.actorType, e.actorId, e.runId, e.requestId], ['api_key', keyId, null, requestId]);
  };
  const byWorkflow = (e: Entry, workflowId: string) => {
    assert.deepEqual([e.actorType, e.actorId], ['workflow', workflowId]);
    assert.match(e.runId ?? '', /^[0-9a-f-]{36}$/, 'the run id');
    assert.equal(e.requestId, null);
  };
  const entity = async (type: 'INDIVIDUAL' | 'BUSINESS', externalId = ext(type.toLowerCase()), requirements?: unknown[], k = key) => {
    const res = await stack.request('POST', '/entity', { key: k, json: { externalId, type, ...(requirements ? { requirements } : {}) } });
    assert.equal(res.status, 201, res.text);
    return { id: res.body.id as string, externalId, requestId: res.headers.get('x-request-id') };
  };
  /** A value's digest under the entity's key, as the audit log names it. */
  const hmacOf = async (entityId: string, value: unknown) => {
    const [row] = await stack.db.query<{ key: Buffer }>('SELECT key FROM entity_digest_keys WHERE entity_id = $1', [entityId]);
    assert.ok(row, `a digest key of ${entityId}`);
    return keyedDigest(row.key, value);
  };
  const kycAccountOf = async (entityId: string) =>
    (
      await stack.db.query<{
        decision: 'APPROVED' | 'REJECTED';
        reject_labels: string[];
        review_reject_type: 'RETRY' | 'FINAL' | null;
        moderation_comment: string | null;
        decision_nonce: string;
        id: string;
        decision_id: string;
      }>('SELECT * FROM kyc_accounts WHERE entity_id = $1 ORDER BY decided_at DESC LIMIT 1', [entityId])
    )[0]!;
  /** The decision as kyc_accounts stores it, hashed as decision.recorded names it. */
  const storedHash = (a: Awaited<ReturnType<typeof kycAccountOf>>) => {
    const d: Decision =
      a.decision === 'APPROVED'
        ? { status: 'APPROVED' }
        : {
            status: 'REJECTED',
            rejectLabels: a.reject_labels,
            reviewRejectType: a.review_reject_type ?? 'RETRY',
            moderationComment: a.moderation_comment ?? '',
          };
    return canonicalSha256({ nonce: a.decision_nonce, decision: storedDecision(d) });
  };

  before(async () => {
    stack = await startStack({
      workers: true,
      providerCallbacks: true,
      env: {
        WEBHOOK_ALLOW_INSECURE_URLS: 'true',
        API_RATE_LIMIT_PER_SECOND: '100000',
        SYNC_IMPORT_RATE_LIMIT_PER_SECOND: '100',
        BATCH_PROVIDER_MAX_ATTEMPTS: '2',
        BATCH_PROVIDER_RETRY_INITIAL_MS: '100',
      },
    });
    receiver = await startReceiver();
    donor = donorAt(stack);
    ({ apiKey: key, businessId } = await stack.newBusiness({ name: 'Audited' }));
    ({ apiKey: otherKey, businessId: otherBusinessId } = await stack.newBusiness({ name: 'Other' }));
    keyId = String((await stack.db.query('SELECT id FROM api_keys WHERE business_id = $1', [businessId]))[0]!.id);
  });
  after(async () => {
    await receiver.close();
    await stack.close();
  });

  it('subscriptions: created, replaced and deleted, each by the API key in its request', async () => {
    const created = await subscribe(stack, key, receiver.url, [
      'account_status_change',
      'kyb_status_change',
      'verification_status_change',
      'feature_access_change',
    ]);
    const subscription = created.body.id as string;
    const e = await one('subscription.created', (x) => x.subjectId === subscription);
    byRequest(e, created.headers.get('x-request-id'));
    assert.deepEqual(e.details, {
      channel: 'WEBHOOK',
      types: 'account_status_change,feature_access_change,kyb_status_change,verification_status_change',
      urlSha256: sha256(receiver.url),
    });
    const spare = await stack.request('POST', '/notification', {
      key,
      json: { notificationChannel: 'WEBHOOK', notificationTypes: ['reminder'], webhookUrl: `${receiver.url}/spare` },
    });
    const spareId = spare.body.id as string;
    const replaced = await stack.request('PUT', `/notification/${spareId}`, {
      key,
      json: { notificationChannel: 'WEBHOOK', notificationTypes: ['reminder', 'new_feature'], webhookUrl: `${receiver.url}/spare` },
    });
    assert.equal(replaced.status, 200, replaced.text);
    byRequest(await one('subscription.replaced', (x) => x.subjectId === spareId), replaced.headers.get('x-request-id'));
    const deleted = await stack.request('DELETE', `/notification/${spareId}`, { key });
    assert.equal(deleted.status, 204, deleted.text);
    const gone = await one('subscription.deleted', (x) => x.subjectId === spareId);
    byRequest(gone, deleted.headers.get('x-request-id'));
    assert.deepEqual(gone.details, { canceledDeliveries: 0 });
    // an unknown subscription changes nothing: no entry of a change, a refusal instead
    const unknown = randomUUID();
    assert.equal((await stack.request('DELETE', `/notification/${unknown}`, { key })).status, 404);
    assert.equal((await entries(businessId, 'subscription.deleted')).length, 1);
  });

  it('entities: created (externalId by its keyed digest), requirements submitted (values by theirs), members declared', async () => {
    const person = await entity('INDIVIDUAL');
    const e = await one('entity.created', (x) => x.entityId === person.id);
    byRequest(e, person.requestId);
    assert.deepEqual(
      [e.subjectType, e.subjectId, e.details],
      ['entity', person.id, { externalIdHmac: await hmacOf(person.id, person.externalId), type: 'INDIVIDUAL' }],
    );
    assert.notEqual(e.details.externalIdHmac, sha256(person.externalId), 'not the plain hash a guess would match');
    const requirements = [
      { requirementSlug: 'kyb-legal-name', value: `Firm of ${FIRST}` },
      { requirementSlug: 'kyb-ubo-declaration', value: { members: [{ entityId: person.id, role: 'UBO', ownershipPercent: 60 }] } },
    ];
    const firm = await entity('BUSINESS', ext('firm'), requirements);
    const submitted = await awaitEntries('requirement.submitted', (x) => x.entityId === firm.id, 2);
    assert.deepEqual(
      submitted.map((x) => [x.details.slug, x.details.valueHmac, x.subjectType]).sort(),
      (await Promise.all(requirements.map(async (r) => [r.requirementSlug, await hmacOf(firm.id, r.value), 'requirement']))).sort(),
    );
    for (const x of submitted) byRequest(x, firm.requestId);
    const member = await one('member.declared', (x) => x.entityId === firm.id);
    byRequest(member, firm.requestId);
    assert.deepEqual([member.subjectType, member.subjectId, member.details], ['entity', person.id, { memberId: person.id, role: 'UBO' }]);
  });

  it('a refused write is request.refused with its code, and the refused change leaves no entry of its own', async () => {
    const first = await entity('INDIVIDUAL');
    const again = await stack.request('POST', '/entity', { key, json: { externalId: first.externalId, type: 'BUSINESS' } });
    assert.equal(again.status, 409, again.text);
    const refused = await one('request.refused', (x) => x.requestId === again.headers.get('x-request-id'));
    byRequest(refused, again.headers.get('x-request-id'));
    assert.deepEqual(
      [refused.outcome, refused.subjectType, refused.subjectId, refused.details],
      ['0702000200', 'operation', 'createEntity', { status: 409, parameter: 'externalId' }],
    );
    // the insert failed, its transaction rolled back: entity.created once, for the first
    const digest = await hmacOf(first.id, first.externalId);
    const created = (await entries(businessId, 'entity.created')).filter((x) => x.details.externalIdHmac === digest);
    assert.equal(created.length, 1);
  });

  it('a transaction rolled back leaves no entry; one committed leaves exactly its entries', async () => {
    const marker = randomUUID();
    await assert.rejects(
      stack.db.tx(async (q) => {
        recordAudit(q, { businessId, action: 'entity.created', subject: { type: 'entity', id: marker } });
        await q.query('SELECT 1');
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    assert.equal((await entries(businessId)).filter((x) => x.subjectId === marker).length, 0, 'the rolled-back entry is nowhere');
    // an entry outside a transaction is refused before anything is written
    assert.throws(() => recordAudit(stack.db, { businessId, action: 'entity.created' }), /outside a transaction/);
    // an event recorded twice by its source key is one event and one entry
    const sourceKey = `audit-test-${marker}`;
    const record = () =>
      recordEvent(stack.db, {
        businessId,
        entityId: null,
        eventName: 'test',
        eventType: 'reminder',
        payload: (eventId) => ({ eventName: 'test', eventType: 'reminder', data: { eventId } }),
        sourceKey,
      });
    const eventId = await record();
    assert.equal(await record(), eventId);
    const recorded = (await entries(businessId, 'event.recorded')).filter((x) => x.subjectId === eventId);
    assert.deepEqual(
      recorded.map((x) => [x.subjectType, x.details]),
      [['event', { eventType: 'reminder' }]],
    );
  });

  describe('universal KYC, signed payload and downloads', () => {
    let person: { id: string; externalId: string; requestId: string | null };
    let submissionId: string;
    let fileId: string;

    it('ukyc.submitted and file.submitted by the API; the workflow keeps the data, moves the stages once each, decides and enables', async () => {
      person = await entity('INDIVIDUAL');
      const data = JSON.stringify(
        canonicalPayload((p) => {
          p.externalUserId = ext('ukyc-user');
          p.identity = { ...p.identity, firstName: FIRST, middleName: undefined, lastName: LAST, fullName: `${FIRST} ${LAST}` };
          p.document[0].number = DOC;
        }),
      );
      const submitted = await stack.request('POST', `/entity/${person.id}/requirement`, {
        key,
        json: { requirementSlug: 'ukyc-canonical-kyc-data', value: data },
      });
      assert.equal(submitted.status, 201, submitted.text);
      submissionId = submitted.body.submissionId;
      const s = await one('ukyc.submitted', (x) => x.entityId === person.id);
      byRequest(s, submitted.headers.get('x-request-id'));
      assert.deepEqual(
        [s.subjectType, s.subjectId, s.details],
        ['submission', submissionId, { submissionId, opened: true, payloadHmac: await hmacOf(person.id, data) }],
      );
      // the workflow waits for the document (its first look), then looks again at each wake
      const waiting = await one('verification.stage', (x) => x.entityId === person.id);
      byWorkflow(waiting, universalKycWorkflowId(submissionId));
      assert.deepEqual([waiting.subjectType, waiting.subjectId], ['verification', `universal-kyc:${submissionId}`]);
      const bytes = Buffer.concat([FILES.pdf, Buffer.from(`% ${randomUUID()}\n`)]);
      const uploaded = await stack.request('POST', `/entity/${person.id}/requirement-slug/ukyc-id-document/upload`, {
        key,
        form: filesForm([{ bytes, name: 'passport.pdf' }]),
      });
      assert.equal(uploaded.status, 201, uploaded.text);
      fileId = (await stack.db.query<{ id: string }>('SELECT id FROM files WHERE entity_id = $1', [person.id]))[0]!.id;
      const f = await one('file.submitted', (x) => x.subjectId === fileId);
      byRequest(f, uploaded.headers.get('x-request-id'));
      assert.deepEqual([f.entityId, f.details], [person.id, { slug: 'ukyc-id-document', documentType: null, sha256: sha256(bytes), submissionId }]);

      const run = universalKycWorkflowId(submissionId);
      const decided = await one('decision.recorded', (x) => x.entityId === person.id);
      byWorkflow(decided, run);
      const account = await kycAccountOf(person.id);
      assert.deepEqual([decided.subjectType, decided.subjectId], ['decision', account.decision_id], 'the decision itself, kept beside its earlier ones');
      const event = (await stack.db.query('SELECT id FROM events WHERE entity_id = $1 AND event_type = $2', [person.id, 'account_status_change']))[0]!;
      const { basisSha256, ...details } = decided.details;
      assert.deepEqual(details, {
        path: 'universal-kyc',
        source: 'universal-kyc',
        sourceRef: submissionId,
        provider: 'onfido',
        applicantId: `ukyc-${submissionId}`,
        eventId: event.id,
        rules: DECISION_RULES['universal-kyc'],
        decisionSha256: storedHash(account),
      });
      assert.match(String(basisSha256), /^[0-9a-f]{64}$/, 'the rules and the data it rested on, digested with its nonce');
      const kept = await one('person_data.kept', (x) => x.entityId === person.id);
      byWorkflow(kept, run);
      assert.match(String(kept.details.dataHmac), /^[0-9a-f]{64}$/);
      const enabled = await one('feature.enabled', (x) => x.entityId === person.id);
      byWorkflow(enabled, run);
      assert.equal(enabled.details.slug, 'card-issuance-api-access');
      const recorded = await one('event.recorded', (x) => x.subjectId === event.id);
      assert.deepEqual([recorded.entityId, recorded.details], [person.id, { eventType: 'account_status_change' }]);
      // each stage once, however often the workflow looked (a readiness check per wake)
      const stages = (await entries(businessId, 'verification.stage')).filter((x) => x.entityId === person.id);
      assert.deepEqual(stages.map((x) => x.details.stage).sort(), ['DECIDED', 'IN_REVIEW', 'WAITING_FOR_DOCUMENTS']);
      for (const x of stages) assert.deepEqual([x.details.path, x.details.verificationId], ['universal-kyc', submissionId]);
    });

    it('signed_payload.issued: a read of the person, ok when answered, with the code when refused', async () => {
      const read = await stack.request('GET', `/entity/${person.id}/signed-payload`, { key });
      assert.equal(read.status, 200, read.text);
      assert.equal(read.body.firstName, FIRST, 'the payload is the person');
      const e = await one('signed_payload.issued', (x) => x.requestId === read.headers.get('x-request-id'));
      byRequest(e, read.headers.get('x-request-id'));
      assert.deepEqual([e.entityId, e.outcome, e.details], [person.id, 'ok', { entityId: person.id, memberId: null, keyId: read.body.keyId }]);
      const stranger = await entity('INDIVIDUAL');
      const refused = await stack.request('GET', `/entity/${stranger.id}/signed-payload`, { key });
      assert.deepEqual([refused.status, refused.body.code], [409, '0707000700'], refused.text);
      const r = await one('signed_payload.issued', (x) => x.requestId === refused.headers.get('x-request-id'));
      assert.deepEqual([r.entityId, r.outcome], [stranger.id, '0707000700']);
    });

    it('download_link.issued names the link by a hash; file.downloaded is the link acting, in the file’s business', async () => {
      const presigned = await stack.request('GET', `/entity/${person.id}/file/${fileId}/presigned-url`, { key });
      assert.equal(presigned.status, 200, presigned.text);
      const url = new URL(presigned.body.url);
      const token = url.pathname.slice('/files/'.length);
      const linkId = sha256(token);
      const issued = await one('download_link.issued', (x) => x.requestId === presigned.headers.get('x-request-id'));
      byRequest(issued, presigned.headers.get('x-request-id'));
      assert.deepEqual([issued.entityId, issued.subjectId, issued.details.fileId, issued.details.linkId], [person.id, fileId, fileId, linkId]);
      assert.ok(!JSON.stringify(issued).includes(token), 'the link itself is never in the log');
      const downloaded = await fetch(`${stack.url}${url.pathname}`);
      assert.equal(downloaded.status, 200);
      await downloaded.arrayBuffer();
      const used = await one('file.downloaded', (x) => x.details.linkId === linkId);
      assert.deepEqual([used.actorType, used.actorId, used.runId, used.requestId], ['download_link', linkId, null, downloaded.headers.get('x-request-id')]);
      assert.deepEqual([used.entityId, used.subjectId, used.outcome], [person.id, fileId, 'ok']);
      // a link that is not ours names no business: nothing is written
      const before = (await entries(businessId, 'file.downloaded')).length;
      assert.equal((await fetch(`${stack.url}/files/${token.slice(0, -2)}xx`)).status, 403);
      assert.equal((await entries(businessId, 'file.downloaded')).length, before);
      // a file another entity's path does not hold: refused, with the code, for the asking business
      const wrong = await stack.request('GET', `/entity/${randomUUID()}/file/${fileId}/presigned-url`, { key });
      assert.equal(wrong.status, 404);
      const refused = await one('download_link.issued', (x) => x.requestId === wrong.headers.get('x-request-id'));
      assert.deepEqual([refused.entityId, refused.outcome], [null, wrong.body.code]);
    });

    it('a link serves DOWNLOAD_LINK_MAX_USES downloads, each recorded; the next is refused (403) and recorded once, and later ones write nothing', async () => {
      const presigned = await stack.request('GET', `/entity/${person.id}/file/${fileId}/presigned-url`, { key });
      assert.equal(presigned.status, 200, presigned.text);
      const path = new URL(presigned.body.url).pathname;
      const linkId = sha256(path.slice('/files/'.length));
      const max = stack.config.files.downloadLinkMaxUses;
      assert.equal(max, 3, 'the default');
      const uses = async () => (await entries(businessId, 'file.downloaded')).filter((x) => x.details.linkId === linkId);
      const get = async () => {
        const res = await fetch(`${stack.url}${path}`);
        const body = await res.text();
        return { status: res.status, body };
      };
      for (let i = 0; i < max; i++) assert.equal((await get()).status, 200, `download ${i + 1} of ${max}`);
      assert.deepEqual(
        (await uses()).map((x) => x.outcome),
        Array(max).fill('ok'),
      );
      const refused = await get();
      assert.equal(refused.status, 403);
      assert.deepEqual([JSON.parse(refused.body).code, JSON.parse(refused.body).parameter], ['0709000700', 'link']);
      assert.match(JSON.parse(refused.body).message, new RegExp(`served its ${max} download`));
      await eventually('the refusal recorded', async () => (await uses()).length === max + 1);
      assert.equal((await uses()).at(-1)!.outcome, '0709000700');
      for (let i = 0; i < 5; i++) assert.equal((await get()).status, 403);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await uses()).length, max + 1, 'a flood of fetches of a used link adds nothing to the log');
      // a new link to the same file counts its own uses (each link issued is its own, even within one second)
      const [a, b] = await Promise.all([0, 1].map(() => stack.request('GET', `/entity/${person.id}/file/${fileId}/presigned-url`, { key })));
      assert.notEqual(new URL(a!.body.url).pathname, new URL(b!.body.url).pathname);
      assert.equal((await fetch(`${stack.url}${new URL(a!.body.url).pathname}`)).status, 200);
    });
  });

  describe('the hosted SDK and the provider callback', () => {
    it('sdk_token.issued names the token by its SHA-256', async () => {
      const person = await entity('INDIVIDUAL');
      const res = await stack.request('POST', `/entity/${person.id}/kyc`, { key });
      assert.equal(res.status, 200, res.text);
      const e = await one('sdk_token.issued', (x) => x.entityId === person.id);
      byRequest(e, res.headers.get('x-request-id'));
      assert.deepEqual(
        [e.subjectType, e.subjectId, e.details],
        ['sdk_token', sha256(res.body.sdkToken), { provider: 'sumsub', tokenSha256: sha256(res.body.sdkToken), memberOf: null }],
      );
      const waiting = await one('verification.stage', (x) => x.entityId === person.id);
      assert.deepEqual([waiting.details.path, waiting.details.stage], ['hosted-sdk', 'WAITING_FOR_PERSON']);
    });

    it('sandbox.review_requested by the key; the callback acts as the provider; the decision is the run’s, its outcome nowhere', async () => {
      const person = await entity('INDIVIDUAL');
      const res = await stack.request('POST', `/sandbox/entity/${person.id}/kyc/complete`, {
        key,
        json: {
          reviewAnswer: 'RED',
          rejectLabels: ['FORGERY'],
          reviewRejectType: 'FINAL',
          moderationComment: COMMENT,
          person: { firstName: FIRST, lastName: LAST, idDocument: { type: 'PASSPORT', country: 'GBR', number: DOC } },
        },
      });
      assert.equal(res.status, 202, res.text);
      byRequest(await one('sandbox.review_requested', (x) => x.entityId === person.id), res.headers.get('x-request-id'));
      // (the provider may call back more than once about a review: each callback is its own entry)
      const [callback] = await awaitEntries('provider_callback.received', (x) => x.entityId === person.id);
      assert.deepEqual([callback!.actorType, callback!.actorId, callback!.runId], ['provider_callback', 'sumsub', null]);
      assert.match(callback!.requestId ?? '', /./, 'the callback request’s id');
      assert.equal(callback!.details.type, 'applicantReviewed');
      const decided = await one('decision.recorded', (x) => x.entityId === person.id);
      byWorkflow(decided, personVerificationWorkflowId(person.id));
      const account = await kycAccountOf(person.id);
      assert.equal(account.moderation_comment, COMMENT, 'the comment is kept with the decision');
      assert.deepEqual([decided.details.path, decided.details.source, decided.details.decisionSha256], ['hosted-sdk', 'hosted-sdk', storedHash(account)]);
      assert.equal(decided.details.applicantId, callback!.details.applicantId);
    });
  });

  describe('universal KYB', () => {
    it('profile saved (owners created and declared, one removed), files submitted and retired, submitted, decided by its run', async () => {
      const firm = await entity('BUSINESS');
      const owner = (externalId: string) => ({
        externalId,
        firstName: OWNER_FIRST,
        lastName: LAST,
        dob: '1980-12-10',
        nationality: 'GBR',
        ownershipPercentage: 40,
      });
      const [keptOwner, leftOwner] = [ext('owner'), ext('owner')];
      const business = { legalName: `${LAST} Trading Ltd`, registrationNumber: '12345678', country: 'GBR', incorporationDate: '2015-06-01' };
      const created = await stack.request('POST', '/ukyb', {
        key,
        json: {
          entityId: firm.id,
          business: { ...business, address: { country: 'GBR', postCode: 'EC1A 1BB', street: 'King Street', town: 'London' } },
          ubos: [owner(keptOwner), owner(leftOwner)],
        },
      });
      assert.equal(created.status, 201, created.text);
      const ubos = created.body.ubos as { entityId: string; externalId: string }[];
      const [keptId, leftId] = [ubos[0]!.entityId, ubos[1]!.entityId];
      const saved = await one('kyb.profile_saved', (x) => x.entityId === firm.id);
      byRequest(saved, created.headers.get('x-request-id'));
      assert.deepEqual([saved.details.mode, saved.details.owners], ['create', 2]);
      assert.match(String(saved.details.profileHmac), /^[0-9a-f]{64}$/);
      for (const [id, externalId] of [
        [keptId, keptOwner],
        [leftId, leftOwner],
      ] as const) {
        const c = await one('entity.created', (x) => x.entityId === id);
        assert.deepEqual(c.details, { externalIdHmac: await hmacOf(id, externalId), type: 'INDIVIDUAL' });
      }
      assert.deepEqual((await awaitEntries('member.declared', (x) => x.entityId === firm.id, 2)).map((x) => x.subjectId).sort(), [keptId, leftId].sort());
      const changed = await stack.request('PATCH', '/ukyb', { key, json: { entityId: firm.id, business: { tradingName: 'Acme' }, ubos: [owner(keptOwner)] } });
      assert.equal(changed.status, 200, changed.text);
      const removed = await one('member.removed', (x) => x.entityId === firm.id);
      byRequest(removed, changed.headers.get('x-request-id'));
      assert.equal(removed.subjectId, leftId);
      assert.equal((await entries(businessId, 'member.declared')).filter((x) => x.entityId === firm.id).length, 2, 'the owner kept is not declared again');

      const documents = (fields: Record<string, string>, bytes = FILES.pdf) =>
        stack.request('POST', '/ukyb/documents', { key, form: documentsForm(fields, [{ bytes, name: 'doc.pdf' }]) });
      for (const slug of REQUIRED_KYB) assert.equal((await documents({ entityId: firm.id, requirementSlug: slug })).status, 201);
      const oldPassport = await documents({ entityId: firm.id, memberId: keptId, documentType: 'PASSPORT' }, FILES.png);
      assert.equal(oldPassport.status, 201, oldPassport.text);
      const newPassport = await documents({ entityId: firm.id, memberId: keptId, documentType: 'PASSPORT' });
      assert.equal(newPassport.status, 201, newPassport.text);
      const [oldFile, newFile] = (
        await stack.db.query<{ id: string }>("SELECT id FROM files WHERE entity_id = $1 AND slug = 'ukyb-owner-document' ORDER BY uploaded_at", [keptId])
      ).map((r) => r.id);
      const retired = await one('file.retired', (x) => x.subjectId === oldFile);
      byRequest(retired, newPassport.headers.get('x-request-id'));
      assert.deepEqual([retired.entityId, retired.details], [keptId, { slug: 'ukyb-owner-document', documentType: 'PASSPORT' }]);
      const passport = await one('file.submitted', (x) => x.subjectId === newFile);
      assert.deepEqual([passport.entityId, passport.details.documentType, passport.details.sha256], [keptId, 'PASSPORT', sha256(FILES.pdf)]);

      const submitted = await stack.request('POST', '/ukyb/submit', { key, json: { entityId: firm.id } });
      assert.equal(submitted.status, 202, submitted.text);
      const opened = await one('kyb.submitted', (x) => x.entityId === firm.id);
      byRequest(opened, submitted.headers.get('x-request-id'));
      const kybSubmission = opened.subjectId!;
      assert.deepEqual(opened.details, { submissionId: kybSubmission, owners: 1 });
      const verify = await stack.request('POST', `/sandbox/entity/${firm.id}/kyc/complete?memberId=${keptId}`, { key, json: { reviewAnswer: 'GREEN' } });
      assert.equal(verify.status, 202, verify.text);
      const decided = await one('decision.recorded', (x) => x.entityId === firm.id);
      byWorkflow(decided, universalKybWorkflowId(kybSubmission));
      const [kept] = await stack.db.query<{ id: string; nonce: string }>('SELECT id, nonce FROM record_decisions WHERE submission_id = $1', [kybSubmission]);
      assert.deepEqual(
        [decided.subjectType, decided.subjectId, decided.details.path, decided.details.sourceRef],
        ['decision', kept!.id, 'universal-kyb', kybSubmission],
      );
      assert.match(kept!.nonce, /^[0-9a-f]{64}$/, 'the hash is salted with a nonce kept beside the decision');
    });
  });

  describe('token sharing', () => {
    it('batch.uploaded, share.failed by its run, batch.retried, the batch row’s decision; batch.canceled', async () => {
      const [a, b] = [ext('row'), ext('row')];
      await createEntities(stack, key, [a, b]);
      const tokens = [await donor.token(), await donor.token()];
      const missing = ext('missing');
      const csv = csvOf('externalId,shareToken', [
        [a, tokens[0]!],
        [missing, 'tok-missing'],
      ]);
      await fetch(`${stack.sim!.url}/_sim/faults`, { method: 'PUT', body: JSON.stringify({ errorRate: 1, pathPattern: 'reusableIdentity' }) });
      let batchId: string;
      try {
        const res = await upload(stack, key, csv);
        assert.equal(res.status, 201, res.text);
        batchId = res.body.batchId;
        const uploaded = await one('batch.uploaded', (x) => x.subjectId === batchId);
        byRequest(uploaded, res.headers.get('x-request-id'));
        assert.deepEqual([uploaded.details.sha256, uploaded.details.rows], [sha256(csv), 2]);
        await waitForBatch(stack, key, batchId);
      } finally {
        await fetch(`${stack.sim!.url}/_sim/faults`, { method: 'PUT', body: '{}' });
      }
      const failed = await awaitEntries('share.failed', (x) => x.subjectId === batchId, 2);
      for (const f of failed) byWorkflow(f, batchWorkflowId(batchId));
      assert.deepEqual(failed.map((f) => [f.details.rowNumber, f.details.errorCode, f.details.retryable]).sort(), [
        [2, 'PROVIDER_UNAVAILABLE', true],
        [3, 'ENTITY_NOT_FOUND', false],
      ]);
      const retry = await stack.request('POST', `/entity/kyc/import/batch/${batchId}/retry`, { key });
      assert.equal(retry.status, 202, retry.text);
      const retried = await one('batch.retried', (x) => x.subjectId === batchId);
      byRequest(retried, retry.headers.get('x-request-id'));
      assert.deepEqual(retried.details, { rows: 1, run: 2 });
      await waitForBatch(stack, key, batchId);
      const [entityA] = await stack.db.query<{ id: string }>('SELECT id FROM entities WHERE business_id = $1 AND external_id = $2', [businessId, a]);
      const decided = await one('decision.recorded', (x) => x.entityId === entityA!.id);
      byWorkflow(decided, batchWorkflowId(batchId, 2));
      assert.deepEqual([decided.details.source, decided.details.sourceRef], ['batch', `vouch-batch-${batchId}-2`]);
      const started = (await entries(businessId, 'verification.stage')).filter((x) => x.entityId === entityA!.id && x.details.stage === 'STARTED');
      assert.equal(started.length, 1, 'STARTED once, though two runs sent the import');

      await fetch(`${stack.sim!.url}/_sim/faults`, { method: 'PUT', body: JSON.stringify({ latencyMs: 2000, pathPattern: 'reusableIdentity' }) });
      try {
        const slow = await upload(stack, key, csvOf('externalId,shareToken', [[b, tokens[1]!]]));
        const cancel = await stack.request('POST', `/entity/kyc/import/batch/${slow.body.batchId}/cancel`, { key });
        assert.equal(cancel.status, 200, cancel.text);
        byRequest(await one('batch.canceled', (x) => x.subjectId === slow.body.batchId), cancel.headers.get('x-request-id'));
        const again = await stack.request('POST', `/entity/kyc/import/batch/${slow.body.batchId}/cancel`, { key });
        assert.equal(again.status, 409);
        assert.equal((await entries(businessId, 'batch.canceled')).length, 1, 'a cancel that changed nothing is no batch.canceled');
      } finally {
        await fetch(`${stack.sim!.url}/_sim/faults`, { method: 'PUT', body: '{}' });
      }
    });

    it('sync_import.requested by the key, share.failed by its run with the request id', async () => {
      const externalId = ext('sync');
      await createEntities(stack, key, [externalId]);
      const expired = await donor.token('complete', 1);
      await new Promise((r) => setTimeout(r, 1100));
      const res = await stack.request('POST', '/entity/kyc/import/sync', { key, json: { externalId, shareToken: expired } });
      assert.equal(res.status, 400, res.text);
      const requestId = res.body.requestId as string;
      const requested = await one('sync_import.requested', (x) => x.subjectId === requestId);
      byRequest(requested, res.headers.get('x-request-id'));
      assert.equal(requested.details.requestId, requestId);
      const failed = await one('share.failed', (x) => x.subjectId === requestId);
      assert.deepEqual([failed.actorType, failed.details.requestId, failed.details.retryable], ['workflow', requestId, false]);
      assert.ok(String(failed.details.errorCode).length > 0);
      const refused = await one('request.refused', (x) => x.requestId === res.headers.get('x-request-id'));
      assert.equal(refused.outcome, res.body.code);
    });
  });

  it('event.redelivery_requested: one entry per request, naming the event and how many deliveries went back', async () => {
    const [event] = await stack.db.query<{ id: string; entity_id: string }>(
      "SELECT e.id, e.entity_id FROM events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.business_id = $1 AND d.status = 'delivered' LIMIT 1",
      [businessId],
    );
    assert.ok(event, 'a delivered event');
    const res = await stack.request('POST', `/events/${event.id}/redeliver`, { key });
    assert.equal(res.status, 202, res.text);
    const e = await one('event.redelivery_requested', (x) => x.requestId === res.headers.get('x-request-id'));
    byRequest(e, res.headers.get('x-request-id'));
    assert.deepEqual(
      [e.entityId, e.subjectType, e.subjectId, e.details],
      [event.entity_id, 'event', event.id, { eventId: event.id, deliveries: res.body.redeliveries }],
    );
  });

  describe('GET /audit-log', () => {
    const page = (query: string, k = key) => stack.request('GET', `/audit-log${query}`, { key: k, headers: V });

    it('pages the business’s entries oldest first, as stored', async () => {
      const all = await entries(businessId);
      const first = await page('?page=1&limit=5');
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.meta.totalItems >= all.length, true);
      const second = await page('?page=2&limit=5');
      assert.deepEqual(
        [...first.body.items, ...second.body.items].map((x: any) => x.seq),
        all.slice(0, 10).map((x) => x.seq),
      );
      assert.deepEqual(
        first.body.items.slice(0, 2).map((x: any) => x.action),
        ['business.created', 'api_key.created'],
      );
      assert.equal(first.body.items[1].subject.id, keyId);
    });

    it('lets the client check the chain itself, by the documented rule, from the pages alone', async () => {
      const items: any[] = [];
      for (let p = 1; ; p++) {
        const res = await page(`?page=${p}&limit=100`);
        items.push(...res.body.items);
        if (p >= res.body.meta.totalPages) break;
      }
      let prevHash = '0'.repeat(64);
      for (const x of items) {
        const covered = {
          businessId,
          seq: x.seq,
          id: x.id,
          occurredAt: x.occurredAt,
          actorType: x.actor.type,
          actorId: x.actor.id,
          runId: x.actor.runId,
          requestId: x.requestId,
          action: x.action,
          entityId: x.entityId ?? null,
          subjectType: x.subject?.type ?? null,
          subjectId: x.subject?.id ?? null,
          details: x.details,
          outcome: x.outcome,
        };
        assert.equal(x.prevHash, prevHash, `entry ${x.seq} names the one before`);
        assert.equal(
          createHash('sha256')
            .update(`${prevHash}\n${canonicalize(covered)}`)
            .digest('hex'),
          x.hash,
          `entry ${x.seq}`,
        );
        prevHash = x.hash;
      }
      assert.ok(items.length > 20);
    });

    it('filters by entity, action and time; a bad filter answers 400 naming it', async () => {
      const [created] = await entries(businessId, 'entity.created');
      const byEntity = await page(`?entityId=${created!.entityId}&limit=100`);
      assert.equal(byEntity.status, 200, byEntity.text);
      assert.ok(byEntity.body.items.length >= 1);
      for (const x of byEntity.body.items) assert.equal(x.entityId, created!.entityId);
      const byAction = await page('?action=decision.recorded&limit=100');
      assert.deepEqual(
        byAction.body.items.map((x: any) => x.seq),
        (await entries(businessId, 'decision.recorded')).map((x) => x.seq),
      );
      const all = await entries(businessId);
      const middle = all[Math.floor(all.length / 2)]!.occurredAt;
      const before = (await page(`?to=${encodeURIComponent(middle)}&limit=1`)).body.meta.totalItems;
      const since = (await page(`?from=${encodeURIComponent(middle)}&limit=1`)).body.meta.totalItems;
      assert.equal(before, all.filter((x) => x.occurredAt < middle).length);
      assert.ok(since >= all.filter((x) => x.occurredAt >= middle).length);
      assert.ok(before > 0 && since > 0);
      for (const [query, parameter] of [
        ['?action=entity.exploded', 'action'],
        ['?entityId=not-a-uuid', 'entityId'],
        ['?from=yesterday', 'from'],
        ['?to=2026-13-45', 'to'],
      ]) {
        const bad = await page(query!);
        assert.equal(bad.status, 400, `${query}: ${bad.text}`);
        assert.deepEqual([bad.body.code, bad.body.parameter], ['0000000300', parameter]);
      }
    });

    it('shows a business only its own entries: another business’s entity filters to an empty page', async () => {
      const [created] = await entries(businessId, 'entity.created');
      const theirs = await page(`?entityId=${created!.entityId}`, otherKey);
      assert.equal(theirs.status, 200, theirs.text);
      assert.deepEqual([theirs.body.items, theirs.body.meta.totalItems], [[], 0]);
      await entity('INDIVIDUAL', ext('other'), undefined, otherKey);
      const own = await page('?limit=100', otherKey);
      assert.deepEqual(
        own.body.items.map((x: any) => x.seq),
        (await entries(otherBusinessId)).map((x) => x.seq),
      );
      assert.deepEqual(
        own.body.items.map((x: any) => x.action),
        ['business.created', 'api_key.created', 'entity.created'],
      );
    });
  });

  it('keeps no personal data and no outcome: names, document number, comments and externalIds appear nowhere in the audit log', async () => {
    const rows = (await stack.db.query<{ row: string }>('SELECT a::text AS row FROM audit_log a UNION ALL SELECT p::text FROM audit_pending p')).map(
      (r) => r.row,
    );
    assert.ok(rows.length > 50, `${rows.length} entries searched`);
    // the values are really there in the product's own tables (so the search could find them)
    const kept = (await stack.db.query<{ row: string }>('SELECT p::text AS row FROM kyc_persons p')).map((r) => r.row).join('\n');
    assert.ok(kept.includes(FIRST) && kept.includes(DOC), 'the person data is kept where it belongs');
    for (const needle of [FIRST, LAST, DOC, OWNER_FIRST, COMMENT, 'FORGERY', 'APPROVED', 'REJECTED', ...externalIds]) {
      const hits = rows.filter((r) => r.includes(needle));
      assert.deepEqual(hits, [], `${needle} is in the audit log`);
    }
  });

  it('vouch audit verify finds every chain intact', async () => {
    const written = (await entries(businessId)).length;
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        ['cli/vouch.ts', 'audit', 'verify', '--as', 'audit-test'],
        { cwd: root, env: { ...process.env, DATABASE_URL: stack.config.database.url } },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
    assert.equal(out.code, 0, out.stderr);
    const report = JSON.parse(out.stdout);
    assert.equal(report.intact, true);
    const mine = report.chains.find((c: any) => c.businessId === businessId);
    assert.ok(mine.entries >= written, `${mine.entries} entries checked, ${written} written before`);
    assert.equal(mine.head.seq, mine.entries);
  });
});
