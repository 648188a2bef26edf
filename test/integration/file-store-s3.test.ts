// The object-storage file store (FILE_STORE=s3) against an S3-compatible server (moto's server mode,
// over HTTP: no mock of the SDK): a business's and an owner's KYB documents and a person's universal
// KYC file go into the bucket under business/entity/file keys, a presigned URL downloads the bytes
// without an API key (our link, checked at each use, redirecting to the storage's own URL for 60 s),
// a replaced file's old link answers 404, and deleting the entity removes its objects. The 403 for
// a changed or expired link is tested on the local store (kyb.test.ts): the check is the same.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { s3Store } from '../../files/s3.ts';
import { MOTO_CREDENTIALS, startMoto } from '../helpers/moto.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { documentsForm, FILES, filesForm } from '../helpers/ukyc.ts';
import { entity } from '../helpers/world.ts';

const BUCKET = 'vouch-files';

describe('file store on S3-compatible object storage', () => {
  let moto: Awaited<ReturnType<typeof startMoto>>;
  let stack: Stack;
  let key: string;
  let businessId: string;
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

  before(async () => {
    moto = await startMoto(BUCKET);
    process.env.AWS_ACCESS_KEY_ID = MOTO_CREDENTIALS.accessKeyId; // the SDK's usual chain, as in production
    process.env.AWS_SECRET_ACCESS_KEY = MOTO_CREDENTIALS.secretAccessKey;
    stack = await startStack({
      env: {
        FILE_STORE: 's3',
        S3_BUCKET: BUCKET,
        S3_ENDPOINT: moto.endpoint,
        S3_KEY_PREFIX: 'test/',
        API_RATE_LIMIT_PER_SECOND: '100000',
        WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      },
    });
    ({ apiKey: key, businessId } = await stack.newBusiness({ name: 'S3' }));
  });
  after(async () => {
    await stack.close();
    await moto.close();
    process.env.AWS_ACCESS_KEY_ID = saved.id;
    process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
    if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
  });

  const objects = async (prefix: string) =>
    ((await moto.client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!);

  it('stores KYB documents in the bucket, presigns a URL that downloads them without an API key, and removes them with the entity', async () => {
    const company = await entity(stack, key, `s3-co-${randomUUID()}`, 'BUSINESS');
    const profile = await stack.request('POST', '/ukyb', {
      key,
      json: {
        entityId: company,
        business: {
          legalName: 'Bucket Ltd',
          registrationNumber: '9',
          country: 'DEU',
          address: { country: 'DEU', postCode: '10115', street: 'Invalidenstraße' },
        },
        ubos: [
          { externalId: `s3-owner-${randomUUID()}`, firstName: 'Emmy', lastName: 'Noether', dob: '1982-03-23', nationality: 'DEU', ownershipPercentage: 100 },
        ],
      },
    });
    assert.equal(profile.status, 201, profile.text);
    const ownerId = profile.body.ubos[0].entityId as string;
    const send = (fields: Record<string, string>, bytes: Buffer, name: string) => {
      const form = documentsForm(fields, [{ bytes, name }]);
      return stack.request('POST', '/ukyb/documents', { key, form });
    };
    assert.equal((await send({ entityId: company, requirementSlug: 'ukyb-certificate-of-incorporation' }, FILES.png, 'Zertifikat.png')).status, 201);
    assert.equal((await send({ entityId: company, memberId: ownerId, documentType: 'PASSPORT' }, FILES.pdf, 'pass.pdf')).status, 201);
    const manifest = (await stack.request('GET', `/entity/${company}/documents`, { key })).body;
    const certificate = manifest.business['ukyb-certificate-of-incorporation'][0].fileId as string;
    const passport = manifest.ubos[0].documents.PASSPORT[0].fileId as string;

    assert.deepEqual(await objects(`test/${businessId}/${company}/`), [`test/${businessId}/${company}/${certificate}`]);
    assert.deepEqual(await objects(`test/${businessId}/${ownerId}/`), [`test/${businessId}/${ownerId}/${passport}`]);
    const stored = await moto.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `test/${businessId}/${company}/${certificate}` }));
    assert.deepEqual(Buffer.from(await stored.Body!.transformToByteArray()), FILES.png);
    assert.equal(stored.ContentType, 'image/png');

    // the link is ours (checked at every use); it redirects to the storage's own URL, valid 60 s
    const signed = await stack.request('GET', `/entity/${company}/file/${certificate}/presigned-url`, { key });
    assert.equal(signed.status, 200, signed.text);
    assert.ok(signed.body.url.startsWith(`${stack.url}/files/`), signed.body.url);
    assert.ok(Math.abs(Date.parse(signed.body.expiresAt) - (Date.now() + 900_000)) < 10_000);
    const hop = await fetch(signed.body.url, { redirect: 'manual' });
    assert.equal(hop.status, 302);
    const direct = new URL(hop.headers.get('location')!);
    assert.equal(direct.origin, moto.endpoint);
    assert.equal(direct.searchParams.get('X-Amz-Expires'), '60');
    assert.match(direct.searchParams.get('X-Amz-Signature') ?? '', /^[0-9a-f]{64}$/);
    assert.match(direct.searchParams.get('X-Amz-Credential') ?? '', new RegExp(`^${MOTO_CREDENTIALS.accessKeyId}/`));
    const got = await fetch(signed.body.url);
    assert.equal(got.status, 200);
    assert.deepEqual(Buffer.from(await got.arrayBuffer()), FILES.png);
    assert.equal(got.headers.get('content-type'), 'image/png');
    assert.match(got.headers.get('content-disposition') ?? '', /filename\*=UTF-8''Zertifikat\.png/);
    assert.equal((await stack.request('GET', `/entity/${company}/file/${passport}/presigned-url`, { key })).status, 404);
    const viaOwner = await stack.request('GET', `/entity/${ownerId}/file/${passport}/presigned-url`, { key });
    assert.deepEqual(Buffer.from(await (await fetch(viaOwner.body.url)).arrayBuffer()), FILES.pdf);
    // the owner's passport replaced: the link issued before answers 404, whatever the storage's own URLs would do
    assert.equal((await send({ entityId: company, memberId: ownerId, documentType: 'PASSPORT' }, FILES.jpeg, 'new-pass.jpg')).status, 201);
    assert.equal((await fetch(viaOwner.body.url, { redirect: 'manual' })).status, 404);
    assert.equal((await fetch(`${stack.url}/files/anything`)).status, 403);

    assert.equal((await stack.request('DELETE', `/entity/${ownerId}`, { key })).status, 204);
    assert.deepEqual(await objects(`test/${businessId}/${ownerId}/`), [], 'both passports, the replaced one too');
    assert.equal((await stack.request('DELETE', `/entity/${company}`, { key })).status, 204);
    assert.deepEqual(await objects(`test/${businessId}/`), []);
  });

  it('keeps universal KYC files in the same store', async () => {
    const person = await entity(stack, key, `s3-person-${randomUUID()}`);
    await stack.request('POST', '/notification', {
      key,
      json: { notificationChannel: 'WEBHOOK', notificationTypes: ['account_status_change'], webhookUrl: 'http://127.0.0.1:9/hooks' },
    });
    const up = await stack.request('POST', `/entity/${person}/requirement-slug/ukyc-id-document/upload`, {
      key,
      form: filesForm([{ bytes: FILES.jpeg, name: 'id.jpg' }]),
    });
    assert.equal(up.status, 201, up.text);
    const [only] = await objects(`test/${businessId}/${person}/`);
    assert.ok(only, 'the file is in the bucket');
  });

  it('answers null for a missing key, streams what it stores, and deletes idempotently (the store itself)', async () => {
    const store = s3Store({ bucket: BUCKET, region: 'us-east-1', endpoint: moto.endpoint, forcePathStyle: true, prefix: 'unit/', objectLockDays: 0 });
    const k = `${randomUUID()}/${randomUUID()}/${randomUUID()}`;
    assert.equal(await store.open(k), null);
    const dir = await mkdtemp(path.join(tmpdir(), 'vouch-s3-'));
    await writeFile(path.join(dir, 'up.part'), FILES.pdf);
    await store.put(k, { path: path.join(dir, 'up.part'), size: FILES.pdf.length }, 'application/pdf');
    const opened = await store.open(k);
    assert.equal(opened?.size, FILES.pdf.length);
    assert.deepEqual(Buffer.concat(await opened!.stream.toArray()), FILES.pdf);
    await store.delete(k);
    await store.delete(k);
    assert.equal(await store.open(k), null);
    await rm(dir, { recursive: true, force: true });
  });

  it('closes the file it read from when an upload fails (the storage refuses it, or cannot be reached)', async () => {
    const refusing = s3Store({ bucket: 'no-such-bucket', region: 'us-east-1', endpoint: moto.endpoint, forcePathStyle: true, prefix: '', objectLockDays: 0 });
    const unreachable = s3Store({ bucket: BUCKET, region: 'us-east-1', endpoint: 'http://127.0.0.1:1', forcePathStyle: true, prefix: '', objectLockDays: 0 });
    const dir = await mkdtemp(path.join(tmpdir(), 'vouch-s3-'));
    const file = path.join(dir, 'refused.part');
    await writeFile(file, Buffer.alloc(256 * 1024, 1));
    const openOn = async () => {
      const fds = await readdir('/proc/self/fd');
      const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
      return targets.filter((t) => t === file).length;
    };
    for (const store of [refusing, unreachable, refusing, unreachable])
      await assert.rejects(store.put(`${randomUUID()}/${randomUUID()}/${randomUUID()}`, { path: file, size: 256 * 1024 }, 'application/pdf'));
    await new Promise((r) => setTimeout(r, 100)); // a destroyed stream closes its descriptor on a later turn
    assert.equal(await openOn(), 0, 'no descriptor left open on the file');
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps documents (audit checkpoints) written once, listed by prefix, under Object Lock where the bucket has it', async () => {
    const locked = `vouch-locked-${randomUUID().slice(0, 8)}`;
    await moto.client.send(new CreateBucketCommand({ Bucket: locked, ObjectLockEnabledForBucket: true }));
    const store = s3Store({ bucket: locked, region: 'us-east-1', endpoint: moto.endpoint, forcePathStyle: true, prefix: 'p/', objectLockDays: 30 });
    const business = randomUUID();
    const prefix = `audit-checkpoints/${business}/`;
    assert.deepEqual(await store.listDocuments(prefix), []);
    const [first, second] = [`${prefix}000000000000002-a.json`, `${prefix}000000000000001-b.json`];
    await store.writeDocument(first, Buffer.from('{"seq":2}'));
    await store.writeDocument(second, Buffer.from('{"seq":1}'));
    await assert.rejects(store.writeDocument(first, Buffer.from('{"seq":3}')), 'never over another');
    assert.deepEqual(await store.listDocuments(prefix), [second, first], 'in key order');
    assert.deepEqual(await store.readDocument(first), Buffer.from('{"seq":2}'));
    assert.equal(await store.readDocument(`${prefix}000000000000009-z.json`), null);
    const head = await moto.client.send(new HeadObjectCommand({ Bucket: locked, Key: `p/${first}` }));
    assert.equal(head.ObjectLockMode, 'COMPLIANCE');
    assert.ok(head.ObjectLockRetainUntilDate!.getTime() > Date.now() + 29 * 86_400_000);
    await assert.rejects(store.listDocuments('../etc/'), /not a document prefix/);
    // a key a forged row names (file_store_cleanup, a file's storage_key) never removes a document: only file keys are deleted
    await assert.rejects(store.delete(first), /not a file key/);
    assert.ok(await store.readDocument(first), 'the checkpoint is still there');
  });
});
