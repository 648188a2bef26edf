// Upload slots of one API process (api/uploads.ts): a bounded number at once, in all and per
// business; requests beyond them wait in arrival order, and a business with room is never held up
// by another business's queue; a wait that runs out says whose limit it was.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UploadSlots } from '../../api/uploads.ts';

const granted = async (p: Promise<{ ok: boolean }>) => (await p).ok;

describe('upload slots', () => {
  it('grants up to the per-business limit at once; the next waits for one to be released', async () => {
    const slots = new UploadSlots({ perProcess: 10, perBusiness: 2, maxWaitMs: 5_000 });
    const a1 = await slots.acquire('A');
    const a2 = await slots.acquire('A');
    assert.ok(a1.ok && a2.ok);
    let third = false;
    const a3 = slots.acquire('A').then((s) => ((third = true), s));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(third, false, 'A waits: its two slots are taken');
    assert.deepEqual(slots.load, { inUse: 2, waiting: 1 });
    a1.release();
    assert.ok((await a3).ok);
    assert.deepEqual(slots.load, { inUse: 2, waiting: 0 });
  });

  it("serves another business at once while one business's requests queue", async () => {
    const slots = new UploadSlots({ perProcess: 4, perBusiness: 2, maxWaitMs: 5_000 });
    await slots.acquire('A');
    await slots.acquire('A');
    const queued = [slots.acquire('A'), slots.acquire('A'), slots.acquire('A')];
    assert.equal(slots.load.waiting, 3);
    assert.ok(await granted(slots.acquire('B')), "B is not behind A's queue");
    assert.ok(await granted(slots.acquire('B')));
    assert.equal(slots.load.inUse, 4, 'the process is full now');
    void queued;
  });

  it('refuses after the wait: 429 for the business over its own limit, 503 when the process is full', async () => {
    const slots = new UploadSlots({ perProcess: 2, perBusiness: 1, maxWaitMs: 50 });
    await slots.acquire('A');
    assert.deepEqual(await slots.acquire('A'), { ok: false, scope: 'business' });
    await slots.acquire('B');
    assert.deepEqual(await slots.acquire('C'), { ok: false, scope: 'process' });
    assert.equal(slots.load.waiting, 0, 'a waiter that gave up is gone');
  });

  it('a released slot goes to the first waiter whose business has room', async () => {
    const slots = new UploadSlots({ perProcess: 2, perBusiness: 1, maxWaitMs: 5_000 });
    const a = await slots.acquire('A');
    const b = await slots.acquire('B');
    assert.ok(a.ok && b.ok);
    const order: string[] = [];
    const waiters = [slots.acquire('A').then(() => order.push('A2')), slots.acquire('C').then(() => order.push('C1'))];
    b.release(); // A is still at its limit: C goes first although A asked earlier
    await waiters[1];
    assert.deepEqual(order, ['C1']);
    a.release();
    await waiters[0];
    assert.deepEqual(order, ['C1', 'A2']);
  });

  it('a waiter whose client went away leaves the queue, and takes no slot', async () => {
    const slots = new UploadSlots({ perProcess: 1, perBusiness: 1, maxWaitMs: 5_000 });
    const a = await slots.acquire('A');
    assert.ok(a.ok);
    const gone = new AbortController();
    const left = slots.acquire('B', gone.signal);
    const next = slots.acquire('C');
    gone.abort();
    assert.deepEqual(await left, { ok: false, scope: 'gone' });
    assert.deepEqual(slots.load, { inUse: 1, waiting: 1 });
    a.release();
    assert.ok(await granted(next), 'the slot goes to the next waiter, not to the one that left');
    assert.deepEqual(slots.load, { inUse: 1, waiting: 0 });
    const late = new AbortController();
    late.abort();
    assert.deepEqual(await slots.acquire('D', late.signal), { ok: false, scope: 'gone' });
  });
});
