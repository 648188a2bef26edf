// Temporal connection settings for real clusters: mTLS with a client certificate and key, a private
// CA, and a server name override. A TLS front end that demands a client certificate signed by our
// test CA (the way a self-hosted cluster with mTLS does) stands before the run's dev server;
// certificates are made with openssl for this run only.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { Worker } from '@temporalio/worker';
import { loadConfig, type Config } from '../../runtime/config.ts';
import { createLogger } from '../../runtime/logger.ts';
import { connectClient } from '../../temporal/connection.ts';
import { encryptingDataConverter } from '../../temporal/payload-codec.ts';
import { loadCodecKeys } from '../../runtime/codec-keys.ts';
import { connectWorker } from '../../temporal/worker-connection.ts';
import { housekeepingWorkflow } from '../../workflows/index.ts';
import { testEnv } from '../helpers/stack.ts';

describe('Temporal over mTLS', () => {
  let dir: string;
  let proxy: tls.Server;
  let address: string;
  const file = (name: string) => path.join(dir, name);

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'vouch-mtls-'));
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=Vouch test CA');
    for (const [name, cn, ext] of [
      ['server', 'temporal.test', 'subjectAltName=DNS:temporal.test\nextendedKeyUsage=serverAuth\n'],
      ['client', 'vouch-worker', 'extendedKeyUsage=clientAuth\n'],
    ] as const) {
      await writeFile(file(`${name}.ext`), ext);
      openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
      openssl(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.pem`,
        '-days',
        '1',
        '-extfile',
        `${name}.ext`,
      );
    }
    const [host, port] = testEnv('TEMPORAL_ADDRESS').split(':') as [string, string];
    proxy = tls.createServer(
      {
        key: await readFile(file('server.key')),
        cert: await readFile(file('server.pem')),
        ca: await readFile(file('ca.pem')),
        requestCert: true,
        rejectUnauthorized: true,
        ALPNProtocols: ['h2'],
      },
      (socket) => {
        const upstream = net.connect(Number(port), host);
        socket.pipe(upstream).pipe(socket);
        socket.on('error', () => upstream.destroy());
        upstream.on('error', () => socket.destroy());
      },
    );
    proxy.on('tlsClientError', () => {});
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    address = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((r) => proxy?.close(() => r()));
    await rm(dir, { recursive: true, force: true });
  });

  const config = (env: Record<string, string>): Config =>
    loadConfig({ ...process.env, TEMPORAL_ADDRESS: address, TASK_QUEUE: `mtls-${randomUUID().slice(0, 8)}`, ...env });
  const mtls = () => ({
    TEMPORAL_TLS_CLIENT_CERT_PATH: file('client.pem'),
    TEMPORAL_TLS_CLIENT_KEY_PATH: file('client.key'),
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('ca.pem'),
    TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
  });

  it('runs a workflow with the client and the worker both connected over mTLS', async () => {
    const c = config(mtls());
    const client = await connectClient(c);
    const connection = await connectWorker(c, createLogger('silent'));
    try {
      const worker = await Worker.create({
        connection,
        taskQueue: c.temporal.taskQueue,
        workflowBundle: { codePath: testEnv('WORKFLOW_BUNDLE_PATH') },
        // as every worker: the client refuses what a worker without the codec would write in clear
        dataConverter: encryptingDataConverter(await loadCodecKeys(c)),
        activities: {
          purgeRateLimitWindows: async () => 7,
          ensureWebhookDispatcher: async () => {},
          reconcileDeliveries: async () => 0,
          reconcileBatches: async () => 0,
        },
      });
      const result = await worker.runUntil(
        client.workflow.execute(housekeepingWorkflow, { taskQueue: c.temporal.taskQueue, workflowId: `mtls-${randomUUID()}` }),
      );
      assert.equal(result.rateLimitWindowsPurged, 7);
    } finally {
      await connection.close();
      await client.connection.close();
    }
  });

  it('is refused without a client certificate', async () => {
    const { TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME } = mtls();
    await assert.rejects(async () => {
      const client = await connectClient(config({ TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME }));
      try {
        await client.workflowService.getSystemInfo({});
      } finally {
        await client.connection.close();
      }
    });
  });

  it('refuses a server whose certificate does not carry the expected name', async () => {
    const { TEMPORAL_TLS_SERVER_NAME: _, ...rest } = mtls();
    await assert.rejects(connectWorker(config(rest), createLogger('silent')));
  });

  it('refuses a certificate without its key at start, naming both settings', () => {
    assert.throws(() => loadConfig({ TEMPORAL_TLS_CLIENT_CERT_PATH: file('client.pem') }), /TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH/);
  });
});
