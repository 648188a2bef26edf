// Downloads of an entity's files (interface 4.7; KYB and universal KYC documents alike): a presigned
// URL per file, and the bytes behind it without an API key.
import { z } from 'zod';
import { MAX_LINK_LENGTH } from '../../files/download-links.ts';
import { attachmentDisposition } from '../../files/file-store.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import { downloadFile, presignedUrlSchema, presignFile } from '../../usecases/downloads.ts';
import { route, type Presented } from '../route.ts';

/** Listed with business verification in the API reference, where the manifest that names the files is. */
const tag = 'Business verification' as const;

export function downloadRoutes(context: UseCaseContext) {
  const { presignedUrlTtlSeconds } = context.settings.files;
  return [
    route({
      method: 'get',
      path: '/entity/:entityId/file/:fileId/presigned-url',
      operationId: 'presignFile',
      summary: 'A download URL for one file of an entity',
      description:
        `The file must belong to the entity in the path (an owner's files: the owner's entityId). ` +
        `The URL downloads the bytes without an API key for ${presignedUrlTtlSeconds / 60} minutes ` +
        `(PRESIGNED_URL_TTL_SECONDS); expired or changed, it answers 403.`,
      tag,
      params: z.object({ entityId: z.uuid({ message: 'entityId must be a UUID' }), fileId: z.uuid({ message: 'fileId must be a UUID' }) }).strict(),
      responses: { 200: { description: 'The URL', schema: presignedUrlSchema } },
      errors: ['invalidRequest', 'fileNotFound'], // any miss (entity, file, business) is fileNotFound: ids leak nothing
      handler: ({ ctx, params, business }) => presignFile(context, business, params.entityId, params.fileId, `${ctx.protocol}://${ctx.host}`),
    }),
    route({
      method: 'get',
      path: '/files/:link',
      operationId: 'downloadFile',
      summary: 'Download a file through a presigned link (no API key)',
      description:
        'The links GET /entity/{entityId}/file/{fileId}/presigned-url gives. Each use is checked: ' +
        '403 when expired or changed, 404 once the file was replaced or its entity deleted. With ' +
        'object storage (FILE_STORE=s3) the answer is a redirect to a URL of the storage itself, ' +
        'valid 60 seconds.',
      tag,
      auth: false,
      params: z.object({ link: z.string().min(1).max(MAX_LINK_LENGTH) }).strict(),
      responses: {
        200: { description: 'The bytes', contentType: 'application/octet-stream', schema: z.string() },
        302: { description: 'Object storage: the bytes are at the Location, for 60 seconds' },
      },
      errors: ['invalidRequest', 'downloadLinkRefused', 'fileNotFound'],
      handler: ({ ctx, params }) => downloadFile(context, params.link, String(ctx.state.requestId ?? '') || null),
      present: (d): Presented =>
        'redirectTo' in d
          ? { status: 302, body: '', headers: { Location: d.redirectTo, 'Cache-Control': 'private, no-store' } }
          : {
              status: 200,
              body: d.stream,
              headers: {
                'Content-Type': d.contentType,
                'Content-Length': String(d.size),
                'Content-Disposition': attachmentDisposition(d.fileName),
                'Cache-Control': 'private, no-store',
                'X-Content-Type-Options': 'nosniff',
              },
            },
    }),
  ];
}
