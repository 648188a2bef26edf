// Key files made on first start by processes that start together: every process must read the one
// file that won, whole, and a rotation must never show a reader half a file.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../runtime/config.ts';
import { fileLinkSecret } from '../../runtime/file-store.ts';
import { loadCodecKeys } from '../../runtime/codec-keys.ts';
import { readOrCreateOnce, replaceAtomically } from '../../runtime/secret-file.ts';
import { loadKeyRing } from '../../runtime/signing-keys.ts';

const moduleUrl = new URL('../../runtime/secret-file.ts', import.meta.url).href;
const dir = mkdtempSync(path.join(tmpdir(), 'vouch-secret-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// large enough that a plain write takes a while (and several system calls)
const PAD = 16 * 1024 * 1024;
const contentOf = (writer: number) => JSON.stringify({ writer, pad: 'x'.repeat(PAD) });

/** Runs `readOrCreateOnce(file, its own content)` in a child process; resolves with what it read. */
function racer(file: string, writer: number, startAt: number): Promise<string> {
  // every racer loads, then waits for the same moment, so they really do start together
  const script = `const { readOrCreateOnce } = await import(${JSON.stringify(moduleUrl)});
    const made = JSON.stringify({ writer: ${writer}, pad: 'x'.repeat(${PAD}) });
    while (Date.now() < ${startAt});
    process.stdout.write(readOrCreateOnce(${JSON.stringify(file)}, () => made));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    // 'close', not 'exit': a child can exit before the parent has read all it wrote (16 MB), and a
    // read cut short looked like a second file (the test failed once in a loaded CI run)
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`racer exited ${code}`))));
  });
}

describe('secret files', () => {
  it('made once when 12 processes race: all read the same whole content, no temporary file is left', async () => {
    const file = path.join(dir, 'race', 'ring.json');
    const writers = Array.from({ length: 12 }, (_, i) => i);
    const contents = writers.map(contentOf);
    const startAt = Date.now() + 3000;
    const read = await Promise.all(writers.map((i) => racer(file, i, startAt)));
    assert.equal(new Set(read).size, 1, 'every process read the same file');
    assert.ok(contents.includes(read[0]!), 'and it is one writer’s whole content');
    assert.equal(readFileSync(file, 'utf8'), read[0]);
    assert.deepEqual(readdirSync(path.dirname(file)), ['ring.json']);
  });

  it('keeps an existing file: make() is not called', () => {
    const file = path.join(dir, 'kept.txt');
    assert.equal(
      readOrCreateOnce(file, () => 'first'),
      'first',
    );
    assert.equal(
      readOrCreateOnce(file, () => assert.fail('made again')),
      'first',
    );
  });

  it('replaces a file whole (the old or the new content, never a mix) and leaves no temporary file', () => {
    const file = path.join(dir, 'replaced', 'ring.json');
    readOrCreateOnce(file, () => 'old');
    replaceAtomically(file, 'new');
    assert.equal(readFileSync(file, 'utf8'), 'new');
    assert.deepEqual(readdirSync(path.dirname(file)), ['ring.json']);
  });

  it('fails loudly when the directory cannot be made (a file is in the way)', () => {
    const inTheWay = path.join(dir, 'in-the-way');
    readOrCreateOnce(inTheWay, () => 'a file');
    assert.throws(() => readOrCreateOnce(path.join(inTheWay, 'ring.json'), () => 'x'), { code: 'ENOTDIR' });
  });
});

describe('key files outside the sandbox', () => {
  const production = () => {
    const dataDir = mkdtempSync(path.join(dir, 'production-'));
    return { dataDir, config: loadConfig({ VOUCH_ENVIRONMENT: 'production', DATA_DIR: dataDir }) };
  };

  it('are never generated: each refusal names the setting to supply, and nothing is written', async () => {
    const { dataDir, config } = production();
    await assert.rejects(loadCodecKeys(config), (err: Error) => err instanceof ConfigError && /PAYLOAD_CODEC_KEYS/.test(err.message));
    await assert.rejects(loadKeyRing(config, 'webhook'), (err: Error) => err instanceof ConfigError && /WEBHOOK_SIGNING_KEYS/.test(err.message));
    await assert.rejects(loadKeyRing(config, 'signed-payload'), (err: Error) => err instanceof ConfigError && /SIGNED_PAYLOAD_KEYS/.test(err.message));
    assert.throws(
      () => fileLinkSecret(config),
      (err: Error) => err instanceof ConfigError && /FILE_LINK_SECRET/.test(err.message),
    );
    assert.deepEqual(readdirSync(dataDir), []);
  });

  it('are read when supplied as files', async () => {
    const { dataDir, config } = production();
    const sandbox = loadConfig({ DATA_DIR: dataDir });
    const made = await loadCodecKeys(sandbox); // the sandbox makes one; production reads the same file
    assert.deepEqual(
      (await loadCodecKeys(config)).map((k) => k.id),
      made.map((k) => k.id),
    );
  });
});
