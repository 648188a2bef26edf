// Universal KYB submissions deciding while the worker process is killed with SIGKILL and restarted:
// each business's owner is verified by universal KYC (the owner's decision wakes the submission),
// and the kill lands among those decisions. Every business gets exactly one KYB decision, every
// submission is settled, and the client receives each decision. A wake lost with the worker (its
// owner decided, its signal never sent) is picked up by the reconciler or the workflow's own look.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { housekeepingWorkflow } from '../../workflows/index.ts';
import { crashRig } from '../helpers/crash-rig.ts';
import { canonicalPayload, documentsForm, FILES, filesForm } from '../helpers/ukyc.ts';
import { entity, eventually, subscribe } from '../helpers/world.ts';

const BUSINESSES = 30;

describe('a worker killed while KYB submissions are decided', () => {
  const rig = crashRig({ env: { API_RATE_LIMIT_PER_SECOND: '10000' } });

  it('decides every business exactly once across SIGKILL and a restart', async () => {
    const { stack, receiver } = rig;
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'KYB crash' });
    await subscribe(stack, key, receiver.url, ['account_status_change', 'kyb_status_change']);
    let worker = rig.startWorker();
    const document = async (fields: Record<string, string>) => {
      const form = documentsForm(fields);
      const res = await stack.request('POST', '/ukyb/documents', { key, form });
      assert.equal(res.status, 201, res.text);
    };
    const companies: string[] = [];
    const owners: string[] = [];
    for (let i = 0; i < BUSINESSES; i++) {
      const company = await entity(stack, key, `kyb-crash-${i}`, 'BUSINESS');
      const profile = await stack.request('POST', '/ukyb', {
        key,
        json: {
          entityId: company,
          business: {
            legalName: `Crash ${i} Ltd`,
            registrationNumber: String(i),
            country: 'GBR',
            address: { country: 'GBR', postCode: 'EC1A 1BB', street: 'King Street' },
          },
          ubos: [
            { externalId: `kyb-crash-owner-${i}`, firstName: 'Ada', lastName: 'Lovelace', dob: '1980-12-10', nationality: 'GBR', ownershipPercentage: 75 },
          ],
        },
      });
      assert.equal(profile.status, 201, profile.text);
      const owner = profile.body.ubos[0].entityId as string;
      for (const requirementSlug of ['ukyb-certificate-of-incorporation', 'ukyb-proof-of-address', 'ukyb-register-of-shareholders'])
        await document({ entityId: company, requirementSlug });
      await document({ entityId: company, memberId: owner, documentType: 'PASSPORT' });
      assert.equal((await stack.request('POST', '/ukyb/submit', { key, json: { entityId: company } })).status, 202);
      const data = await stack.request('POST', `/entity/${owner}/requirement`, {
        key,
        json: { requirementSlug: 'ukyc-canonical-kyc-data', value: JSON.stringify(canonicalPayload()) },
      });
      assert.equal(data.status, 201, data.text);
      companies.push(company);
      owners.push(owner);
    }
    const kybEvents = async () =>
      (await stack.db.query("SELECT 1 FROM events WHERE business_id = $1 AND event_type = 'kyb_status_change'", [businessId])).length;
    const uploads = owners.map(async (owner) => {
      const res = await stack.request('POST', `/entity/${owner}/requirement-slug/ukyc-id-document/upload`, {
        key,
        form: filesForm([{ bytes: FILES.pdf, name: 'passport.pdf' }]),
      });
      assert.equal(res.status, 201, res.text);
    });
    await eventually('three businesses decided', async () => (await kybEvents()) >= 3, { everyMs: 10 });
    await worker.stop('SIGKILL');
    await Promise.all(uploads);
    const atKill = await kybEvents();
    assert.ok(atKill < BUSINESSES, `work was left when the worker died (${atKill} of ${BUSINESSES} decided)`);
    await new Promise((r) => setTimeout(r, 1000));
    worker = rig.startWorker();
    // a lost wake waits for the reconciler: housekeeping passes on this stack's queue, as the schedule makes them
    // (the schedule itself is shared by every test stack of this Temporal server, so it is not relied on here)
    let looks = 0;
    await eventually(
      'every business decided',
      async () => {
        if (looks++ > 0 && looks % 150 === 0)
          await stack.temporal.workflow.execute(housekeepingWorkflow, {
            taskQueue: stack.config.temporal.taskQueue,
            workflowId: `kyb-crash-housekeeping-${randomUUID()}`,
          });
        return (await kybEvents()) >= BUSINESSES;
      },
      { timeoutMs: 240_000, everyMs: 100, state: kybEvents },
    );
    await new Promise((r) => setTimeout(r, 1000)); // room for a decision that would come twice

    const perCompany = await stack.db.query<{ entity_id: string; n: string }>(
      "SELECT entity_id, count(*) AS n FROM events WHERE business_id = $1 AND event_type = 'kyb_status_change' GROUP BY entity_id",
      [businessId],
    );
    assert.deepEqual(perCompany.map((r) => String(r.entity_id)).sort(), [...companies].sort(), 'every business decided');
    assert.deepEqual([...new Set(perCompany.map((r) => Number(r.n)))], [1], 'each exactly once');
    const submissions = await stack.db.query<{ status: string; decision: string }>('SELECT status, decision FROM kyb_submissions WHERE business_id = $1', [
      businessId,
    ]);
    assert.deepEqual([submissions.length, [...new Set(submissions.map((s) => `${s.status}:${s.decision}`))]], [BUSINESSES, ['decided:APPROVED']]);
    const heard = () =>
      new Set(
        receiver.received
          .map((r) => JSON.parse(r.body.toString()))
          .filter((b) => b.eventType === 'kyb_status_change')
          .map((b) => b.data.entityId),
      ).size;
    await eventually('the client heard of every KYB decision', () => heard() >= BUSINESSES, { everyMs: 100, state: heard });
    assert.equal(heard(), BUSINESSES, 'the client heard of every KYB decision');
    await worker.stop('SIGTERM');
  });
});
