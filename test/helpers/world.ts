// The test world: what a test does over and over as a client would, written once — subscribe a
// receiver to webhooks, create an entity, wait for something to hold. Each step asserts its own
// success, so a test reads as the story it tells.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { eventually } from './eventually.ts';
import type { Reply, Stack } from './stack.ts';
import { canonicalPayload, FILES, filesForm } from './ukyc.ts';

export { eventually };
export { startReceiver, type Receiver } from './receiver.ts';
export { createEntities as entities } from './imports.ts';

/** POST /notification for `key`: a webhook to `url` for `types` (the decision's by default); the 201 reply. */
export async function subscribe(stack: Stack, key: string, url: string, types: readonly string[] = ['account_status_change']): Promise<Reply> {
  const res = await stack.request('POST', '/notification', { key, json: { notificationChannel: 'WEBHOOK', notificationTypes: types, webhookUrl: url } });
  assert.equal(res.status, 201, res.text);
  return res;
}

/** POST /entity for `key`: an INDIVIDUAL (or `type`) with this externalId (and these requirements); its id. */
export async function entity(
  stack: Stack,
  key: string,
  externalId: string,
  type: 'INDIVIDUAL' | 'BUSINESS' = 'INDIVIDUAL',
  requirements?: readonly unknown[],
): Promise<string> {
  const res = await stack.request('POST', '/entity', { key, json: { externalId, type, ...(requirements ? { requirements } : {}) } });
  assert.equal(res.status, 201, res.text);
  return res.body.id as string;
}

/**
 * A person decided by universal KYC, as a client does it: created, the canonical KYC data submitted
 * (`payload`, the sample's by default), an identity document uploaded (`document`), then waited for
 * until its decision is kept. Its entity id.
 */
export async function decidedPerson(
  stack: Stack,
  key: string,
  options: { externalId?: string; payload?: unknown; document?: { bytes: Buffer; name: string } } = {},
): Promise<string> {
  const id = await entity(stack, key, options.externalId ?? `person-${randomUUID()}`);
  const value = JSON.stringify(options.payload ?? canonicalPayload());
  const submitted = await stack.request('POST', `/entity/${id}/requirement`, { key, json: { requirementSlug: 'ukyc-canonical-kyc-data', value } });
  assert.equal(submitted.status, 201, submitted.text);
  const document = options.document ?? { bytes: FILES.pdf, name: 'passport.pdf' };
  const uploaded = await stack.request('POST', `/entity/${id}/requirement-slug/ukyc-id-document/upload`, { key, form: filesForm([document]) });
  assert.equal(uploaded.status, 201, uploaded.text);
  await eventually(`a decision of ${id}`, async () => (await stack.db.query('SELECT 1 FROM kyc_accounts WHERE entity_id = $1', [id])).length > 0, {
    everyMs: 100,
  });
  return id;
}
