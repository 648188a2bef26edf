// Universal KYB (interface 2.9, 4.7; issue 11): a BUSINESS entity's profile and declared owners,
// its documents and its owners' documents, the manifest, downloads, and the submission whose
// workflow waits for every owner's KYC decision and decides. The decision arrives by webhook
// (kyb_status_change), so a subscription for it is a prerequisite of submission (1.4).
import { z } from 'zod';
import {
  KYB_DOCUMENT_SLUGS,
  KYB_EVENT,
  KYB_STAGES,
  KYB_SUBMISSION_STAGES,
  kybSubmissionStageOf,
  OWNER_DOCUMENT_SLUG,
  OWNER_DOCUMENT_TYPES,
  mergeBusiness,
  primaryRole,
  type KybBusiness,
  type KybCreate,
  type KybOwner,
  type KybPatch,
  kybStageOf,
} from '../domain/kyb.ts';
import { buildManifest, manifestPage, missingFromManifest, type Manifest, type ManifestAnswer } from '../domain/kyb-manifest.ts';
import type { Page } from '../domain/pagination.ts';
import { done, refuse, type Outcome, type Refusal } from '../domain/outcome.ts';
import { uploadedFileSchema } from '../domain/uploads.ts';
import { webhookPrerequisite } from '../domain/webhook-prerequisite.ts';
import { entityType, isOwnerOf } from '../store/entities.ts';
import { declaredOwners, latestKybSubmission, liveKybFiles, loadProfile, openKybSubmission, recordKybFiles, type DeclaredOwner } from '../store/kyb.ts';
import { saveProfile } from '../onboarding/kyb-profiles.ts';
import { subscribedTypes } from '../store/subscriptions.ts';
import type { Caller, UseCaseContext } from './context.ts';
import { putUploads, removeBytes } from './stored-files.ts';
import { checkUploads, type FilesRead } from './uploads.ts';

/** The business entity a KYB call names: one of the caller's, and a BUSINESS. */
async function businessEntity({ db }: UseCaseContext, caller: Caller, entityId: string): Promise<Outcome<string>> {
  const type = await entityType(db, caller.id, entityId);
  if (!type)
    return refuse('entityNotFound', `Entity ${entityId} not found in your business; check the id (GET /entity lists your entities).`, {
      parameter: 'entityId',
    });
  if (type !== 'BUSINESS')
    return refuse(
      'kybNotBusiness',
      `Entity ${entityId} is an INDIVIDUAL: universal KYB is for BUSINESS entities; verify a ` +
        `person with the hosted SDK (POST /entity/${entityId}/kyc) or universal KYC (POST /entity/` +
        `${entityId}/requirement).`,
      { parameter: 'entityId' },
    );
  return done(entityId);
}

/** The stage a read tells, never the outcome (domain/kyb.ts kybStageOf). */
export const KYB_STATUS_TEXT =
  'DRAFT (saved, not submitted since its last change), IN_REVIEW (a submission waits for its owners) or DECIDED; ' +
  `the outcome is told by the ${KYB_EVENT.eventType} webhook alone (interface 1.4)`;

const ownerRefSchema = z.object({ entityId: z.string(), externalId: z.string().nullable() });
/** POST and PATCH /ukyb: the profile as saved. */
export const kybProfileSavedSchema = z.object({
  entityId: z.string(),
  status: z.enum(KYB_STAGES).meta({ description: KYB_STATUS_TEXT }),
  ubos: z.array(ownerRefSchema),
});
export type KybProfileSaved = z.input<typeof kybProfileSavedSchema>;

const declared = (o: KybOwner): DeclaredOwner => ({
  externalId: o.externalId,
  role: primaryRole(o),
  ownershipPercentage: o.ownershipPercentage,
  details: { firstName: o.firstName, lastName: o.lastName, dob: o.dob, nationality: o.nationality, roles: o.roles ?? ['UBO'] },
});

