// The retirement rule of patches (contract/patches.ts; docs/architecture.md, "Changing a workflow"), held against
// the workflow code, the recorded histories and the release in package.json: each patch is at the
// stage its age asks for, named from the table (never a string of its own), and the fixtures of
// the old behaviour live exactly as long as the patch is `patched`.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { PATCHES, patchStageIn, RELEASES, type Release } from '../../contract/patches.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const release = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version as Release;
const workflowCode = readdirSync(path.join(root, 'workflows'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => readFileSync(path.join(root, 'workflows', f), 'utf8'))
  .join('\n');
const historiesDir = path.join(root, 'test', 'fixtures', 'histories');
const fixtures = readdirSync(historiesDir).filter((f) => f.endsWith('.json'));

/** The patch markers a recorded history carries: id → deprecated flag. */
function markersOf(file: string): Map<string, boolean> {
  const history = JSON.parse(readFileSync(path.join(historiesDir, file), 'utf8')) as {
    events: { markerRecordedEventAttributes?: { details?: Record<string, { payloads?: { data?: string }[] }> } }[];
  };
  const markers = new Map<string, boolean>();
  for (const e of history.events) {
    const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    if (!data) continue;
    const { id, deprecated } = JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { id: string; deprecated: boolean };
    markers.set(id, deprecated);
  }
  return markers;
}

describe('patch retirement', () => {
  it('counts releases the way the Changelog does: package.json holds the newest', () => {
    assert.equal(release, RELEASES.at(-1));
  });

  it('the stage follows the age: patched in N and N+1, deprecated in N+2, removed in N+3', () => {
    const patch = { introducedIn: '1.0.1' as const };
    assert.deepEqual(
      RELEASES.map((r) => patchStageIn(patch, r)),
      ['patched', 'patched', 'deprecated', 'removed'],
    );
    assert.equal(patchStageIn({ introducedIn: '1.0.1' }, '1.0.2'), 'patched');
  });

  for (const [key, patch] of Object.entries(PATCHES)) {
    const stage = patchStageIn(patch, release);
    it(`${patch.id} (from ${patch.introducedIn}) is ${stage} in ${release}`, () => {
      const patchedCall = new RegExp(`\\bpatched\\(PATCHES\\.${key}\\.id\\)`);
      const deprecatedCall = new RegExp(`\\bdeprecatePatch\\(PATCHES\\.${key}\\.id\\)`);
      // a run recorded before N+2 carries the undeprecated marker, and fails to replay once the call is gone;
      // the fixture of a younger patch's old behaviour is such a run, and holds the removal back
      const undeprecated = fixtures.filter((f) => markersOf(f).get(patch.id) === false);
      const heldBack = stage === 'removed' && undeprecated.length > 0;
      const expected = heldBack ? 'deprecated' : stage;
      assert.notEqual(expected, 'removed', `${patch.id} is old enough to go: remove its deprecatePatch call and its line in contract/patches.ts`);
      assert.equal(
        patchedCall.test(workflowCode),
        expected === 'patched',
        `workflow code ${expected === 'patched' ? 'must' : 'must no longer'} call patched(PATCHES.${key}.id)`,
      );
      assert.equal(
        deprecatedCall.test(workflowCode),
        expected === 'deprecated',
        `workflow code ${expected === 'deprecated' ? 'must' : 'must not yet'} call deprecatePatch(PATCHES.${key}.id)`,
      );
      if (expected === 'deprecated') {
        const before = fixtures.filter((f) => f.includes(`-before-${patch.id}`));
        assert.deepEqual(before, [], 'the fixtures of the old behaviour go with the old branch');
        const recordedUndeprecated = undeprecated.filter((f) => !f.includes('-before-'));
        assert.deepEqual(
          recordedUndeprecated,
          [],
          'record the histories again (npm run histories:record): their markers must say deprecated, so they replay once the call is gone',
        );
      }
    });
  }

  it('every patch in workflow code is named from the table, not by a string of its own', () => {
    const calls = [...workflowCode.matchAll(/\b(?:patched|deprecatePatch)\(([^)]*)\)/g)].map((m) => m[1]!);
    assert.ok(calls.length > 0);
    for (const arg of calls) assert.match(arg, /^PATCHES\.\w+\.id$/, `patch named ${arg}: add it to contract/patches.ts and use PATCHES.<name>.id`);
  });

  it('a fixture of an old behaviour names a patch that is still patched', () => {
    for (const f of fixtures.filter((name) => name.includes('-before-'))) {
      const id = f.slice(f.indexOf('-before-') + '-before-'.length, -'.json'.length);
      const patch = Object.values(PATCHES).find((p) => p.id === id);
      assert.ok(patch, `${f}: "-before-" must be followed by a patch id of contract/patches.ts`);
      assert.equal(patchStageIn(patch, release), 'patched', `${f}: its patch is deprecated; delete the fixture`);
    }
  });
});
