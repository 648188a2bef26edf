// Payload encryption end to end: a sync import of a known person leaves a history in which every
// payload is binary/encrypted and neither the name nor the date of birth appears; the codec endpoint
// (Temporal's codec server protocol) decodes those payloads, answers the Temporal UI's CORS
// preflight, and outside the sandbox refuses callers without its bearer token.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Client, type WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { eventually } from '../helpers/eventually.ts';
import { syncWorkflowId } from '../../contract/sync-import.ts';
import { retentionWorkflow } from '../../workflows/index.ts';
import { bulkEntities } from '../helpers/bulk.ts';
import { donorAt } from '../helpers/imports.ts';
import { stagingEnv, startStack, type Stack } from '../helpers/stack.ts';

const ENCRYPTED = Buffer.from('binary/encrypted').toString('base64');

/**
 * Every payload object in a history (as JSON) that goes through the data converter: all but the
 * search attributes (the server indexes them, so they stay readable: ids and stages only) and the
 * SDK's own patch markers (written by the SDK core: a patch's name).
 */
function payloadsIn(value: unknown, found: { metadata: Record<string, string>; data: string }[] = []) {
  if (Array.isArray(value)) for (const v of value) payloadsIn(v, found);
  else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (o.metadata && typeof o.metadata === 'object' && 'encoding' in (o.metadata as object)) found.push(o as never);
    else for (const [k, v] of Object.entries(o)) if (k !== 'searchAttributes' && k !== 'patch-data') payloadsIn(v, found);
  }
  return found;
}

/** Every failure object in a history (as JSON), causes included. */
function failuresIn(value: unknown, found: Failure[] = []): Failure[] {
  if (Array.isArray(value)) for (const v of value) failuresIn(v, found);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if ((k === 'failure' || k === 'cause') && v && typeof v === 'object') found.push(v as Failure);
      failuresIn(v, found);
    }
  }
  return found;
}
type Failure = { message?: string; stackTrace?: string; encodedAttributes?: { metadata: Record<string, string>; data: string } };

