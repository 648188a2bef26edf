// The Sumsub client against the simulator over real HTTP: signatures, every error class, token
// expiry and single use, rate limits, faults, webhooks, and the activity wrappers.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { providerCall } from '../../activities/provider.ts';
import type { IdentityProvider, ImportApplicantInput } from '../../provider/types.ts';
import { ProviderError, type ProviderErrorKind } from '../../provider/errors.ts';
import { signRequest, webhookDigest } from '../../provider/sumsub/signing.ts';
import { startSimWorld, type SimWorld } from '../helpers/sim.ts';
import { eventually } from '../helpers/eventually.ts';

async function rejectsWith(promise: Promise<unknown>, kind: ProviderErrorKind): Promise<ProviderError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ProviderError, `expected a ProviderError, got ${err}`);
    assert.equal(err.kind, kind, `${err.kind}: ${err.message} (${err.detail})`);
    return err;
  }
  assert.fail(`expected ${kind}, but the call succeeded`);
}

describe('request signing', () => {
  it('matches an HMAC-SHA256 computed by openssl over ts + METHOD + path + body', () => {
    const secret = 'test-secret-key';
    const body = '{"applicantId":"abc","forClientId":"vouch"}';
    const ours = signRequest(secret, 1_700_000_000, 'post', '/resources/accessTokens/shareToken?x=1', body);
    const message = `1700000000POST/resources/accessTokens/shareToken?x=1${body}`;
    const theirs = execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret], { input: message }).toString().trim().split(' ').pop();
    assert.equal(ours, theirs);
    assert.match(ours, /^[0-9a-f]{64}$/);
  });

  it('matches a fixed vector (GET, no body)', () => {
    assert.equal(
      signRequest('key', '1', 'GET', '/x'),
      execFileSync('openssl', ['dgst', '-sha256', '-hmac', 'key'], { input: '1GET/x' }).toString().trim().split(' ').pop(),
    );
  });
});

