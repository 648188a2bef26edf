// The file store in S3-compatible object storage (@aws-sdk/client-s3): one bucket, keys under an
// optional prefix. Bytes are uploaded from the received file as a stream and read back as one. A
// download link (ours, checked by the API) redirects to a presigned GET URL of the storage that
// lives DIRECT_URL_SECONDS (@aws-sdk/s3-request-presigner). Credentials come from the SDK's usual
// chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile, or the instance's role). The SDK is
// loaded on the store's first use, not at import: a process on a local directory (and every CLI
// command) never pays its second of loading.
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { attachmentDisposition, isDocumentKey, isDocumentPrefix, isFileKey, type FileStore } from './file-store.ts';

export type S3Settings = {
  bucket: string;
  region: string;
  /** An S3-compatible endpoint (MinIO, Ceph, moto, …); AWS itself when absent. */
  endpoint: string | undefined;
  /** Path-style addressing (bucket in the path), which most S3-compatible servers need. */
  forcePathStyle: boolean;
  /** Prepended to every key (for a bucket shared with other data). */
  prefix: string;
  /** Documents (audit checkpoints) are written under Object Lock in COMPLIANCE mode for this many days (0: no lock; the bucket must have Object Lock on). */
  objectLockDays: number;
};

type Sdk = { s3: typeof import('@aws-sdk/client-s3'); getSignedUrl: (typeof import('@aws-sdk/s3-request-presigner'))['getSignedUrl']; client: S3Client };

export function s3Store(s: S3Settings): FileStore {
  let loading: Promise<Sdk> | undefined;
  /** The SDK and the client, made on first use. */
  const sdk = () =>
    (loading ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/s3-request-presigner')]).then(([s3, presigner]) => ({
      s3,
      getSignedUrl: presigner.getSignedUrl,
      client: new s3.S3Client({ region: s.region, forcePathStyle: s.forcePathStyle, ...(s.endpoint ? { endpoint: s.endpoint } : {}) }),
    })));
  // a file's bytes are under a file key, never elsewhere: a key row forged in the database cannot make us remove a checkpoint
  const Key = (key: string) => {
    if (!isFileKey(key)) throw new Error(`not a file key: ${key}`);
    return `${s.prefix}${key}`;
  };
  const DocumentKey = (key: string) => {
    if (!isDocumentKey(key)) throw new Error(`not a document key: ${key}`);
    return `${s.prefix}${key}`;
  };
  return {
    kind: 's3',
    async put(key, file, contentType) {
      const { s3, client } = await sdk();
      const body = createReadStream(file.path);
      try {
        await client.send(new s3.PutObjectCommand({ Bucket: s.bucket, Key: Key(key), Body: body, ContentLength: file.size, ContentType: contentType }));
      } finally {
        body.destroy(); // a refused or failed upload leaves the stream unread: its descriptor is closed here
      }
    },
    async open(key) {
      const { s3, client } = await sdk();
      try {
        const out = await client.send(new s3.GetObjectCommand({ Bucket: s.bucket, Key: Key(key) }));
        return out.Body ? { stream: out.Body as Readable, size: Number(out.ContentLength ?? 0) } : null;
      } catch (err) {
        if (err instanceof s3.NoSuchKey) return null;
        throw err;
      }
    },
    async delete(key) {
      const { s3, client } = await sdk();
      await client.send(new s3.DeleteObjectCommand({ Bucket: s.bucket, Key: Key(key) }));
    },
    async writeDocument(key, bytes) {
      const { s3, client } = await sdk();
      const lock =
        s.objectLockDays > 0 ? { ObjectLockMode: 'COMPLIANCE' as const, ObjectLockRetainUntilDate: new Date(Date.now() + s.objectLockDays * 86_400_000) } : {};
      // IfNoneMatch: written once, never over another document of the key
      await client.send(
        new s3.PutObjectCommand({
          Bucket: s.bucket,
          Key: DocumentKey(key),
          Body: bytes,
          ContentType: 'application/json',
          IfNoneMatch: '*',
          ...lock,
          ...(s.objectLockDays > 0 ? { ChecksumAlgorithm: 'SHA256' as const } : {}),
        }),
      );
    },
    async readDocument(key) {
      const { s3, client } = await sdk();
      try {
        const out = await client.send(new s3.GetObjectCommand({ Bucket: s.bucket, Key: DocumentKey(key) }));
        return out.Body ? Buffer.from(await out.Body.transformToByteArray()) : null;
      } catch (err) {
        if (err instanceof s3.NoSuchKey) return null;
        throw err;
      }
    },
    async listDocuments(prefix) {
      const { s3, client } = await sdk();
      if (!isDocumentPrefix(prefix)) throw new Error(`not a document prefix: ${prefix}`);
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new s3.ListObjectsV2Command({ Bucket: s.bucket, Prefix: `${s.prefix}${prefix}`, ContinuationToken: token }));
        for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key.slice(s.prefix.length));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return keys.filter(isDocumentKey).sort();
    },
    async directUrl(key, options) {
      const { s3, client, getSignedUrl } = await sdk();
      const command = new s3.GetObjectCommand({
        Bucket: s.bucket,
        Key: Key(key),
        ResponseContentType: options.contentType,
        ResponseContentDisposition: attachmentDisposition(options.fileName),
      });
      return getSignedUrl(client, command, { expiresIn: options.expiresInSeconds });
    },
  };
}
