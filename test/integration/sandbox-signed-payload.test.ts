// The sandbox control and signed payloads, over HTTP against real workers and the simulator: the
// sandbox plays the person and the reviewer, the provider's real callback reaches the person's
// workflow, the signed webhook tells the client; then the verified person's signed payload is
// read, checked by us and by openssl alone, and refused when anything about it changes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../api/app.ts';
import { signPayload } from '../../domain/signed-payload.ts';
import { publicKeyOf } from '../../domain/webhook-signature.ts';
import { verifyWebhook } from '../../receiver/verify-webhook.ts';
import { createLogger } from '../../runtime/logger.ts';
import { donorAt } from '../helpers/imports.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, testKeyRing, testKeyRings, type Stack } from '../helpers/stack.ts';
import * as world from '../helpers/world.ts';

describe('sandbox control and signed payloads', () => {
  let stack: Stack;
  let key: string;
  let otherKey: string;
  let receiver: Receiver;
  let n = 0;

  before(async () => {
    stack = await startStack({ workers: true, providerCallbacks: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true' } });
    receiver = await startReceiver();
    ({ apiKey: key } = await stack.newBusiness({ name: 'Sandbox' }));
    ({ apiKey: otherKey } = await stack.newBusiness({ name: 'Other' }));
    for (const k of [key, otherKey]) {
      await world.subscribe(stack, k, receiver.url);
    }
  });
  after(async () => {
    await receiver.close();
    await stack.close();
  });

  const entity = (type: 'INDIVIDUAL' | 'BUSINESS' = 'INDIVIDUAL', k = key, requirements?: unknown[]) =>
    world.entity(stack, k, `sbx-${type}-${n++}`, type, requirements);
  const complete = (entityId: string, json: unknown, k = key, query = '') =>
    stack.request('POST', `/sandbox/entity/${entityId}/kyc/complete${query}`, { key: k, json });
  const decisions = async (entityId: string, count: number) => {
    const mine = () => receiver.received.filter((r) => JSON.parse(r.body.toString()).data.entityId === entityId);
    const got = await world.eventually(`${count} decisions for ${entityId}`, () => mine().length >= count && mine(), { everyMs: 100 });
    return got.map((r) => ({ raw: r, data: JSON.parse(r.body.toString()).data }));
  };
  const approved = async () => {
    const person = await entity();
    assert.equal((await complete(person, { reviewAnswer: 'GREEN' })).status, 202);
    const [d] = await decisions(person, 1);
    assert.equal(d!.data.status, 'APPROVED');
    return person;
  };
  const payloadOf = async (entityId: string, k = key, query = '') => {
    const res = await stack.request('GET', `/entity/${entityId}/signed-payload${query}`, { key: k });
    assert.equal(res.status, 200, res.text);
    return res.body as Record<string, any>;
  };
  const verify = (json: unknown, k = key) => stack.request('POST', '/entity/verify-signed-payload', { key: k, json });

  describe('sandbox control', () => {
    it('plays a complete adult and a GREEN review through the real callback path to a signed APPROVED webhook', async () => {
      const person = await entity();
      const res = await complete(person, { reviewAnswer: 'GREEN' });
      assert.equal(res.status, 202, res.text);
      assert.equal(res.body.entityId, person);
      assert.equal(res.body.applicantCreated, true);
      const [d] = await decisions(person, 1);
      assert.equal(d!.data.status, 'APPROVED');
      assert.match(d!.data.message, /hosted SDK/);
      assert.equal(verifyWebhook(d!.raw.body, d!.raw.headers['vouch-signature'], testKeyRing().map(publicKeyOf)), true);
      const sent = stack.sim!.state.stats.webhooks.filter((w) => w.applicantId === res.body.applicantId);
      assert.deepEqual(
        sent.map((w) => [w.type, w.status]),
        [['applicantReviewed', 200]],
        "the provider's callback reached our endpoint",
      );
      assert.equal((await stack.request('GET', `/entity/${person}`, { key })).body.verifiedBy, 'sumsub');
    });

    it('turns RED with labels into REJECTED, and a later GREEN for the same person (applicant reused) into APPROVED', async () => {
      const person = await entity();
      const red = await complete(person, {
        reviewAnswer: 'RED',
        rejectLabels: ['BAD_PROOF_OF_IDENTITY'],
        reviewRejectType: 'RETRY',
        moderationComment: 'Upload a readable passport.',
      });
      assert.equal(red.status, 202, red.text);
      const [first] = await decisions(person, 1);
      assert.deepEqual(
        [first!.data.status, first!.data.rejectLabels, first!.data.reviewRejectType, first!.data.moderationComment],
        ['REJECTED', ['BAD_PROOF_OF_IDENTITY'], 'RETRY', 'Upload a readable passport.'],
      );
      const green = await complete(person, { reviewAnswer: 'GREEN' });
      assert.equal(green.status, 202, green.text);
      assert.equal(green.body.applicantCreated, false);
      assert.equal(green.body.applicantId, red.body.applicantId);
      const all = await decisions(person, 2);
      assert.deepEqual(
        all.map((x) => x.data.status),
        ['REJECTED', 'APPROVED'],
      );
    });

    it('reaches the reliance rules through the test person: no address → REJECTED MISSING_ADDRESS although the review is GREEN', async () => {
      const person = await entity();
      assert.equal((await complete(person, { reviewAnswer: 'GREEN', person: { address: null } })).status, 202);
      const [d] = await decisions(person, 1);
      assert.deepEqual([d!.data.status, d!.data.rejectLabels], ['REJECTED', ['MISSING_ADDRESS']]);
    });

    it('verifies a declared member of a business entity with memberId', async () => {
      const member = await entity();
      const business = await entity('BUSINESS', key, [
        { requirementSlug: 'kyb-ubo-declaration', value: { members: [{ entityId: member, role: 'UBO', ownershipPercent: 60 }] } },
      ]);
      assert.equal((await complete(business, { reviewAnswer: 'GREEN' }, key, `?memberId=${member}`)).status, 202);
      const [d] = await decisions(member, 1);
      assert.equal(d!.data.status, 'APPROVED');
      const payload = await payloadOf(business, key, `?memberId=${member}`);
      assert.equal(payload.lastName, 'Sandbox');
    });

    it('refuses a test person for an applicant that already exists (409), and changes nothing', async () => {
      const person = await entity();
      assert.equal((await complete(person, { reviewAnswer: 'RED' })).status, 202);
      await decisions(person, 1);
      const res = await complete(person, { reviewAnswer: 'GREEN', person: { dob: '2015-01-01' } });
      assert.equal(res.status, 409, res.text);
      assert.deepEqual([res.body.code, res.body.parameter], ['0707000800', 'person']);
      await new Promise((r) => setTimeout(r, 500));
      assert.equal((await stack.db.query('SELECT 1 FROM events WHERE entity_id = $1', [person])).length, 1);
    });

    it('refuses what the request or the caller may not do, with the field named', async () => {
      const person = await entity();
      const cases: [unknown, string][] = [
        [{}, 'reviewAnswer'],
        [{ reviewAnswer: 'YELLOW' }, 'reviewAnswer'],
        [{ reviewAnswer: 'GREEN', rejectLabels: ['X'] }, 'reviewAnswer'],
        [{ reviewAnswer: 'GREEN', person: { dob: '1990-02-30' } }, 'person.dob'],
        [{ reviewAnswer: 'GREEN', person: { nationality: 'XXX' } }, 'person.nationality'],
        [{ reviewAnswer: 'GREEN', person: { idDocument: { type: 'PASSPORT', country: 'GBR' } } }, 'person.idDocument.number'],
        [{ reviewAnswer: 'GREEN', extra: 1 }, 'extra'],
      ];
      for (const [json, parameter] of cases) {
        const res = await complete(person, json);
        assert.equal(res.status, 400, `${JSON.stringify(json)}: ${res.text}`);
        assert.equal(res.body.parameter, parameter, JSON.stringify(json));
      }
      assert.equal((await complete(person, { reviewAnswer: 'GREEN' }, otherKey)).status, 404, "another business's entity");
      const { apiKey: unsubscribed } = await stack.newBusiness({ name: 'No webhook' });
      const theirs = await entity('INDIVIDUAL', unsubscribed);
      const res = await complete(theirs, { reviewAnswer: 'GREEN' }, unsubscribed);
      assert.equal(res.status, 409);
      assert.match(res.body.message, /account_status_change/);
      assert.equal((await stack.db.query('SELECT 1 FROM sandbox_reviews WHERE entity_id = ANY($1)', [[person, theirs]])).length, 0, 'nothing recorded');
    });

    it('does not exist outside the sandbox environment', async () => {
      const production = buildApp({
        config: { ...stack.config, environment: 'production' },
        db: stack.db,
        temporal: stack.temporal,
        log: createLogger('silent'),
        keys: testKeyRings(),
      });
      const server = production.listen(0, '127.0.0.1');
      try {
        await new Promise((r) => server.once('listening', r));
        const { port } = server.address() as { port: number };
        const person = await entity();
        const res = await fetch(`http://127.0.0.1:${port}/sandbox/entity/${person}/kyc/complete`, {
          method: 'POST',
          headers: { 'x-vouch-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ reviewAnswer: 'GREEN' }),
        });
        assert.equal(res.status, 404);
        const doc = (await (await fetch(`http://127.0.0.1:${port}/openapi.json`)).json()) as { paths: Record<string, unknown> };
        assert.equal(
          Object.keys(doc.paths).some((p) => p.startsWith('/sandbox')),
          false,
        );
      } finally {
        server.close();
      }
    });
  });

  describe('signed payloads', () => {
    it("signs an approved person's data with every field; we and openssl alone verify it", async () => {
      const person = await approved();
      const payload = await payloadOf(person);
      assert.equal(payload.firstName, 'Alex');
      assert.equal(payload.lastName, 'Sandbox');
      assert.match(payload.dob, /^\d{4}-\d{2}-\d{2}$/);
      assert.deepEqual(Object.keys(payload.residentialAddress).sort(), ['buildingNumber', 'country', 'postCode', 'street', 'town']);
      assert.equal(payload.idDocumentType, 'PASSPORT');
      assert.match(payload.idDocumentNumber, /^SBX/);
      assert.ok(Date.parse(payload.expiresAt) > Date.now());
      assert.deepEqual((await verify(payload)).body, { valid: true });

      // offline, as docs/api/verifying-a-person.md shows: the key by its id, the canonical form with jq, openssl
      const keys = (await stack.request('GET', '/signed-payload-keys', { key })).body;
      assert.equal(keys.algorithm, 'Ed25519');
      const pem = keys.keys.find((k: any) => k.keyId === payload.keyId).publicKeyPem;
      const dir = mkdtempSync(path.join(tmpdir(), 'vouch-payload-'));
      try {
        writeFileSync(path.join(dir, 'payload.json'), JSON.stringify(payload));
        writeFileSync(path.join(dir, 'key.pem'), pem);
        const run = (cmd: string) => execFileSync('bash', ['-c', cmd], { cwd: dir, stdio: 'pipe' }).toString();
        run("jq -cjS 'del(.signature)' payload.json > canonical.json && jq -r .signature payload.json | base64 -d > signature.bin");
        assert.match(run('openssl pkeyutl -verify -pubin -inkey key.pem -rawin -in canonical.json -sigfile signature.bin'), /Signature Verified Successfully/);
        run(`jq -cjS 'del(.signature) | .lastName = "Other"' payload.json > changed.json`);
        assert.throws(
          () => run('openssl pkeyutl -verify -pubin -inkey key.pem -rawin -in changed.json -sigfile signature.bin'),
          'openssl refuses a changed field',
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('answers valid: false for a changed or added field, a changed signature or key id, and a past expiresAt', async () => {
      const payload = await payloadOf(await approved());
      const changed: Record<string, unknown>[] = [
        { ...payload, idDocumentNumber: `${payload.idDocumentNumber}1` },
        { ...payload, residentialAddress: { ...payload.residentialAddress, postCode: 'SW1A 1AA' } },
        { ...payload, dob: '1970-01-01' },
        { ...payload, expiresAt: new Date(Date.parse(payload.expiresAt) + 86_400_000).toISOString() },
        { ...payload, nationality: 'GBR' },
        { ...payload, signature: Buffer.from(Buffer.from(payload.signature, 'base64').map((b, i) => (i === 0 ? b ^ 1 : b))).toString('base64') },
        { ...payload, keyId: 'sandbox-payload-unknown' },
      ];
      for (const c of changed) {
        const res = await verify(c);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { valid: false }, JSON.stringify(c));
      }
      // signed by our key, but its time is over
      const ring = testKeyRings().signedPayloads;
      const person = {
        firstName: 'Alex',
        lastName: 'Sandbox',
        dob: '1990-01-01',
        residentialAddress: payload.residentialAddress,
        idDocument: { type: 'PASSPORT', number: 'P1', validUntil: null },
      };
      const old = signPayload(person, ring, new Date(Date.now() - 6 * 3600_000), 3600);
      assert.ok(Date.parse(old.expiresAt) < Date.now());
      assert.deepEqual((await verify(old)).body, { valid: false });
      const fresh = signPayload(person, ring, new Date(), 3600);
      assert.deepEqual((await verify(fresh)).body, { valid: true }, 'the same, unexpired, is valid');
    });

    it('verifies a payload sent with only the fields the interface names (keyId left out), and still refuses a changed one', async () => {
      const { keyId, ...spec } = await payloadOf(await approved());
      assert.ok(keyId, 'the read names its key');
      assert.deepEqual((await verify(spec)).body, { valid: true });
      assert.deepEqual((await verify({ ...spec, lastName: `${spec.lastName}x` })).body, { valid: false }, 'a changed field');
      assert.deepEqual((await verify({ ...spec, keyId: 'sandbox-payload-unknown' })).body, { valid: false }, 'a key id that is not ours');
      // signed by our key, but its time is over
      const ring = testKeyRings().signedPayloads;
      const person = {
        firstName: 'Alex',
        lastName: 'Sandbox',
        dob: '1990-01-01',
        residentialAddress: spec.residentialAddress,
        idDocument: { type: 'PASSPORT', number: 'P1', validUntil: null },
      };
      const { keyId: _k, ...old } = signPayload(person, ring, new Date(Date.now() - 6 * 3600_000), 3600);
      assert.deepEqual((await verify(old)).body, { valid: false }, 'expired');
    });

    it('never signs past the identity document: expiresAt is the start of the day after its expiry when that comes first', async () => {
      const person = await entity();
      const soon = new Date().toISOString().slice(0, 10); // the document's last valid day is today: before the 24-hour TTL ends
      const res = await complete(person, {
        reviewAnswer: 'GREEN',
        person: { idDocument: { type: 'ID_CARD', country: 'DEU', number: 'L01X00T47', validUntil: soon } },
      });
      assert.equal(res.status, 202, res.text);
      assert.equal((await decisions(person, 1))[0]!.data.status, 'APPROVED');
      const payload = await payloadOf(person);
      assert.equal(payload.idDocumentType, 'ID_CARD');
      assert.equal(payload.expiresAt, new Date(Date.parse(`${soon}T00:00:00.000Z`) + 86_400_000).toISOString());
    });

    it('judges any JSON body: one that is not a signed payload of ours is not valid; only a body that is not JSON is 400', async () => {
      const payload = await payloadOf(await approved());
      const notValid = async (body: unknown, why: string) => {
        const res = await verify(body);
        assert.deepEqual([res.status, res.body], [200, { valid: false }], `${why}: ${res.text}`);
      };
      for (const field of ['firstName', 'residentialAddress', 'expiresAt', 'signature']) {
        const { [field]: _gone, ...rest } = payload;
        await notValid(rest, `without ${field}`);
      }
      const { street: _s, ...address } = payload.residentialAddress;
      await notValid({ ...payload, residentialAddress: address }, 'an address without its street');
      await notValid({ ...payload, expiresAt: 'tomorrow' }, 'expiresAt not a date-time');
      await notValid({ ...payload, signature: 'not base64!' }, 'a signature not Base64');
      await notValid({ ...payload, signature: 12345 }, 'a signature of another type');
      await notValid({ ...payload, keyId: ['sandbox-payload-1'] }, 'a keyId of another type');
      for (const body of [[], 'a string', 42, null]) await notValid(body, `the JSON ${JSON.stringify(body)}`);
      assert.deepEqual((await verify(payload)).body, { valid: true }, 'the payload itself stays valid');
      const raw = await stack.request('POST', '/entity/verify-signed-payload', {
        key,
        body: '{"firstName": ',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(raw.status, 400, raw.text);
    });

    it('is read for a person verified by token sharing too', async () => {
      const donor = donorAt(stack);
      const externalId = `shared-${n++}`;
      const created = await stack.request('POST', '/entity', { key, json: { externalId, type: 'INDIVIDUAL' } });
      const res = await stack.request('POST', '/entity/kyc/import/sync', { key, json: { externalId, shareToken: await donor.token('complete') } });
      assert.equal(res.status, 200, res.text);
      const payload = await payloadOf(created.body.id);
      assert.equal(payload.idDocumentType, 'PASSPORT');
      assert.equal(payload.residentialAddress.town, 'London');
      assert.deepEqual((await verify(payload)).body, { valid: true });
    });

    it('refuses an unverified or rejected person (409), a business without memberId (400), and another business (404)', async () => {
      const fresh = await entity();
      const none = await stack.request('GET', `/entity/${fresh}/signed-payload`, { key });
      assert.equal(none.status, 409);
      assert.equal(none.body.code, '0707000700');
      assert.match(none.body.message, /no approved verification to sign/);
      const rejected = await entity();
      await complete(rejected, { reviewAnswer: 'RED', rejectLabels: ['FORGERY'], reviewRejectType: 'FINAL' });
      await decisions(rejected, 1);
      const res = await stack.request('GET', `/entity/${rejected}/signed-payload`, { key });
      assert.equal(res.status, 409);
      assert.equal(
        res.body.message,
        none.body.message.replace(fresh, rejected),
        'the same answer as for a person not yet decided: no hint of the decision (1.4)',
      );
      assert.doesNotMatch(res.body.message, /REJECTED|rejected/);
      const business = await entity('BUSINESS');
      assert.equal((await stack.request('GET', `/entity/${business}/signed-payload`, { key })).body.parameter, 'memberId');
      const mine = await approved();
      assert.equal((await stack.request('GET', `/entity/${mine}/signed-payload`, { key: otherKey })).status, 404);
    });

    it('keeps an earlier payload verifiable until it expires after a later rejection, but signs no new one', async () => {
      const person = await approved();
      const payload = await payloadOf(person);
      await complete(person, { reviewAnswer: 'RED', rejectLabels: ['FRAUDULENT_PATTERNS'], reviewRejectType: 'FINAL' });
      await decisions(person, 2);
      assert.equal((await stack.request('GET', `/entity/${person}/signed-payload`, { key })).status, 409);
      assert.deepEqual((await verify(payload)).body, { valid: true }, 'what was signed stays verifiable until expiresAt');
    });
  });
});
