// An S3-compatible server for tests: moto's server mode (PyPI, installed into .tools/venv by npm
// install), on a free port of 127.0.0.1, with one bucket. It stores objects for real; it does not
// check presigned URLs' signatures or expiry (that is the real storage's part).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { venvBin } from '../../dev/temporal-cli.ts';
import { freePort } from './ports.ts';
import { eventually } from './eventually.ts';

export const MOTO_CREDENTIALS = { accessKeyId: 'vouch-test', secretAccessKey: 'vouch-test-secret' };

export async function startMoto(bucket: string): Promise<{ endpoint: string; client: S3Client; close(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(path.join(venvBin, 'moto_server'), ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const endpoint = `http://127.0.0.1:${port}`;
  await eventually(
    'moto_server answering',
    async () => {
      if (child.exitCode !== null) throw new Error(`moto_server exited: ${stderr}`);
      return fetch(`${endpoint}/moto-api/`).then(
        (r) => r.ok,
        () => false,
      );
    },
    { everyMs: 100, state: () => stderr },
  );
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: MOTO_CREDENTIALS });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    endpoint,
    client,
    async close() {
      client.destroy();
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
    },
  };
}
