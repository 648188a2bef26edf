// The payload codec alone: AES-256-GCM per payload with the key id, rotation that still reads old
// payloads, and refusals of a changed payload or an unknown key.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Payload } from '@temporalio/common';
import { createEncryptionCodec, ENCRYPTED_ENCODING } from '../../temporal/payload-codec.ts';
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

  it('passes payloads that are not encrypted through unchanged (histories from before encryption)', async () => {
    const plain = json({ requestId: 'r-1' });
    assert.deepEqual(await createEncryptionCodec([current]).decode([plain]), [plain]);
  });

  it('refuses a changed payload and a key that is not in the ring', async () => {
    const codec = createEncryptionCodec([current]);
    const [sealed] = await codec.encode([json('x')]);
    const changed = { ...sealed!, data: Buffer.from(sealed!.data!).map((b, i) => (i === 20 ? b ^ 1 : b)) };
    await assert.rejects(codec.decode([changed]));
    await assert.rejects(createEncryptionCodec([old]).decode([sealed!]), /not in the payload codec key ring/);
  });
});
