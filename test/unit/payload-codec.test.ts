// The payload codec alone: AES-256-GCM per payload with the key id, rotation that still reads old
// payloads, and refusals of a changed payload or an unknown key.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Payload } from '@temporalio/common';
import { createEncryptionCodec, ENCRYPTED_ENCODING, sameWorkflow } from '../../temporal/payload-codec.ts';
import { generateCodecKey } from '../../runtime/codec-keys.ts';

const json = (value: unknown): Payload => ({
  metadata: { encoding: new TextEncoder().encode('json/plain') },
  data: new TextEncoder().encode(JSON.stringify(value)),
});
const encodingOf = (p: Payload) => new TextDecoder().decode(p.metadata!.encoding);

describe('payload codec', () => {
  const old = generateCodecKey('test');
  const current = generateCodecKey('test');

  it('encrypts every payload (binary/encrypted, key id in the metadata, nothing in clear) and decrypts it back', async () => {
    const codec = createEncryptionCodec([current]);
    const [sealed] = await codec.encode([json({ firstName: 'Zoë', dob: '1988-04-12' })]);
    assert.equal(encodingOf(sealed!), ENCRYPTED_ENCODING);
    assert.equal(new TextDecoder().decode(sealed!.metadata!['encryption-key-id']), current.id);
    // whole values: two random bytes can spell "Zo", ten cannot spell a date
    const sealedText = Buffer.from(sealed!.data!).toString('utf8') + Buffer.from(sealed!.data!).toString('latin1');
    for (const clear of ['firstName', '1988-04-12', 'Zoë']) assert.equal(sealedText.includes(clear), false, clear);
    const [opened] = await codec.decode([sealed!]);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(opened!.data)), { firstName: 'Zoë', dob: '1988-04-12' });
    const [again] = await codec.encode([json({ firstName: 'Zoë', dob: '1988-04-12' })]);
    assert.notDeepEqual(again!.data, sealed!.data, 'a fresh nonce each time');
  });

  it('after a rotation, encrypts with the new key and still decrypts payloads of the old one', async () => {
    const [before] = await createEncryptionCodec([old]).encode([json('before')]);
    const rotated = createEncryptionCodec([current, old]);
    const [after] = await rotated.encode([json('after')]);
    assert.equal(new TextDecoder().decode(after!.metadata!['encryption-key-id']), current.id);
    const opened = await rotated.decode([before!, after!]);
    assert.deepEqual(
      opened.map((p) => JSON.parse(new TextDecoder().decode(p.data))),
      ['before', 'after'],
    );
  });

  it('refuses a payload that is not encrypted (an input or signal written past Vouch), naming the way to run old histories', async () => {
    const plain = json({ requestId: 'r-1' });
    await assert.rejects(createEncryptionCodec([current]).decode([plain]), /not encrypted \(encoding json\/plain\) is refused.*PAYLOAD_CODEC_ACCEPT_PLAINTEXT/);
    await assert.rejects(createEncryptionCodec([current]).decode([{ data: new Uint8Array([1]) }]), /encoding none/);
  });

  it('passes it through unchanged where told to (histories from before encryption, the replay CLI)', async () => {
    const plain = json({ requestId: 'r-1' });
    assert.deepEqual(await createEncryptionCodec([current], { plaintext: 'pass' }).decode([plain]), [plain]);
    const [sealed] = await createEncryptionCodec([current]).encode([json('x')]);
    const both = await createEncryptionCodec([current], { plaintext: 'pass' }).decode([plain, sealed!]);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(both[1]!.data)), 'x', 'and still decrypts the others');
  });

  it('binds a payload to the workflow the SDK names: read there (or in a run its schedule started) and without a context, refused elsewhere', async () => {
    const codec = createEncryptionCodec([current]);
    const at = (workflowId: string) => ({ type: 'workflow' as const, namespace: 'default', workflowId });
    const [sealed] = await codec.encode([json('x')], at('retention-1'));
    const read = async (context?: ReturnType<typeof at>) => JSON.parse(new TextDecoder().decode((await codec.decode([sealed!], context))[0]!.data));
    assert.equal(await read(at('retention-1')), 'x');
    assert.equal(await read(), 'x', 'the codec endpoint has no context');
    assert.equal(await read({ ...at('retention-1'), type: 'activity', isLocal: false } as never), 'x', "its activities' context names it too");
    await assert.rejects(read(at('retention-2')), /written for workflow "retention-1" is refused in workflow "retention-2"/);
    const renamed = { ...sealed!, metadata: { ...sealed!.metadata, 'encryption-workflow-id': new TextEncoder().encode('retention-2') } };
    await assert.rejects(codec.decode([renamed], at('retention-2')), /Unsupported state or unable to authenticate data/);
    const [scheduled] = await codec.encode([json('y')], at('housekeeping'));
    assert.deepEqual((await codec.decode([scheduled!], at('housekeeping-2026-12-01T00:00:00Z'))).length, 1);
    assert.equal(sameWorkflow('housekeeping', 'housekeeping-other'), false);
    assert.equal(sameWorkflow('a', 'a-2026-12-01T00:00:00Z'), true);
  });

  it('refuses a changed payload and a key that is not in the ring', async () => {
    const codec = createEncryptionCodec([current]);
    const [sealed] = await codec.encode([json('x')]);
    const changed = { ...sealed!, data: Buffer.from(sealed!.data!).map((b, i) => (i === 20 ? b ^ 1 : b)) };
    await assert.rejects(codec.decode([changed]));
    await assert.rejects(createEncryptionCodec([old]).decode([sealed!]), /not in the payload codec key ring/);
  });
});
