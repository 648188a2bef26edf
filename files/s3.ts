// The file store in S3-compatible object storage (@aws-sdk/client-s3): one bucket, keys under an
// optional prefix. Bytes are uploaded from the received file as a stream and read back as one. A
// download link (ours, checked by the API) redirects to a presigned GET URL of the storage that
// lives DIRECT_URL_SECONDS (@aws-sdk/s3-request-presigner). Credentials come from the SDK's usual
// chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile, or the instance's role).
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { attachmentDisposition, type FileStore } from './store.ts';

export type S3Settings = {
  bucket: string;
  region: string;
  /** An S3-compatible endpoint (MinIO, Ceph, moto, …); AWS itself when absent. */
  endpoint: string | undefined;
  /** Path-style addressing (bucket in the path), which most S3-compatible servers need. */
  forcePathStyle: boolean;
  /** Prepended to every key (for a bucket shared with other data). */
  prefix: string;
};

export function s3Store(s: S3Settings): FileStore {
  const client = new S3Client({ region: s.region, forcePathStyle: s.forcePathStyle, ...(s.endpoint ? { endpoint: s.endpoint } : {}) });
  const Key = (key: string) => `${s.prefix}${key}`;
  return {
    kind: 's3',
    async put(key, file, contentType) {
      const body = createReadStream(file.path);
      try {
        await client.send(new PutObjectCommand({ Bucket: s.bucket, Key: Key(key), Body: body, ContentLength: file.size, ContentType: contentType }));
      } finally {
        body.destroy(); // a refused or failed upload leaves the stream unread: its descriptor is closed here
      }
    },
    async open(key) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket: s.bucket, Key: Key(key) }));
        return out.Body ? { stream: out.Body as Readable, size: Number(out.ContentLength ?? 0) } : null;
      } catch (err) {
        if (err instanceof NoSuchKey) return null;
        throw err;
      }
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket: s.bucket, Key: Key(key) }));
    },
    async directUrl(key, options) {
      const command = new GetObjectCommand({
        Bucket: s.bucket,
        Key: Key(key),
        ResponseContentType: options.contentType,
        ResponseContentDisposition: attachmentDisposition(options.fileName),
      });
      return getSignedUrl(client, command, { expiresIn: options.expiresInSeconds });
    },
  };
}