describe('payload encryption and the codec endpoint', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true' } });
  });
  after(async () => {
    await stack.close();
  });

  /**
   * Why a run's workflow task failed, once it has (its failure read through /codec/decode), after
   * checking that none of the run's steps was taken.
   */
  async function refusal(handle: WorkflowHandle): Promise<string> {
    const { EventType } = proto.temporal.api.enums.v1;
    const events = async () => (await handle.fetchHistory()).events ?? [];
    const failedTask = async () => (await events()).find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
    await eventually('the worker refused the run', async () => Boolean(await failedTask()), { state: async () => (await events()).map((e) => e.eventType) });
    assert.ok(!(await events()).some((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED), 'no step of the run was taken');
    const attributes = (await failedTask())!.workflowTaskFailedEventAttributes!.failure!.encodedAttributes;
    const encoded = JSON.parse(JSON.stringify(attributes, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v)));
    const decoded = await stack.request('POST', '/codec/decode', { json: { payloads: [encoded] } });
    return (JSON.parse(Buffer.from(decoded.body.payloads[0].data, 'base64').toString()) as { message: string }).message;
  }

  it("keeps a sync import's history encrypted (no name, no date of birth in clear text) and decodes it through /codec/decode", async () => {
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'Codec' });
    await bulkEntities(stack.db, businessId, ['codec-1']);
    const donor = donorAt(stack);
    const applicant = stack.sim!.state.addScenarioApplicant(donor.account.clientId, 'complete');
    applicant.info = { ...applicant.info, firstName: 'Wilhelmina', lastName: 'Quarterfield', dob: '1977-03-14' };
    const { token: shareToken } = await donor.api.createShareToken({ applicantId: applicant.id, forClientId: stack.recipient!.clientId });
    const res = await stack.request('POST', '/entity/kyc/import/sync', { key, json: { externalId: 'codec-1', shareToken } });
    assert.equal(res.status, 200, res.text);

    const history = await stack.temporal.workflow.getHandle(syncWorkflowId(res.body.requestId)).fetchHistory();
    const raw = JSON.stringify(history, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v));
    const payloads = payloadsIn(JSON.parse(raw));
    assert.ok(payloads.length >= 3, `payloads in the history: ${payloads.length}`);
    assert.deepEqual([...new Set(payloads.map((p) => p.metadata.encoding))], [ENCRYPTED], 'every payload is binary/encrypted');
    const clear = Buffer.from(raw).toString('latin1') + payloads.map((p) => Buffer.from(p.data, 'base64').toString('latin1')).join('');
    for (const secret of ['Wilhelmina', 'Quarterfield', '1977-03-14']) assert.equal(clear.includes(secret), false, secret);
    // the request id names the run (workflow id, summary) but the encrypted input does not show it
    assert.equal(
      payloads.some((p) => Buffer.from(p.data, 'base64').toString('latin1').includes(res.body.requestId)),
      false,
    );

    const decoded = await stack.request('POST', '/codec/decode', { json: { payloads }, headers: { 'X-Namespace': 'default' } });
    assert.equal(decoded.status, 200, decoded.text);
    const texts = (decoded.body.payloads as { metadata: Record<string, string>; data: string }[]).map((p) => Buffer.from(p.data, 'base64').toString());
    assert.ok(
      texts.some((t) => t.includes(res.body.requestId)),
      'the input (the request id) reads in clear once decoded',
    );
    assert.ok(decoded.body.payloads.every((p: { metadata: Record<string, string> }) => p.metadata.encoding !== ENCRYPTED));

    const empty = await stack.request('POST', '/codec/decode', { json: {} }); // what the Temporal CLI sends for no payloads
    assert.deepEqual([empty.status, empty.body], [200, { payloads: [] }]);
    const reencoded = await stack.request('POST', '/codec/encode', { json: { payloads: decoded.body.payloads } });
    assert.equal(reencoded.status, 200);
    assert.deepEqual([...new Set(reencoded.body.payloads.map((p: { metadata: Record<string, string> }) => p.metadata.encoding))], [ENCRYPTED]);
    const tampered = { ...payloads[0]!, data: Buffer.from(Buffer.from(payloads[0]!.data, 'base64').map((b, i) => (i === 20 ? b ^ 1 : b))).toString('base64') };
    const refused = await stack.request('POST', '/codec/decode', { json: { payloads: [tampered] } });
    assert.deepEqual([refused.status, refused.body.code], [400, '0710000200']);
  });

  it("keeps a failure's message and stack encrypted too (what the provider answered), read in clear through /codec/decode", async () => {
    const { apiKey: key, businessId } = await stack.newBusiness({ name: 'Codec failures' });
    await bulkEntities(stack.db, businessId, ['codec-failure']);
    const donor = donorAt(stack);
    const applicant = stack.sim!.state.addScenarioApplicant(donor.account.clientId, 'complete');
    const { token: shareToken } = await donor.api.createShareToken({ applicantId: applicant.id, forClientId: stack.recipient!.clientId });
    // the provider answers 500 to every attempt: the import's activity fails, and its failure is recorded
    stack.sim!.state.faults = { ...stack.sim!.state.faults, failNext: 20 };
    let res;
    try {
      res = await stack.request('POST', '/entity/kyc/import/sync', { key, json: { externalId: 'codec-failure', shareToken } });
    } finally {
      stack.sim!.state.faults = { ...stack.sim!.state.faults, failNext: 0 };
    }
    assert.notEqual(res.status, 200, res.text);
    const history = await stack.temporal.workflow.getHandle(syncWorkflowId(res.body.requestId)).fetchHistory();
    const raw = JSON.stringify(history, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v));
    const failures = failuresIn(JSON.parse(raw));
    assert.ok(
      failures.length >= 1,
      `the activity failed, and its failure is in the history: ${(JSON.parse(raw).events as { eventType: string }[]).map((e) => e.eventType).join(' ')}`,
    );
    for (const f of failures) {
      assert.equal(f.message, 'Encoded failure', 'no message in clear');
      assert.equal(f.stackTrace ?? '', '', 'no stack in clear');
      assert.equal(f.encodedAttributes?.metadata.encoding, ENCRYPTED);
    }
    const decoded = await stack.request('POST', '/codec/decode', { json: { payloads: failures.map((f) => f.encodedAttributes) } });
    assert.equal(decoded.status, 200, decoded.text);
    const attributes = (decoded.body.payloads as { data: string }[]).map((p) => JSON.parse(Buffer.from(p.data, 'base64').toString()) as { message: string });
    assert.ok(
      attributes.every((a) => typeof a.message === 'string' && a.message.length > 0 && a.message !== 'Encoded failure'),
      JSON.stringify(attributes),
    );
  });

  it("refuses a workflow input written in clear past Vouch (whoever reaches Temporal's port): the run never starts its work", async () => {
    // a client of the same Temporal server without the codec, as `temporal workflow start --input` is
    const raw = new Client({ connection: stack.temporal.connection, namespace: stack.config.temporal.namespace });
    const handle = await raw.workflow.start('retentionWorkflow', {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: `injected-${randomUUID()}`,
      args: [{ entityId: randomUUID() }],
    });
    try {
      assert.match(await refusal(handle), /not encrypted \(encoding json\/plain\) is refused/);
    } finally {
      await handle.terminate('test: an injected run');
    }
  });

  it("binds a payload to its workflow: an input copied from one run's history into another run is refused there", async () => {
    const original = await stack.temporal.workflow.start(retentionWorkflow, {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: `bound-${randomUUID()}`,
      args: [{ entityId: randomUUID() }],
    });
    const input = (await original.fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!.input!;
    const bound = new TextDecoder().decode(input.payloads![0]!.metadata!['encryption-workflow-id']);
    assert.equal(bound, original.workflowId, 'the input names the workflow it was written for');
    // the same ciphertext, as whoever reaches Temporal's port could send it, for another run
    const movedId = `moved-${randomUUID()}`;
    await stack.temporal.workflowService.startWorkflowExecution({
      namespace: stack.config.temporal.namespace,
      workflowId: movedId,
      workflowType: { name: 'retentionWorkflow' },
      taskQueue: { name: stack.config.temporal.taskQueue },
      input,
      requestId: randomUUID(),
      identity: 'codec test',
    });
    const moved = stack.temporal.workflow.getHandle(movedId);
    try {
      assert.match(await refusal(moved), new RegExp(`written for workflow "${original.workflowId}" is refused in workflow "${movedId}"`));
    } finally {
      await moved.terminate('test: a moved input');
      await original.terminate('test').catch(() => {});
    }
  });

  it("answers the Temporal UI's CORS preflight for its origin, and no other", async () => {
    const preflight = await fetch(`${stack.url}/codec/decode`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://127.0.0.1:8233', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,x-namespace' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'http://127.0.0.1:8233');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /X-Namespace/);
    const foreign = await fetch(`${stack.url}/codec/decode`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    assert.equal(foreign.headers.get('access-control-allow-origin'), null);
  });

  it('outside the sandbox refuses callers without the bearer token, and serves the holder of it', async () => {
    const token = randomBytes(24).toString('hex');
    const staging = await startStack({ env: stagingEnv({ CODEC_ACCESS_TOKEN: token }) });
    try {
      const body = { payloads: [{ metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('"x"').toString('base64') }] };
      const none = await staging.request('POST', '/codec/encode', { json: body });
      assert.deepEqual([none.status, none.body.code, none.body.parameter], [401, '0710000100', 'Authorization']);
      const wrong = await staging.request('POST', '/codec/encode', { json: body, headers: { Authorization: `Bearer ${token.slice(1)}x` } });
      assert.equal(wrong.status, 401);
      const right = await staging.request('POST', '/codec/encode', { json: body, headers: { Authorization: `Bearer ${token}` } });
      assert.equal(right.status, 200, right.text);
    } finally {
      await staging.close();
    }
  });
});
