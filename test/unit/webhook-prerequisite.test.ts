// The webhook prerequisite (interface 1.4): one rule for a person's decision and a business's, each
// refused with the catalogue entry (and so the code) clients already get.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorCatalogue } from '../../domain/errors.ts';
import { webhookPrerequisite } from '../../domain/webhook-prerequisite.ts';

describe('webhook prerequisite', () => {
  it("is met by a subscription that takes the decision's event type", () => {
    assert.equal(webhookPrerequisite('person', ['reminder', 'account_status_change']), null);
    assert.equal(webhookPrerequisite('business', ['kyb_status_change']), null);
  });

  it("refuses a person's verification without account_status_change, with 0707000100", () => {
    const r = webhookPrerequisite('person', ['kyb_status_change'])!;
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
});