async function save(
  context: UseCaseContext,
  caller: Caller,
  entityId: string,
  mode: 'create' | 'change',
  business: (current: unknown) => unknown,
  owners: readonly KybOwner[] | undefined,
): Promise<Outcome<KybProfileSaved>> {
  const entity = await businessEntity(context, caller, entityId);
  if (!entity.ok) return entity;
  const saved = await saveProfile(context.db, { mode, businessId: caller.id, entityId, business, owners: owners?.map(declared) });
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
    await context.start
      .kybProfileChanged(s)
      .catch((err: unknown) => context.log.warn({ err, entityId }, 'a superseded KYB submission was not woken; it ends at its next look'));
  }
  return done({ entityId, status: kybStageOf(saved.status), ubos: saved.owners });
}

/** POST /ukyb: the profile, with its owners (each an INDIVIDUAL entity found by externalId, or created). */
export function createKybProfile(context: UseCaseContext, caller: Caller, body: KybCreate): Promise<Outcome<KybProfileSaved>> {
  return save(context, caller, body.entityId, 'create', () => body.business, body.ubos);
}

/**
 * PATCH /ukyb: the parts given change; a `ubos` list replaces the declared set. A waiting
 * submission is superseded. Every rule of the business part is a rule of one field, so a valid
 * profile merged with valid changes stays valid.
 */
export function changeKybProfile(context: UseCaseContext, caller: Caller, body: KybPatch): Promise<Outcome<KybProfileSaved>> {
  const change = body.business;
  return save(context, caller, body.entityId, 'change', (current) => (change ? mergeBusiness(current as KybBusiness, change) : current), body.ubos);
}

export const kybProfileReadSchema = kybProfileSavedSchema.extend({
  business: z.record(z.string(), z.unknown()),
  latestSubmission: z
    .object({
      submissionId: z.string(),
      status: z
        .enum(KYB_SUBMISSION_STAGES)
        .meta({ description: 'The stage, as verification_status_change names it; never the outcome (1.4: the webhook alone tells it).' }),
      deadlineAt: z.string(),
    })
    .nullable(),
});
type KybProfileRead = z.input<typeof kybProfileReadSchema>;

/** GET /ukyb/{entityId}: the profile as saved, its status and its latest submission. */
export async function readKybProfile(context: UseCaseContext, caller: Caller, entityId: string): Promise<Outcome<KybProfileRead>> {
  const entity = await businessEntity(context, caller, entityId);
  if (!entity.ok) return entity;
  const profile = await loadProfile(context.db, caller.id, entityId);
  if (!profile) return refuse('kybProfileNotFound', `Entity ${entityId} has no KYB profile yet; create it with POST /ukyb.`, { parameter: 'entityId' });
  const latest = await latestKybSubmission(context.db, entityId);
  const latestSubmission = latest && { ...latest, status: kybSubmissionStageOf(latest.status) };
  // the stored business part is a KybBusiness: every write checks it (kybCreate, kybPatch)
  return done({ entityId, status: kybStageOf(profile.status), business: profile.business as KybBusiness, ubos: profile.owners, latestSubmission });
}

const documentFields = z
  .object({
    entityId: z.uuid({ message: 'entityId must be a UUID' }),
    requirementSlug: z.enum(KYB_DOCUMENT_SLUGS, { message: `requirementSlug must be one of ${KYB_DOCUMENT_SLUGS.join(', ')}` }).optional(),
    memberId: z.uuid({ message: 'memberId must be a UUID' }).optional(),
    documentType: z.enum(OWNER_DOCUMENT_TYPES, { message: `documentType must be one of ${OWNER_DOCUMENT_TYPES.join(', ')}` }).optional(),
  })
  .strict();

