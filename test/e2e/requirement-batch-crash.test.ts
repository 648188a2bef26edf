// A batch of requirement submissions (1,500 people: three pages of 500, so the run continues as new
// across the kill; RB_CRASH_PEOPLE=5000 for the interface's limit, which bench/requirement-batch.ts
// measures) whose worker process is killed with SIGKILL mid-run and restarted: every record is
// handled once (one submission, one decision, one decision event per person), the batch completes,
// the people whose document was missing are decided when it is uploaded (their submissions'
// workflows started by the records, across the kill), and every decision reaches the subscriber's
// webhook.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bulkEntities, bulkIdDocuments, entityIdsOf } from '../helpers/bulk.ts';
import { crashRig } from '../helpers/crash-rig.ts';
import { FILES, filesForm } from '../helpers/ukyc.ts';
import { canonicalRecords, jsonLines, uploadRecords, waitForRequirementBatch } from '../helpers/requirement-batches.ts';
import { eventually, subscribe } from '../helpers/world.ts';

const PEOPLE = Number(process.env.RB_CRASH_PEOPLE ?? 1500);

describe('a worker killed in the middle of a requirement batch', () => {
  const rig = crashRig();

  it('resumes after SIGKILL and a restart: every record handled once, every decision delivered', async () => {
    const { stack, receiver } = rig;
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'Requirement crash' });
    await subscribe(stack, key, receiver.url);
    const externalIds = Array.from({ length: PEOPLE }, (_, i) => `rb-crash-${i}`);
    await bulkEntities(stack.db, businessId, externalIds);
    const ids = await entityIdsOf(stack.db, businessId, externalIds);
    // a tenth without their identity document: their submissions wait in workflows the records start, across the kill
    const late = ids.slice(0, PEOPLE / 10);
    await bulkIdDocuments(stack.db, businessId, ids.slice(PEOPLE / 10));

    let worker = rig.startWorker();
    await worker.waitFor(/"msg":"worker polling"/);
    const res = await uploadRecords(stack, key, jsonLines(canonicalRecords(ids)));
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.totalRecords, PEOPLE);
    // kill while records are being handled (a quarter done), then start a new worker
    await eventually(
      'a quarter of the records handled',
      async () => (await stack.request('GET', `/entity/requirement/batch/${res.body.batchId}`, { key })).body.processedRecords >= PEOPLE / 4,
      { timeoutMs: 120_000, everyMs: 20 },
    );
    await worker.stop('SIGKILL');
    const atKill = Number(
      (
        await stack.db.query<{ n: string }>("SELECT count(*) AS n FROM requirement_batch_records WHERE batch_id = $1 AND status <> 'pending'", [
          res.body.batchId,
        ])
      )[0]!.n,
    );
    assert.ok(atKill < PEOPLE, `killed with ${atKill} of ${PEOPLE} handled`);
    worker = rig.startWorker();
    const status = await waitForRequirementBatch(stack, key, res.body.batchId, 600_000);

    assert.equal(status.status, 'completed', JSON.stringify(status).slice(0, 500));
    assert.deepEqual(
      [status.summary.successfulRecords, status.summary.decided, status.summary.waitingForDocuments, status.failedRecords],
      [PEOPLE, PEOPLE - late.length, late.length, 0],
      JSON.stringify(status.summary.errors.slice(0, 3)),
    );
    // their documents arrive now, over the API: each upload wakes its submission's workflow, which decides
    let next = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < late.length) {
          const entityId = late[next++]!;
          const up = await stack.request('POST', `/entity/${entityId}/requirement-slug/ukyc-id-document/upload`, {
            key,
            form: filesForm([{ bytes: FILES.pdf, name: 'passport.pdf' }]),
          });
          assert.equal(up.status, 201, up.text);
          assert.ok(up.body.submissionId, 'the document joins the waiting submission');
        }
      }),
    );
    // every decision delivered to the subscriber (a redelivery after the kill may repeat one: deduplicated on data.eventId)
    const deliveredIds = () => new Set(receiver.received.map((r) => JSON.parse(r.body.toString()).data.eventId as string));
    const delivered = await eventually('every decision delivered', () => deliveredIds().size >= PEOPLE && deliveredIds(), {
      timeoutMs: 300_000,
      everyMs: 250,
      state: () => deliveredIds().size,
    });
    await worker.stop('SIGTERM');
    assert.equal(delivered.size, PEOPLE, 'every decision delivered, each once');
    // once: one submission, decided, per person; one decision event per person
    const [subs] = await stack.db.query<{ n: string; people: string }>(
      "SELECT count(*) AS n, count(DISTINCT entity_id) AS people FROM ukyc_submissions WHERE business_id = $1 AND status = 'decided'",
      [businessId],
    );
    assert.deepEqual([Number(subs!.n), Number(subs!.people)], [PEOPLE, PEOPLE]);
    const [events] = await stack.db.query<{ n: string; people: string }>(
      "SELECT count(*) AS n, count(DISTINCT entity_id) AS people FROM events WHERE business_id = $1 AND event_type = 'account_status_change'",
      [businessId],
    );
    assert.deepEqual([Number(events!.n), Number(events!.people)], [PEOPLE, PEOPLE]);
    const people = new Set(receiver.received.map((r) => JSON.parse(r.body.toString()).data.entityId as string));
    assert.equal(people.size, PEOPLE);
  });
});
