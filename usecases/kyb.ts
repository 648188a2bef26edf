// Universal KYB (interface 2.9, 4.7; issue 11): a BUSINESS entity's profile and declared owners,
// its documents and its owners' documents, the manifest, downloads, and the submission whose
// workflow waits for every owner's KYC decision and decides. The decision arrives by webhook
// (kyb_status_change), so a subscription for it is a prerequisite of submission (1.4).
import { z } from 'zod';
import { KYB_DOCUMENT_SLUGS, KYB_EVENT, OWNER_DOCUMENT_SLUG, OWNER_DOCUMENT_TYPES, mergeBusiness, primaryRole, type KybBusiness, type KybCreate, type KybOwner, type KybPatch, type KybStatus } from '../domain/kyb.ts';
import { buildManifest, missingFromManifest, type Manifest } from '../domain/kyb-manifest.ts';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import { fileKey } from '../files/store.ts';
import { entityType, isMemberOf } from '../store/entities.ts';
import { declaredOwners, fileByStorageKey, latestKybSubmission, liveFileOf, liveKybFiles, loadProfile, openKybSubmission, recordKybFiles, saveProfile, type DeclaredOwner, type OwnerRef } from '../store/kyb.ts';
import { subscribesTo } from '../store/webhooks.ts';
import type { Caller, UseCaseContext } from './context.ts';
import { checkUploads, type FilesRead } from './uploads.ts';

/** The business entity a KYB call names: one of the caller's, and a BUSINESS. */
async function businessEntity({ db }: UseCaseContext, caller: Caller, entityId: string): Promise<Outcome<string>> {
  const type = await entityType(db, caller.id, entityId);
  if (!type) return refuse('entityNotFound', `Entity ${entityId} not found.`, { parameter: 'entityId' });
  if (type !== 'BUSINESS') return refuse('kybNotBusiness', `Entity ${entityId} is an INDIVIDUAL: universal KYB is for BUSINESS entities.`, { parameter: 'entityId' });
  return done(entityId);
}

export type KybProfileSaved = { entityId: string; status: KybStatus; ubos: OwnerRef[] };

const declared = (o: KybOwner): DeclaredOwner => ({
  externalId: o.externalId,
  role: primaryRole(o),
  ownershipPercentage: o.ownershipPercentage,
  details: { firstName: o.firstName, lastName: o.lastName, dob: o.dob, nationality: o.nationality, roles: o.roles ?? ['UBO'] },
});

async function save(ctx: UseCaseContext, caller: Caller, entityId: string, mode: 'create' | 'change', business: (current: unknown) => unknown, owners: readonly KybOwner[] | undefined): Promise<Outcome<KybProfileSaved>> {
  const entity = await businessEntity(ctx, caller, entityId);
  if (!entity.ok) return entity;
  const saved = await saveProfile(ctx.db, { mode, businessId: caller.id, entityId, business, owners: owners?.map(declared) });
  if ('problem' in saved) {
    switch (saved.problem) {
      case 'exists':
        return refuse('kybProfileExists', `Entity ${entityId} already has a KYB profile; change it with PATCH /ukyb.`, { parameter: 'entityId' });
      case 'missing':
        return refuse('kybProfileNotFound', `Entity ${entityId} has no KYB profile yet; create it with POST /ukyb.`, { parameter: 'entityId' });
      case 'owner-is-business': {
        const parameter = `ubos[${saved.index}].externalId`;
        return refuse('invalidRequest', `${parameter}: names a BUSINESS entity of yours; owners are people (INDIVIDUAL entities).`, { parameter });
      }
    }
  }
  if (saved.supersededSubmissionId) {
    // the waiting submission no longer describes the business: wake its workflow so it ends now
    const s = { submissionId: saved.supersededSubmissionId, entityId, deadlineAt: new Date().toISOString(), businessId: caller.id };
    await ctx.start.kybWake(s, { reason: 'profile-changed' }).catch((err: unknown) => ctx.log.warn({ err, entityId }, 'a superseded KYB submission was not woken; it ends at its next look'));
  }
  return done({ entityId, status: saved.status, ubos: saved.owners });
}

/** POST /ukyb: the profile, with its owners (each an INDIVIDUAL entity found by externalId, or created). */
export function createKybProfile(ctx: UseCaseContext, caller: Caller, body: KybCreate): Promise<Outcome<KybProfileSaved>> {
  return save(ctx, caller, body.entityId, 'create', () => body.business, body.ubos);
}

/**
 * PATCH /ukyb: the parts given change; a `ubos` list replaces the declared set. A waiting
 * submission is superseded. Every rule of the business part is a rule of one field, so a valid
 * profile merged with valid changes stays valid.
 */