export const kybDocumentsUploadedSchema = z.object({
  entityId: z.string(),
  requirementSlug: z.string().optional(),
  memberId: z.string().optional(),
  documentType: z.string().optional(),
  files: z.array(uploadedFileSchema),
});
type KybDocumentsUploaded = z.input<typeof kybDocumentsUploadedSchema>;

type DocumentFields = z.infer<typeof documentFields>;
type DocumentTarget = { entityId: string; slug: string; documentType: string | null };

/** The form's fields, or the refusal that names the first field at fault. */
function parseDocumentFields(raw: Record<string, string>): Outcome<DocumentFields> {
  const fields = documentFields.safeParse(raw);
  if (fields.success) return done(fields.data);
  const issue = fields.error.issues[0]!;
  const parameter = issue.code === 'unrecognized_keys' ? issue.keys[0]! : issue.path.join('.');
  const missing = issue.code === 'invalid_type' && issue.input === undefined;
  return refuse(
    'invalidRequest',
    issue.code === 'unrecognized_keys'
      ? `unknown form field "${parameter}"; remove it (the fields are entityId, requirementSlug, memberId, documentType and files)`
      : missing
        ? `${parameter} is required`
        : issue.message,
    { parameter },
  );
}

/** Where the files go: the business entity's documents, or a declared owner's; checked against the caller's entities. */
async function documentTarget(context: UseCaseContext, caller: Caller, f: DocumentFields): Promise<Outcome<DocumentTarget>> {
  const entity = await businessEntity(context, caller, f.entityId);
  if (!entity.ok) return entity;
  const forOwner = f.memberId !== undefined || f.documentType !== undefined;
  if (forOwner === (f.requirementSlug !== undefined)) {
    return refuse('invalidRequest', "Give either requirementSlug (a business document) or memberId and documentType (an owner's document).", {
      parameter: 'requirementSlug',
    });
  }
  if (forOwner && f.memberId === undefined) return refuse('invalidRequest', 'memberId is required with documentType', { parameter: 'memberId' });
  if (forOwner && f.documentType === undefined) return refuse('invalidRequest', 'documentType is required with memberId', { parameter: 'documentType' });
  if (f.memberId !== undefined && !(await isOwnerOf(context.db, f.entityId, f.memberId))) {
    return refuse(
      'memberNotFound',
      `${f.memberId} is not a declared owner of business entity ${f.entityId}; use an owner's ` +
        `entityId from GET /ukyb/${f.entityId} (ubos), or add the owner with PATCH /ukyb.`,
      { parameter: 'memberId' },
    );
  }
  return done(
    f.memberId !== undefined
      ? { entityId: f.memberId, slug: OWNER_DOCUMENT_SLUG, documentType: f.documentType! }
      : { entityId: f.entityId, slug: f.requirementSlug!, documentType: null },
  );
}

/**
 * POST /ukyb/documents: a business document (requirementSlug) or a declared owner's (memberId and
 * documentType). No fileId is answered (4.7). A form that sends its fields before its files is
 * judged before any file is read (`read` calls the check when the first file begins); the files
 * of any form are judged with the fields once read.
 */
