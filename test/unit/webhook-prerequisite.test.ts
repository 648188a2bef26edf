// The webhook prerequisite (interface 1.4): one rule for a person's decision and a business's, each
// refused with the catalogue entry (and so the code) clients already get.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorCatalogue } from '../../domain/errors.ts';
import { webhookPrerequisite } from '../../domain/webhook-prerequisite.ts';

const sub = (id: string, types: string[], disabled = false) => ({ id, types, disabled });

describe('webhook prerequisite', () => {
  it("is met by a subscription that takes the decision's event type", () => {
    assert.equal(webhookPrerequisite('person', [sub('s1', ['reminder', 'account_status_change'])]), null);
    assert.equal(webhookPrerequisite('business', [sub('s1', ['kyb_status_change'])]), null);
    assert.equal(
      webhookPrerequisite('person', [sub('s1', ['account_status_change'], true), sub('s2', ['account_status_change'])]),
      null,
      'one enabled is enough',
    );
  });

  it("refuses a person's verification without account_status_change, with 0707000100", () => {
    const r = webhookPrerequisite('person', [sub('s1', ['kyb_status_change'])])!;
    const { code, status } = errorCatalogue[r.error];
    assert.deepEqual([r.error, code, status, r.parameter], ['webhookRegistrationRequired', '0707000100', 409, '']);
    assert.equal(r.message, 'The decision is delivered only by webhook: register a subscription for account_status_change with POST /notification first.');
  });

  it("refuses a business's submission without kyb_status_change, with 0709000500", () => {
    const r = webhookPrerequisite('business', [])!;
    const { code, status } = errorCatalogue[r.error];
    assert.deepEqual([r.error, code, status, r.parameter], ['kybWebhookRegistrationRequired', '0709000500', 409, '']);
    assert.equal(r.message, 'The KYB decision is delivered only by webhook: register a subscription for kyb_status_change with POST /notification first.');
  });

  it('is not met by a disabled subscription: the refusal names it and how to enable it', () => {
    const r = webhookPrerequisite('person', [sub('sub-b', ['account_status_change'], true), sub('sub-a', ['account_status_change'], true)])!;
    const { code, status } = errorCatalogue[r.error];
    assert.deepEqual([r.error, code, status], ['webhookRegistrationRequired', '0707000100', 409]);
    assert.match(r.message, /\(sub-a, sub-b\) is disabled/);
    assert.match(r.message, /POST \/notification\/sub-a\/enable/);
    const k = webhookPrerequisite('business', [sub('sub-k', ['kyb_status_change'], true)])!;
    assert.deepEqual([k.error, errorCatalogue[k.error].code], ['kybWebhookRegistrationRequired', '0709000500']);
    assert.match(k.message, /POST \/notification\/sub-k\/enable/);
  });
});