describe('Sumsub client against the simulator', () => {
  let w: SimWorld;
  before(async () => {
    w = await startSimWorld();
  });
  after(() => w.close());
  afterEach(async () => {
    await w.admin('PUT', '/_sim/faults', {});
    await w.admin('PUT', '/_sim/clock', { offsetMs: 0 });
  });

  describe('signatures', () => {
    const raw = async (headers: Record<string, string>, body = '{"userId":"u1","levelName":"basic-kyc-level"}') => {
      const res = await fetch(`${w.sim.url}/resources/accessTokens/sdk`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      return { status: res.status, body: (await res.json()) as any };
    };
    const signed = (secret: string, ts: number, body: string) => ({
      'x-app-token': w.us.appToken,
      'x-app-access-ts': String(ts),
      'x-app-access-sig': signRequest(secret, ts, 'POST', '/resources/accessTokens/sdk', body),
    });
    const now = () => Math.floor(Date.now() / 1000);

    it('accepts a correctly signed request', async () => {
      const body = '{"userId":"u1","levelName":"basic-kyc-level"}';
      assert.equal((await raw(signed(w.us.secretKey, now(), body), body)).status, 200);
    });

    it('refuses a body changed after signing, a wrong secret, a stale timestamp and missing headers', async () => {
      const body = '{"userId":"u1","levelName":"basic-kyc-level"}';
      assert.equal((await raw(signed(w.us.secretKey, now(), body), body.replace('u1', 'u2'))).status, 401);
      assert.equal((await raw(signed('wrong', now(), body), body)).status, 401);
      assert.equal((await raw(signed(w.us.secretKey, now() - 3600, body), body)).status, 401);
      assert.equal((await raw({}, body)).status, 401);
    });

    it('classifies refused credentials as credentials, without the provider text in the message', async () => {
      const err = await rejectsWith(
        w.clientFor(w.us, { secretKey: 'not-our-secret' }).createSdkToken({ userId: 'u', levelName: 'basic-kyc-level' }),
        'credentials',
      );
      assert.equal(err.status, 401);
      assert.doesNotMatch(err.message, /signature mismatch/);
      assert.match(err.detail ?? '', /signature mismatch/);
      await rejectsWith(w.clientFor({ ...w.us, appToken: 'sbx:unknown' }).getApplicant('x'), 'credentials');
    });
  });

  describe('reusable KYC import', () => {
    it('imports a donor applicant into our account with its data and review', async () => {
      const { applicantId, token } = await w.shareToken('complete');
      const imported = await w.recipientApi.importApplicant({ shareToken: token, levelName: 'id-and-liveness' });
      assert.notEqual(imported.id, applicantId);
      assert.equal(imported.levelName, 'id-and-liveness');
      assert.equal(imported.review.answer, 'GREEN');
      assert.ok(imported.person.firstName && imported.person.dob && imported.documents.length === 1 && imported.addresses.length === 1);
      const read = await w.recipientApi.getApplicant(imported.id);
      assert.deepEqual(read, imported);
      assert.equal(w.sim.state.stats.imports[token]!.succeeded, 1);
    });

    it('applies the default level when none is given, and supports the older import endpoint', async () => {
      const { token } = await w.shareToken();
      assert.equal((await w.recipientApi.importApplicant({ shareToken: token })).levelName, w.us.defaultLevel);
      const legacy = w.clientFor(w.us, { legacyImport: true });
      const { token: t2 } = await w.shareToken();
      assert.equal((await legacy.importApplicant({ shareToken: t2, levelName: 'ignored-by-legacy' })).review.answer, 'GREEN');
    });

    it('is single-use: a second import of the same token is token_used', async () => {
      const { token } = await w.shareToken();
      await w.recipientApi.importApplicant({ shareToken: token });
      const err = await rejectsWith(w.recipientApi.importApplicant({ shareToken: token }), 'token_used');
      assert.equal(err.retryable, false);
    });

    it('expires 1,200 seconds after generation by default (simulator clock moved forward)', async () => {
      const { token } = await w.shareToken();
      await w.admin('PUT', '/_sim/clock', { advanceMs: 1_199_000 });
      const { token: t2 } = await w.shareToken();
      await w.admin('PUT', '/_sim/clock', { advanceMs: 2_000 });
      const err = await rejectsWith(w.recipientApi.importApplicant({ shareToken: token }), 'token_invalid');
      assert.match(err.message, /expired/);
      assert.equal((await w.recipientApi.importApplicant({ shareToken: t2 })).review.answer, 'GREEN', 'a younger token still works');
    });

    it('honours a custom ttl', async () => {
      const { token } = await w.shareToken('complete', 60);
      await w.admin('PUT', '/_sim/clock', { advanceMs: 61_000 });
      await rejectsWith(w.recipientApi.importApplicant({ shareToken: token }), 'token_invalid');
    });

    it('refuses a malformed token and a token minted for another client', async () => {
      await rejectsWith(w.recipientApi.importApplicant({ shareToken: 'not-a-token' }), 'token_invalid');
      const other = w.sim.state.addClient({ clientId: `other-${Date.now()}` });
      const [a] = await w.admin('POST', '/_sim/applicants', { clientId: w.donor.clientId, scenario: 'complete' });
      const { token } = await w.donorApi.createShareToken({ applicantId: a.id, forClientId: other.clientId });
      await rejectsWith(w.recipientApi.importApplicant({ shareToken: token }), 'token_invalid');
    });

    it('refuses a level not configured in our account (level_unknown) and leaves the token usable', async () => {
      const { token } = await w.shareToken();
      await rejectsWith(w.recipientApi.importApplicant({ shareToken: token, levelName: 'no-such-level' }), 'level_unknown');
      assert.equal((await w.recipientApi.importApplicant({ shareToken: token })).review.answer, 'GREEN');
    });

    it('refuses a donor applicant that is not approved (data_refused)', async () => {
      const { token } = await w.shareToken('donor-rejected');
      const err = await rejectsWith(w.recipientApi.importApplicant({ shareToken: token }), 'data_refused');
      assert.equal(err.providerCode, 10514);
    });

    it('imports the scenarios whose data is incomplete as they are, for our own rules to judge', async () => {
      for (const [scenario, check] of [
        ['missing-address', (a: any) => a.addresses.length === 0],
        ['missing-document', (a: any) => a.documents.length === 0],
        ['under-18', (a: any) => Number(a.person.dob.slice(0, 4)) > new Date().getUTCFullYear() - 18],
        ['expired-document', (a: any) => a.documents[0].validUntil < new Date().toISOString().slice(0, 10)],
      ] as const) {
        const { token } = await w.shareToken(scenario);
        assert.ok(check(await w.recipientApi.importApplicant({ shareToken: token })), scenario);
      }
    });
  });

  describe('other calls', () => {
    it('mints SDK tokens for a configured level and refuses an unknown one', async () => {
      const res = await w.recipientApi.createSdkToken({ userId: 'entity-1', levelName: 'basic-kyc-level' });
      assert.equal(res.userId, 'entity-1');
      assert.match(res.token, /^_act-sbx-/);
      await rejectsWith(w.recipientApi.createSdkToken({ userId: 'e', levelName: 'nope' }), 'level_unknown');
    });

    it("answers not_found for an unknown applicant or another client's applicant", async () => {
      await rejectsWith(w.recipientApi.getApplicant('0123456789abcdef01234567'), 'not_found');
      const [a] = await w.admin('POST', '/_sim/applicants', { clientId: w.donor.clientId, scenario: 'complete' });
      await rejectsWith(w.recipientApi.getApplicant(a.id), 'not_found');
    });
  });

  describe('limits and faults', () => {
    it('answers 429 above the per-client POST limit, classified rate_limited with Retry-After', async () => {
      const limited = w.sim.state.addClient({ clientId: `limited-${Date.now()}`, limits: { postPer5s: 3, getPer5s: 300 } });
      const api = w.clientFor(limited);
      for (let i = 0; i < 3; i++) await api.createSdkToken({ userId: `u${i}`, levelName: 'basic-kyc-level' });
      const err = await rejectsWith(api.createSdkToken({ userId: 'u4', levelName: 'basic-kyc-level' }), 'rate_limited');
      assert.equal(err.retryable, true);
      assert.ok(err.retryAfterMs! >= 1000 && err.retryAfterMs! <= 5000, String(err.retryAfterMs));
      await api.getApplicant('x').catch((e) => assert.equal(e.kind, 'not_found', 'GETs have their own budget'));
    });

    it('classifies a 500 as unavailable (retryable)', async () => {
      await w.admin('PUT', '/_sim/faults', { failNext: 1 });
      const err = await rejectsWith(w.recipientApi.getApplicant('x'), 'unavailable');
      assert.equal(err.retryable, true);
      assert.equal(err.status, 500);
    });

    it('classifies a request that gets no answer within the timeout as unavailable', async () => {
      await w.admin('PUT', '/_sim/faults', { timeoutNext: 1 });
      const err = await rejectsWith(w.clientFor(w.us, { timeoutMs: 300 }).getApplicant('x'), 'unavailable');
      assert.match(err.message, /timed out/);
    });

    it('classifies a refused connection as unavailable', async () => {
      const dead = w.clientFor(w.us, { baseUrl: 'http://127.0.0.1:1' });
      await rejectsWith(dead.getApplicant('x'), 'unavailable');
    });

    it('adds latency when asked', async () => {
      await w.admin('PUT', '/_sim/faults', { latencyMs: 200 });
      const started = Date.now();
      await w.recipientApi.createSdkToken({ userId: 'slow', levelName: 'basic-kyc-level' });
      assert.ok(Date.now() - started >= 190);
    });

    it('applies faults only to the paths that match pathPattern', async () => {
      await w.admin('PUT', '/_sim/faults', { errorRate: 1, pathPattern: 'reusableIdentity' });
      await w.recipientApi.createSdkToken({ userId: 'fine', levelName: 'basic-kyc-level' });
      const { token } = await w.shareToken();
      await rejectsWith(w.recipientApi.importApplicant({ shareToken: token }), 'unavailable');
    });
  });

  describe('webhooks', () => {
    it('sends applicantReviewed after testCompleted, signed so that verifyWebhook accepts it and refuses a tampered copy', async () => {
      const received: { body: Buffer; headers: Record<string, any> }[] = [];
      const receiver = createServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        received.push({ body: Buffer.concat(chunks), headers: req.headers });
        res.end('ok');
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
      try {
        w.sim.state.updateClient(w.us.clientId, { webhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` });
        const { token } = await w.shareToken();
        const imported = await w.recipientApi.importApplicant({ shareToken: token });
        await w.recipientApi.call('POST', `/resources/applicants/${imported.id}/status/testCompleted`, {
          reviewAnswer: 'RED',
          rejectLabels: ['BAD_PROOF_OF_ADDRESS'],
          reviewRejectType: 'RETRY',
        });
        await eventually('two callbacks forwarded', () => received.length >= 2, { timeoutMs: 1000, everyMs: 20 });
        assert.equal(received.length, 2, 'one on import (inherited status), one after testCompleted');
        const last = received[1]!;
        const event = JSON.parse(last.body.toString());
        assert.equal(event.type, 'applicantReviewed');
        assert.equal(event.applicantId, imported.id);
        assert.deepEqual(event.reviewResult, { reviewAnswer: 'RED', rejectLabels: ['BAD_PROOF_OF_ADDRESS'], reviewRejectType: 'RETRY' });
        assert.equal(last.headers['x-payload-digest-alg'], 'HMAC_SHA256_HEX');
        assert.equal(w.recipientApi.verifyWebhook(last.body, last.headers), true);
        const tampered = Buffer.from(last.body.toString().replace('RED', 'GREEN'));
        assert.equal(w.recipientApi.verifyWebhook(tampered, last.headers), false);
        assert.equal(w.recipientApi.verifyWebhook(last.body, { ...last.headers, 'x-payload-digest': undefined }), false);
        assert.equal(w.recipientApi.verifyWebhook(last.body, { ...last.headers, 'x-payload-digest-alg': 'MD5' }), false);
        // the digest is the plain HMAC of the raw body, as openssl computes it
        const openssl = execFileSync('openssl', ['dgst', '-sha256', '-hmac', w.us.webhookSecret], { input: last.body }).toString().trim().split(' ').pop();
        assert.equal(last.headers['x-payload-digest'], openssl);
        assert.equal(webhookDigest(w.us.webhookSecret, last.body), openssl);
      } finally {
        w.sim.state.updateClient(w.us.clientId, { webhookUrl: null });
        receiver.close();
      }
    });
  });

  describe('provider requests inside activities', () => {
    const env = () => new MockActivityEnvironment();
    // an activity's provider request, as processShare and recoverShare make them
    const createProviderActivities = ({ provider }: { provider: IdentityProvider }) => ({
      importApplicant: (input: ImportApplicantInput) => providerCall(() => provider.importApplicant(input)),
    });
    const activities = () => createProviderActivities({ provider: w.recipientApi });

    it('returns the imported applicant', async () => {
      const { token } = await w.shareToken();
      const a: { review: { answer: string | null } } = await env().run(activities().importApplicant, { shareToken: token });
      assert.equal(a.review.answer, 'GREEN');
    });

    it('fails a used token with a non-retryable RecordFailure.TOKEN_ALREADY_USED, the provider kind in its details', async () => {
      const { token } = await w.shareToken();
      await env().run(activities().importApplicant, { shareToken: token });
      const err = await env()
        .run(activities().importApplicant, { shareToken: token })
        .then(
          () => null,
          (e) => e,
        );
      assert.ok(err instanceof ApplicationFailure);
      assert.equal(err.type, 'RecordFailure.TOKEN_ALREADY_USED');
      assert.equal(err.nonRetryable, true);
      assert.equal((err.details?.[0] as { kind: string }).kind, 'token_used');
    });

    it('fails a 429 with a retryable failure whose next retry waits for Retry-After', async () => {
      const limited = w.sim.state.addClient({ clientId: `act-limited-${Date.now()}`, limits: { postPer5s: 1, getPer5s: 300 } });
      const acts = createProviderActivities({ provider: w.clientFor(limited) });
      await acts.importApplicant({ shareToken: 'x' }).catch(() => {});
      const err = await env()
        .run(acts.importApplicant, { shareToken: 'y' })
        .then(
          () => null,
          (e) => e,
        );
      assert.ok(err instanceof ApplicationFailure);
      assert.equal(err.type, 'RecordFailure.PROVIDER_UNAVAILABLE');
      assert.equal((err.details?.[0] as { kind: string }).kind, 'rate_limited');
      assert.equal(err.nonRetryable, false);
      assert.ok(Number(err.nextRetryDelay) >= 1000);
    });
  });
});
