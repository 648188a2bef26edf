// What an upload may hold (universal KYC files; business documents use the same rule): the content
// type is decided from the bytes (file-type reads their signature), never from the name or the
// client's Content-Type; PDF, JPEG, PNG and HEIC/HEIF images are accepted; an empty file is not.
import { fileTypeFromBuffer } from 'file-type';
import { z } from 'zod';

export const ACCEPTED_UPLOAD_TYPES: Readonly<Record<string, string>> = {
  'application/pdf': 'PDF',
  'image/jpeg': 'JPEG',
  'image/png': 'PNG',
  'image/heic': 'HEIC',
  'image/heif': 'HEIF',
};
export const ACCEPTED_UPLOAD_NAMES = 'PDF, JPEG, PNG or HEIC';

/** A stored file as an upload endpoint answers it. */
export const uploadedFileSchema = z.object({ fileName: z.string().nullable(), contentType: z.string(), size: z.number(), uploadedAt: z.string() });

/** The accepted content type the bytes are, or null when they are none of them. */
export async function acceptedContentType(bytes: Buffer): Promise<string | null> {
  const detected = await fileTypeFromBuffer(bytes);
  return detected && detected.mime in ACCEPTED_UPLOAD_TYPES ? detected.mime : null;
}

/** A file name as kept: the base name only, without control characters, at most 255 characters. */
export function cleanFileName(name: string | null): string | null {
  if (!name) return null;
  const base = name
    .split(/[\\/]/)
    .pop()!
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim();
  return base ? base.slice(0, 255) : null;
}
