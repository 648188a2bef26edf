// The worker pool (lib/pool.ts): never more than `size` in flight, every item once, and no new item
// started once `until` says stop.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { inPool } from '../../lib/pool.ts';

const tick = () => new Promise((r) => setImmediate(r));

it('runs every item once with at most `size` in flight', async () => {
  let inFlight = 0;
  let most = 0;
  const seen: number[] = [];
  await inPool([...Array(25).keys()], 4, async (n) => {
    inFlight++;
    most = Math.max(most, inFlight);
    await tick();
    seen.push(n);
    inFlight--;
  });
  assert.equal(most, 4);
  assert.deepEqual(
    seen.toSorted((a, b) => a - b),
    [...Array(25).keys()],
  );
});

it('starts no new item once `until` is true, and finishes those in flight', async () => {
  const started: number[] = [];
  let stop = false;
  await inPool(
    [...Array(20).keys()],
    3,
    async (n) => {
      started.push(n);
      if (n === 4) stop = true;
      await tick();
    },
    { until: () => stop },
  );
  assert.deepEqual(started, [0, 1, 2, 3, 4]);
});

it('does nothing for no items', async () => {
  let calls = 0;
  await inPool([], 8, async () => void calls++);
  assert.equal(calls, 0);
});
