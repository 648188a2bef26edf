// The business document manifest (interface 2.9) and the completeness check of a KYB submission.
// The check reads the manifest and nothing else (rule 3): what a client sees listed is exactly what
// the submission is judged on.
import { z } from 'zod';
import { KYB_REQUIRED_DOCUMENT_SLUGS, OWNER_IDENTITY_DOCUMENT_TYPES } from './kyb.ts';
import { offsetOf, pageMeta, pageMetaSchema, type Page, type PageMeta } from './pagination.ts';

const manifestFileSchema = z.object({ fileId: z.string(), fileName: z.string().nullable(), contentType: z.string(), size: z.number(), uploadedAt: z.string() });
export type ManifestFile = z.input<typeof manifestFileSchema>;

const manifestSchema = z.object({
  entityId: z.string(),
  // the business's own documents by requirement slug: every file ever uploaded (rule 1)
  business: z.record(z.string(), z.array(manifestFileSchema)),
  // one entry per declared owner, in declaration order, with the newest file of each kind (rule 2)
  ubos: z.array(z.object({ entityId: z.string(), externalId: z.string().nullable(), documents: z.record(z.string(), z.array(manifestFileSchema)) })),
});
export type Manifest = z.input<typeof manifestSchema>;

/** GET /entity/{entityId}/documents: the manifest, or (page or limit given) one page of it. */
export const manifestAnswerSchema = manifestSchema.extend({
  meta: pageMetaSchema().optional().meta({ description: 'With page or limit: which page of the files, as on the list endpoints' }),
});
export type ManifestAnswer = z.input<typeof manifestAnswerSchema>;

/** A live file as the store lists it: a business document (slug) or an owner's (owner and kind). */
export type LiveFile = ManifestFile & { entityId: string; slug: string; documentType: string | null };

/**
 * The manifest from the live files of the business entity and of its declared owners. An owner's
 * re-upload of a kind retires the earlier files of that kind when it is stored, so each kind lists
 * what is live; files are listed oldest first.
 */
export function buildManifest(entityId: string, owners: readonly { entityId: string; externalId: string | null }[], files: readonly LiveFile[]): Manifest {
  const byUpload = [...files].sort((a, b) => a.uploadedAt.localeCompare(b.uploadedAt) || a.fileId.localeCompare(b.fileId));
  const entry = ({ fileId, fileName, contentType, size, uploadedAt }: LiveFile): ManifestFile => ({ fileId, fileName, contentType, size, uploadedAt });
  const business: Record<string, ManifestFile[]> = {};
  for (const f of byUpload) if (f.entityId === entityId && f.documentType === null) (business[f.slug] ??= []).push(entry(f));
  const ubos = owners.map((o) => {
    const documents: Record<string, ManifestFile[]> = {};
    for (const f of byUpload) if (f.entityId === o.entityId && f.documentType !== null) (documents[f.documentType] ??= []).push(entry(f));
    return { entityId: o.entityId, externalId: o.externalId, documents };
  });
  return { entityId, business, ubos };
}

/**
 * One page of the manifest (v1.0.2): its files in manifest order — the business's by slug, then
 * each owner's by kind — sliced by `page`, in the same shape. Every declared owner stays listed
 * (with the files of this page, if any), so the owners' entity ids are on every page; the union of
 * the pages is the whole manifest. `meta.totalItems` counts files.
 */
export function manifestPage(manifest: Manifest, page: Page): Manifest & { meta: PageMeta } {
  type Placed = { owner: number | null; key: string; file: ManifestFile };
  const all: Placed[] = [
    ...Object.entries(manifest.business).flatMap(([key, files]) => files.map((file) => ({ owner: null, key, file }))),
    ...manifest.ubos.flatMap((o, owner) => Object.entries(o.documents).flatMap(([key, files]) => files.map((file) => ({ owner, key, file })))),
  ];
  const start = offsetOf(page);
  const business: Manifest['business'] = {};
  const ubos: Manifest['ubos'] = manifest.ubos.map((o) => ({ ...o, documents: {} }));
  for (const { owner, key, file } of all.slice(start, start + page.limit)) {
    const into = owner === null ? business : ubos[owner]!.documents;
    (into[key] ??= []).push(file);
  }
  return { entityId: manifest.entityId, business, ubos, meta: pageMeta(page, all.length) };
}

/** The key naming an owner's missing identity document in a refused submission's `missing`. */
export const ownerMissingKey = (ownerEntityId: string) => `${ownerEntityId}:IDENTITY_DOCUMENT`;

/** What a submission still lacks, read from the manifest: each required business slug, and each owner without an identity document. */
export function missingFromManifest(manifest: Manifest): string[] {
  const missing: string[] = KYB_REQUIRED_DOCUMENT_SLUGS.filter((slug) => !(manifest.business[slug]?.length ?? 0));
  for (const o of manifest.ubos) {
    if (!OWNER_IDENTITY_DOCUMENT_TYPES.some((t) => (o.documents[t]?.length ?? 0) > 0)) missing.push(ownerMissingKey(o.entityId));
  }
  return missing;
}