export async function uploadKybDocuments(
  context: UseCaseContext,
  caller: Caller,
  read: (checkFields: (raw: Record<string, string>) => Promise<Refusal | null>) => Promise<FilesRead>,
): Promise<Outcome<KybDocumentsUploaded>> {
  const early = async (raw: Record<string, string>) => {
    const fields = parseDocumentFields(raw);
    if (!fields.ok) return null; // fields may still follow the files: judged once all is read
    const target = await documentTarget(context, caller, fields.value);
    return target.ok ? null : target;
  };
  const form = await read(early);
  let target: Outcome<DocumentTarget> | undefined;
  let f: DocumentFields | undefined;
  if (form.ok) {
    const fields = parseDocumentFields(form.fields ?? {});
    if (!fields.ok) return fields;
    f = fields.value;
    target = await documentTarget(context, caller, f);
    if (!target.ok) return target;
  }
  const checked = await checkUploads(form, 'files');
  if (!checked.ok) return checked;
  if (!f || !target?.ok) throw new Error('unreachable: fields are checked before the files');
  const to = target.value;
  const stored = await putUploads(context, caller.id, to.entityId, checked.value);
  const recorded = await recordKybFiles(context.db, { businessId: caller.id, businessEntityId: f.entityId, target: to, files: stored });
  if (recorded === 'entity-gone') {
    // the business or the owner was deleted while the bytes were stored: they go too
    await removeBytes(
      context,
      stored.map((s) => s.storageKey),
    );
    return refuse(
      'entityNotFound',
      `Entity ${to.entityId === f.entityId ? f.entityId : `${to.entityId} (the owner)`} was deleted while this request ran; ` +
        'create it again with POST /entity if you still need it.',
      { parameter: to.entityId === f.entityId ? 'entityId' : 'memberId' },
    );
  }
  const { uploadedAt } = recorded;
  return done({
    entityId: f.entityId,
    ...(f.memberId !== undefined ? { memberId: f.memberId, documentType: f.documentType! } : { requirementSlug: f.requirementSlug! }),
    files: stored.map((s) => ({ fileName: s.fileName, contentType: s.contentType, size: s.size, uploadedAt })),
  });
}

async function manifestOf(context: UseCaseContext, entityId: string): Promise<Manifest> {
  const owners = await declaredOwners(context.db, entityId);
  return buildManifest(
    entityId,
    owners,
    await liveKybFiles(
      context.db,
      entityId,
      owners.map((o) => o.entityId),
    ),
  );
}

/** GET /entity/{entityId}/documents: the manifest (2.9) of any existing entity of the caller's. */
export async function readManifest(context: UseCaseContext, caller: Caller, entityId: string, page: Page | null = null): Promise<Outcome<ManifestAnswer>> {
  if (!(await entityType(context.db, caller.id, entityId)))
    return refuse('entityNotFound', `Entity ${entityId} not found in your business; check the id (GET /entity lists your entities).`, {
      parameter: 'entityId',
    });
  const manifest = await manifestOf(context, entityId);
  return done(page ? manifestPage(manifest, page) : manifest);
}

export const kybSubmittedSchema = z.object({ entityId: z.string(), submissionId: z.string(), status: z.literal('IN_REVIEW'), deadlineAt: z.string() });
type KybSubmitted = z.input<typeof kybSubmittedSchema>;

/** POST /ukyb/submit: complete (by the manifest's check) → a submission, decided by its workflow; else 400 with `missing`. */
export async function submitKyb(context: UseCaseContext, caller: Caller, entityId: string): Promise<Outcome<KybSubmitted>> {
  const entity = await businessEntity(context, caller, entityId);
  if (!entity.ok) return entity;
  const unmet = webhookPrerequisite('business', await subscribedTypes(context.db, caller.id));
  if (unmet) return unmet;
  if (!(await loadProfile(context.db, caller.id, entityId)))
    return refuse('kybProfileNotFound', `Entity ${entityId} has no KYB profile yet; create it with POST /ukyb.`, { parameter: 'entityId' });
  const missing = missingFromManifest(await manifestOf(context, entityId));
  if (missing.length > 0) {
    return refuse(
      'kybIncomplete',
      `The submission is incomplete: ${missing.join(', ')}. Upload each missing document with POST /ukyb/documents, then submit again.`,
      { parameter: 'entityId', extra: { missing } },
    );
  }
  const s = await openKybSubmission(context.db, { businessId: caller.id, entityId, deadlineSeconds: context.config.universalKyb.deadlineSeconds });
  await context.start.kybSubmitted({ submissionId: s.submissionId, entityId, deadlineAt: s.deadlineAt, businessId: caller.id });
  return done({ entityId, submissionId: s.submissionId, status: 'IN_REVIEW', deadlineAt: s.deadlineAt });
}