export function changeKybProfile(ctx: UseCaseContext, caller: Caller, body: KybPatch): Promise<Outcome<KybProfileSaved>> {
  const change = body.business;
  return save(ctx, caller, body.entityId, 'change', (current) => (change ? mergeBusiness(current as KybBusiness, change) : current), body.ubos);
}

export type KybProfileRead = KybProfileSaved & { business: unknown; latestSubmission: { submissionId: string; status: string; deadlineAt: string } | null };

/** GET /ukyb/{entityId}: the profile as saved, its status and its latest submission. */
export async function readKybProfile(ctx: UseCaseContext, caller: Caller, entityId: string): Promise<Outcome<KybProfileRead>> {
  const entity = await businessEntity(ctx, caller, entityId);
  if (!entity.ok) return entity;
  const profile = await loadProfile(ctx.db, caller.id, entityId);
  if (!profile) return refuse('kybProfileNotFound', `Entity ${entityId} has no KYB profile yet; create it with POST /ukyb.`, { parameter: 'entityId' });
  return done({ entityId, status: profile.status, business: profile.business, ubos: profile.owners, latestSubmission: await latestKybSubmission(ctx.db, entityId) });
}

const documentFields = z
  .object({
    entityId: z.uuid({ message: 'entityId must be a UUID' }),
    requirementSlug: z.enum(KYB_DOCUMENT_SLUGS, { message: `requirementSlug must be one of ${KYB_DOCUMENT_SLUGS.join(', ')}` }).optional(),
    memberId: z.uuid({ message: 'memberId must be a UUID' }).optional(),
    documentType: z.enum(OWNER_DOCUMENT_TYPES, { message: `documentType must be one of ${OWNER_DOCUMENT_TYPES.join(', ')}` }).optional(),
  })
  .strict();

export type KybDocumentsUploaded = {
  entityId: string;
  requirementSlug?: string;
  memberId?: string;
  documentType?: string;
  files: { fileName: string | null; contentType: string; size: number; uploadedAt: string }[];
};

/** POST /ukyb/documents: a business document (requirementSlug) or a declared owner's (memberId and documentType). No fileId is answered (4.7). */
export async function uploadKybDocuments(ctx: UseCaseContext, caller: Caller, read: () => Promise<FilesRead>): Promise<Outcome<KybDocumentsUploaded>> {
  const form = await read();
  const fields = documentFields.safeParse(form.ok ? (form.fields ?? {}) : {});
  if (form.ok && !fields.success) {
    const issue = fields.error.issues[0]!;
    const parameter = issue.code === 'unrecognized_keys' ? issue.keys[0]! : issue.path.join('.');
    const missing = issue.code === 'invalid_type' && issue.input === undefined;
    return refuse('invalidRequest', issue.code === 'unrecognized_keys' ? `unknown form field "${parameter}"` : missing ? `${parameter} is required` : issue.message, { parameter });
  }
  const f = fields.success ? fields.data : undefined;
  if (f) {
    const entity = await businessEntity(ctx, caller, f.entityId);
    if (!entity.ok) return entity;
    const forOwner = f.memberId !== undefined || f.documentType !== undefined;
    if (forOwner === (f.requirementSlug !== undefined)) {
      return refuse('invalidRequest', 'Give either requirementSlug (a business document) or memberId and documentType (an owner\'s document).', { parameter: 'requirementSlug' });
    }
    if (forOwner && f.memberId === undefined) return refuse('invalidRequest', 'memberId is required with documentType', { parameter: 'memberId' });
    if (forOwner && f.documentType === undefined) return refuse('invalidRequest', 'documentType is required with memberId', { parameter: 'documentType' });
    if (f.memberId !== undefined && !(await isMemberOf(ctx.db, f.entityId, f.memberId))) {
      return refuse('memberNotFound', `${f.memberId} is not a declared owner of business entity ${f.entityId} (see its profile's ubos).`, { parameter: 'memberId' });
    }
  }
  const checked = await checkUploads(form, 'files');
  if (!checked.ok) return checked;
  if (!f) throw new Error('unreachable: fields are checked before the files');
  const target = f.memberId !== undefined ? { entityId: f.memberId, slug: OWNER_DOCUMENT_SLUG, documentType: f.documentType! } : { entityId: f.entityId, slug: f.requirementSlug!, documentType: null };
  const stored = [];
  for (const file of checked.value) {
    const storageKey = fileKey(caller.id, target.entityId, file.id);
    await ctx.files.put(storageKey, file.bytes, file.contentType);
    stored.push({ id: file.id, fileName: file.fileName, contentType: file.contentType, size: file.size, sha256: file.sha256, storageKey });
  }
  const { uploadedAt } = await recordKybFiles(ctx.db, { businessId: caller.id, businessEntityId: f.entityId, target, files: stored });
  return done({
    entityId: f.entityId,
    ...(f.memberId !== undefined ? { memberId: f.memberId, documentType: f.documentType! } : { requirementSlug: f.requirementSlug! }),
    files: stored.map((s) => ({ fileName: s.fileName, contentType: s.contentType, size: s.size, uploadedAt })),
  });
}

