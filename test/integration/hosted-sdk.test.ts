// The hosted-SDK path end to end over HTTP: an SDK token for a person (the webhook prerequisite,
// memberId rules, cross-business 404), the provider's signed review callback to our endpoint, the
// person's verification workflow, and the signed account_status_change webhook. Duplicate, stale,
// unsigned and tampered callbacks change nothing; a RETRY rejection then a new GREEN review gives
// a new APPROVED decision.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { personProgressQuery } from '../../contract/person-verification.ts';
import { personVerificationWorkflowId, sdkUserId, type PersonProgress } from '../../contract/person-verification.ts';
import { publicKeyOf } from '../../domain/webhook-signature.ts';
import type { SumsubClient } from '../../provider/sumsub/client.ts';
import { verifyWebhook } from '../../receiver/verify-webhook.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { personFillsInSdk, providerAccount } from '../helpers/sdk.ts';
import { startStack, testKeyRing, type Stack } from '../helpers/stack.ts';
import { eventually } from '../helpers/eventually.ts';
import * as world from '../helpers/world.ts';

describe('hosted SDK verification', () => {
  let stack: Stack;
  let key: string;
  let receiver: Receiver;
  let provider: SumsubClient;
  let n = 0;

  before(async () => {
    stack = await startStack({ workers: true, providerCallbacks: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true' } });
    provider = providerAccount(stack);
    receiver = await startReceiver();
    ({ apiKey: key } = await stack.newBusiness({ name: 'SDK' }));
    await world.subscribe(stack, key, receiver.url);
  });
  after(async () => {
    await receiver.close();
    await stack.close();
  });

  const entity = (type: 'INDIVIDUAL' | 'BUSINESS', k = key, requirements?: unknown[]) => world.entity(stack, k, `sdk-${type}-${n++}`, type, requirements);

  const eventsFor = async (entityId: string, count: number) => {
    const mine = () => receiver.received.filter((r) => JSON.parse(r.body.toString()).data.entityId === entityId);
    return world.eventually(`${count} events of ${entityId}`, () => mine().length >= count && mine(), { timeoutMs: 20_000, everyMs: 100 });
  };

  /** Waits until the person's workflow has decided at least `decided` reviews and has none waiting or in hand. */
  const settled = async (entityId: string, decided: number) => {
    const handle = stack.temporal.workflow.getHandle(personVerificationWorkflowId(entityId));
    let last: PersonProgress | undefined;
    await world.eventually(
      'the workflow settled',
      async () => {
        last = await handle.query(personProgressQuery);
        return last.decided >= decided && last.waiting === 0 && !last.deciding;
      },
      { timeoutMs: 10_000, state: () => last },
    );
  };

  it('issues an SDK token bound to the person, and the GREEN review reaches the client as a signed APPROVED webhook', async () => {
    const person = await entity('INDIVIDUAL');
    const res = await stack.request('POST', `/entity/${person}/kyc`, { key });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.provider, 'sumsub');
    assert.match(res.body.sdkToken, /^_act-sbx-jwt-/);
    const applicant = personFillsInSdk(stack, person);
    await provider.completeSandboxReview(applicant.id, { reviewAnswer: 'GREEN' });
    const [got] = await eventsFor(person, 1);
    assert.ok(got, 'a webhook arrived');
    const event = JSON.parse(got.body.toString());
    assert.equal(event.eventType, 'account_status_change');
    assert.equal(event.data.status, 'APPROVED');
    assert.match(event.data.message, /hosted SDK/);
    assert.equal(verifyWebhook(got.body, got.headers['vouch-signature'], testKeyRing().map(publicKeyOf)), true);
    const read = (await stack.request('GET', `/entity/${person}`, { key })).body;
    assert.equal(read.verifiedBy, 'sumsub');
    assert.deepEqual(
      read.enabledFeatures.map((f: any) => f.slug),
      ['card-issuance-api-access'],
    );
    const accounts = await stack.db.query('SELECT decision, source FROM kyc_accounts WHERE entity_id = $1', [person]);
    assert.deepEqual(
      accounts.map((a) => [a.decision, a.source]),
      [['APPROVED', 'hosted-sdk']],
    );
  });

  it('turns a RED RETRY review into REJECTED with the provider labels, and a new GREEN review into a new APPROVED', async () => {
    const person = await entity('INDIVIDUAL');
    assert.equal((await stack.request('POST', `/entity/${person}/kyc`, { key })).status, 200);
    const applicant = personFillsInSdk(stack, person);
    await provider.completeSandboxReview(applicant.id, {
      reviewAnswer: 'RED',
      rejectLabels: ['BAD_SELFIE'],
      reviewRejectType: 'RETRY',
      moderationComment: 'Take the selfie again.',
    });
    const [first] = await eventsFor(person, 1);
    const rejected = JSON.parse(first!.body.toString()).data;
    assert.deepEqual(
      [rejected.status, rejected.rejectLabels, rejected.reviewRejectType, rejected.moderationComment],
      ['REJECTED', ['BAD_SELFIE'], 'RETRY', 'Take the selfie again.'],
    );
    await provider.completeSandboxReview(applicant.id, { reviewAnswer: 'GREEN' });
    const events = await eventsFor(person, 2);
    assert.deepEqual(
      events.map((e) => JSON.parse(e.body.toString()).data.status),
      ['REJECTED', 'APPROVED'],
    );
    assert.notEqual(JSON.parse(events[1]!.body.toString()).data.eventId, rejected.eventId);
  });

  it('changes nothing twice for a repeated or stale callback', async () => {
    const person = await entity('INDIVIDUAL');
    assert.equal((await stack.request('POST', `/entity/${person}/kyc`, { key })).status, 200);
    const applicant = personFillsInSdk(stack, person);
    await provider.completeSandboxReview(applicant.id, { reviewAnswer: 'GREEN' });
    await eventsFor(person, 1);
    // the provider repeats its callback (the same bytes, signed), twice
    const body = JSON.stringify({
      applicantId: applicant.id,
      externalUserId: sdkUserId(person),
      type: 'applicantReviewed',
      reviewResult: { reviewAnswer: 'RED' },
    });
    for (let i = 0; i < 2; i++) {
      const res = await callback(body);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.forwarded, true);
    }
    await settled(person, 2); // the first review, and at least one more look after the repeats
    const events = await stack.db.query('SELECT 1 FROM events WHERE entity_id = $1', [person]);
    assert.equal(events.length, 1, 'one decision for one review');
  });

  it('refuses an unsigned or tampered callback with 401 and changes nothing', async () => {
    const person = await entity('INDIVIDUAL');
    const applicant = personFillsInSdk(stack, person);
    applicant.review = { reviewStatus: 'completed', reviewResult: { reviewAnswer: 'GREEN' }, reviewId: 'r1' };
    const body = JSON.stringify({ applicantId: applicant.id, externalUserId: sdkUserId(person), type: 'applicantReviewed' });
    const unsigned = await stack.request('POST', '/provider-webhooks/sumsub', { body, headers: { 'content-type': 'application/json' } });
    assert.equal(unsigned.status, 401);
    assert.deepEqual([unsigned.body.code, unsigned.body.parameter], ['0707000400', 'x-payload-digest']);
    const tampered = await callback(body, body.replace('applicantReviewed', 'applicantReviewed '));
    assert.equal(tampered.status, 401);
    const wrongKey = await stack.request('POST', '/provider-webhooks/sumsub', {
      body,
      headers: {
        'content-type': 'application/json',
        'x-payload-digest': createHmac('sha256', 'another-secret').update(body).digest('hex'),
        'x-payload-digest-alg': 'HMAC_SHA256_HEX',
      },
    });
    assert.equal(wrongKey.status, 401);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await stack.db.query('SELECT 1 FROM events WHERE entity_id = $1', [person])).length, 0);
    await assert.rejects(stack.temporal.workflow.getHandle(personVerificationWorkflowId(person)).describe(), /not found/i);
  });

  it('acknowledges callbacks about applicants that are not SDK applicants of ours, and does nothing with them', async () => {
    const res = await callback(JSON.stringify({ applicantId: 'abc', externalUserId: 'batch:1:2', type: 'applicantReviewed' }));
    assert.equal(res.status, 200);
    assert.equal(res.body.forwarded, false);
  });

  it('answers 503 when the provider does not answer and 502 when it refuses our request, minting nothing', async () => {
    const person = await entity('INDIVIDUAL');
    stack.sim!.state.faults = { ...stack.sim!.state.faults, errorRate: 1, pathPattern: 'accessTokens/sdk' };
    try {
      const down = await stack.request('POST', `/entity/${person}/kyc`, { key });
      assert.deepEqual([down.status, down.body.code], [503, '0707000500']);
    } finally {
      stack.sim!.state.faults = { ...stack.sim!.state.faults, errorRate: 0, pathPattern: '' };
    }
    const recipient = stack.sim!.state.clients.get(stack.recipient!.clientId)!;
    const levels = recipient.levels;
    stack.sim!.state.updateClient(recipient.clientId, { levels: ['another-level'] });
    try {
      const refused = await stack.request('POST', `/entity/${person}/kyc`, { key });
      assert.deepEqual([refused.status, refused.body.code], [502, '0707000600']);
    } finally {
      stack.sim!.state.updateClient(recipient.clientId, { levels });
    }
    const again = await stack.request('POST', `/entity/${person}/kyc`, { key });
    assert.equal(again.status, 200, 'the same workflow serves the next request once the provider is back');
  });

  describe('the person and the prerequisite', () => {
    it('needs a webhook subscription for account_status_change (409 naming it), and changes nothing', async () => {
      const { apiKey } = await stack.newBusiness({ name: 'No webhook' });
      const person = await entity('INDIVIDUAL', apiKey);
      const res = await stack.request('POST', `/entity/${person}/kyc`, { key: apiKey });
      assert.equal(res.status, 409);
      assert.equal(res.body.code, '0707000100');
      assert.match(res.body.message, /account_status_change.*POST \/notification/);
      await assert.rejects(stack.temporal.workflow.getHandle(personVerificationWorkflowId(person)).describe(), /not found/i);
    });

    it('verifies a declared member of a BUSINESS entity with memberId, and refuses a non-member (404)', async () => {
      const director = await entity('INDIVIDUAL');
      const outsider = await entity('INDIVIDUAL');
      const company = await entity('BUSINESS', key, [
        { requirementSlug: 'kyb-ubo-declaration', value: { members: [{ entityId: director, role: 'DIRECTOR' }] } },
      ]);
      const ok = await stack.request('POST', `/entity/${company}/kyc?memberId=${director}`, { key });
      assert.equal(ok.status, 200, ok.text);
      const refused = await stack.request('POST', `/entity/${company}/kyc?memberId=${outsider}`, { key });
      assert.equal(refused.status, 404);
      assert.deepEqual([refused.body.code, refused.body.parameter], ['0707000200', 'memberId']);
    });

    it('needs memberId for a BUSINESS entity and refuses it for an INDIVIDUAL (400 naming memberId)', async () => {
      const person = await entity('INDIVIDUAL');
      const company = await entity('BUSINESS');
      for (const path of [`/entity/${company}/kyc`, `/entity/${person}/kyc?memberId=${person}`]) {
        const res = await stack.request('POST', path, { key });
        assert.equal(res.status, 400, path);
        assert.deepEqual([res.body.code, res.body.parameter], ['0707000300', 'memberId']);
      }
      const malformed = await stack.request('POST', `/entity/${company}/kyc?memberId=nope`, { key });
      assert.deepEqual([malformed.status, malformed.body.parameter], [400, 'memberId']);
    });

    it("answers 404 for another business's entity, and 401 without a key", async () => {
      const { apiKey: other } = await stack.newBusiness({ name: 'Other' });
      const theirs = await entity('INDIVIDUAL', other);
      const res = await stack.request('POST', `/entity/${theirs}/kyc`, { key });
      assert.deepEqual([res.status, res.body.code], [404, '0702000100']);
      assert.equal((await stack.request('POST', `/entity/${theirs}/kyc`)).status, 401);
    });
  });

  function callback(body: string, signedBody = body) {
    return stack.request('POST', '/provider-webhooks/sumsub', {
      body: signedBody,
      headers: {
        'content-type': 'application/json',
        'x-payload-digest': createHmac('sha256', stack.config.provider.webhookSecret!).update(body).digest('hex'),
        'x-payload-digest-alg': 'HMAC_SHA256_HEX',
      },
    });
  }
});
