// Universal KYC (interface 1.2, 2.7, 4.5): the client submits its already-verified canonical KYC data
// and uploads the person's documents; each arrival is recorded and wakes the submission's workflow,
// which decides once the data and an identity document are there (or its deadline passes). The
// decision arrives by webhook, so the webhook prerequisite (1.4) applies to both endpoints.
import { z } from 'zod';
import { ID_DOCUMENT_SLUG, UKYC_FILE_SLUGS, checkCanonicalKyc } from '../domain/universal-kyc.ts';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import { cardProcessorTokenTaken } from '../domain/share-fields.ts';
import { uploadedFileSchema } from '../domain/uploads.ts';
import { cardProcessorTokenHolder } from '../store/entities.ts';
import { recordUploadedFiles, submitCanonicalData } from '../store/universal-kyc.ts';
import type { Caller, UseCaseContext } from './context.ts';
import { personNamed } from './person-verification.ts';
import { putUploads, removeBytes } from './stored-files.ts';
import { checkUploads, type FilesRead } from './uploads.ts';

export const requirementSubmittedSchema = z.object({
  entityId: z.string(),
  requirementSlug: z.string(),
  status: z.literal('PENDING'),
  submissionId: z.string(),
  // when the submission is decided as incomplete if its identity document has not arrived
  deadlineAt: z.string(),
  // what the submission still needs before it is decided (empty: it is being decided)
  waitingFor: z.array(z.string()),
});
type RequirementSubmitted = z.input<typeof requirementSubmittedSchema>;

/** POST /entity/{entityId}/requirement with `ukyc-canonical-kyc-data`. */
export async function submitCanonicalKyc(context: UseCaseContext, caller: Caller, entityId: string, value: string): Promise<Outcome<RequirementSubmitted>> {
  const person = await personNamed(context, caller, entityId, undefined, { requireWebhook: true, takesMemberId: false });
  if (!person.ok) return person;
  const check = checkCanonicalKyc(value, new Date());
  if (!check.ok) return refuse('invalidRequest', check.message, { parameter: check.parameter });
  const token = check.payload.cardProcessorPublicToken;
  const taken = token ? cardProcessorTokenTaken(person.value, await cardProcessorTokenHolder(context.db, caller.id, token)) : null;
  if (taken) {
    // the catalogue entry of the category, as a sync import answers it (409 0704000400)
    const message = `cardProcessorPublicToken is already assigned to entity ${taken.holder}; send this person's own token, or leave it out.`;
    return refuse('syncCardProcessorTokenTaken', message, { parameter: 'cardProcessorPublicToken' });
  }
  const submission = await submitCanonicalData(context.db, {
    businessId: caller.id,
    entityId: person.value,
    value,
    deadlineSeconds: context.config.universalKyc.deadlineSeconds,
  });
  if (submission === 'entity-gone')
    return refuse('entityNotFound', `Entity ${person.value} was deleted while this request ran; create it again with POST /entity if you still need it.`, {
      parameter: 'entityId',
    });
  await context.start.ukycPartReceived(
    { submissionId: submission.submissionId, entityId: person.value, deadlineAt: submission.deadlineAt, businessId: caller.id },
    'data',
  );
  return done({
    entityId: person.value,
    requirementSlug: 'ukyc-canonical-kyc-data',
    status: 'PENDING',
    submissionId: submission.submissionId,
    deadlineAt: submission.deadlineAt,
    waitingFor: submission.idDocuments > 0 ? [] : [ID_DOCUMENT_SLUG],
  });
}

export const filesUploadedSchema = z.object({
  entityId: z.string(),
  requirementSlug: z.string(),
  status: z.literal('PENDING'),
  files: z.array(uploadedFileSchema),
  // the open submission the files joined, or null: they wait for the next KYC data submission
  submissionId: z.string().nullable(),
});
type FilesUploaded = z.input<typeof filesUploadedSchema>;

/** POST /entity/{entityId}/requirement-slug/{slug}/upload: the files are checked, stored, recorded, and the open submission woken. */
export async function uploadUkycFiles(
  context: UseCaseContext,
  caller: Caller,
  entityId: string,
  slug: string,
  memberId: string | undefined,
  read: () => Promise<FilesRead>,
): Promise<Outcome<FilesUploaded>> {
  if (!(UKYC_FILE_SLUGS as readonly string[]).includes(slug)) {
    return refuse('requirementNotFound', `No file requirement ${slug}: upload ${UKYC_FILE_SLUGS.join(' or ')}.`, { parameter: 'requirementSlug' });
  }
  const person = await personNamed(context, caller, entityId, memberId, { requireWebhook: true });
  if (!person.ok) return person;
  const checked = await checkUploads(await read(), 'files');
  if (!checked.ok) return checked;
  const stored = await putUploads(context, caller.id, person.value, checked.value);
  const recorded = await recordUploadedFiles(context.db, { businessId: caller.id, entityId: person.value, slug, files: stored });
  if (recorded === 'entity-gone') {
    // deleted while the bytes were stored: they go too, and the upload is answered as for any missing entity
    await removeBytes(
      context,
      stored.map((s) => s.storageKey),
    );
    return refuse('entityNotFound', `Entity ${person.value} was deleted while this request ran; create it again with POST /entity if you still need it.`, {
      parameter: 'entityId',
    });
  }
  if (recorded.submission) await context.start.ukycPartReceived({ ...recorded.submission, entityId: person.value, businessId: caller.id }, 'file');
  return done({
    entityId: person.value,
    requirementSlug: slug,
    status: 'PENDING',
    files: stored.map((f) => ({ fileName: f.fileName, contentType: f.contentType, size: f.size, uploadedAt: recorded.uploadedAt })),
    submissionId: recorded.submission?.submissionId ?? null,
  });
}