async function manifestOf(ctx: UseCaseContext, entityId: string): Promise<Manifest> {
  const owners = await declaredOwners(ctx.db, entityId);
  return buildManifest(entityId, owners, await liveKybFiles(ctx.db, entityId, owners.map((o) => o.entityId)));
}

/** GET /entity/{entityId}/documents: the manifest (2.9) of any existing entity of the caller's. */
export async function readManifest(ctx: UseCaseContext, caller: Caller, entityId: string): Promise<Outcome<Manifest>> {
  if (!(await entityType(ctx.db, caller.id, entityId))) return refuse('entityNotFound', `Entity ${entityId} not found.`, { parameter: 'entityId' });
  return done(await manifestOf(ctx, entityId));
}

export type KybSubmitted = { entityId: string; submissionId: string; status: 'IN_REVIEW'; deadlineAt: string };

/** POST /ukyb/submit: complete (by the manifest's check) → a submission, decided by its workflow; else 400 with `missing`. */
export async function submitKyb(ctx: UseCaseContext, caller: Caller, entityId: string): Promise<Outcome<KybSubmitted>> {
  const entity = await businessEntity(ctx, caller, entityId);
  if (!entity.ok) return entity;
  if (!(await subscribesTo(ctx.db, caller.id, KYB_EVENT.eventType))) {
    return refuse('kybWebhookRegistrationRequired', `The KYB decision is delivered only by webhook: register a subscription for ${KYB_EVENT.eventType} with POST /notification first.`);
  }
  if (!(await loadProfile(ctx.db, caller.id, entityId))) return refuse('kybProfileNotFound', `Entity ${entityId} has no KYB profile yet; create it with POST /ukyb.`, { parameter: 'entityId' });
  const missing = missingFromManifest(await manifestOf(ctx, entityId));
  if (missing.length > 0) {
    return refuse('kybIncomplete', `The submission is incomplete: ${missing.join(', ')}.`, { parameter: 'entityId', extra: { missing } });
  }
  const s = await openKybSubmission(ctx.db, { businessId: caller.id, entityId, deadlineSeconds: ctx.config.universalKyb.deadlineSeconds });
  await ctx.start.kybWake({ submissionId: s.submissionId, entityId, deadlineAt: s.deadlineAt, businessId: caller.id }, { reason: 'submitted' });
  return done({ entityId, submissionId: s.submissionId, status: 'IN_REVIEW', deadlineAt: s.deadlineAt });
}

/** GET /entity/{entityId}/file/{fileId}/presigned-url: a download URL for a live file of that entity. */
export async function presignFile(ctx: UseCaseContext, caller: Caller, entityId: string, fileId: string, baseUrl: string): Promise<Outcome<{ url: string; expiresAt: string }>> {
  const file = await liveFileOf(ctx.db, caller.id, entityId, fileId);
  if (!file) return refuse('fileNotFound', `No file ${fileId} belongs to entity ${entityId}.`, { parameter: 'fileId' });
  const link = await ctx.files.presign(file.storageKey, { expiresInSeconds: ctx.config.files.presignedUrlTtlSeconds, fileName: file.fileName, contentType: file.contentType });
  return done({ url: new URL(link.url, `${ctx.config.files.publicBaseUrl ?? baseUrl}/`).toString(), expiresAt: link.expiresAt });
}

export type Download = { bytes: Buffer; contentType: string; fileName: string | null };

/** GET /files/{link}: the bytes behind a local store's download link, without an API key; expired or changed links are refused. */
export async function downloadFile(ctx: UseCaseContext, link: string): Promise<Outcome<Download>> {
  const opened = ctx.files.openLink?.(link, new Date());
  if (!opened) return refuse('fileNotFound', 'This file store serves no download links of ours.', { parameter: 'link' });
  if (!opened.ok) {
    return refuse('downloadLinkRefused', opened.reason === 'expired' ? 'The download link has expired; ask for a new one.' : 'The download link is not valid (changed or not ours).', { parameter: 'link' });
  }
  const file = await fileByStorageKey(ctx.db, opened.link.key);
  const bytes = file && (await ctx.files.get(opened.link.key));
  if (!file || !bytes) return refuse('fileNotFound', 'The file is gone (its entity was deleted).', { parameter: 'link' });
  return done({ bytes, contentType: file.contentType, fileName: file.fileName });
}
