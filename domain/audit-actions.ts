// Every action the audit log records (issue 21), with what it means. One place: the store refuses
// an action not named here, GET /audit-log's `action` filter accepts exactly these, and docs/compliance.md's
// table is printed from this list (npm run docs:audit) and kept equal by test/unit/audit.test.ts.
// An entry names ids and hashes only; the decision's outcome is never in it (spec 1.4: only the
// webhook carries it) — a decision entry names the event that carried it and the SHA-256 of the
// decision as stored, so the evidence bundle can prove which decision it was. Low-entropy values are
// named by their HMAC under the entity's digest key (`<name>Hmac`), never by a plain hash a guess could match.
export const AUDIT_ACTIONS = {
  'business.created': 'A business was created (admin CLI).',
  'api_key.created': 'An API key was issued (its id; the key itself is never stored).',
  'api_key.revoked': 'An API key was revoked.',
  'entity.created': "An entity was created (details: its type, and externalIdHmac: its externalId under the entity's digest key).",
  'entity.deleted': 'An entity was deleted under no retention policy: every piece of it is gone (spec 2.4).',
  'entity.sealed': 'An entity was deleted under a retention policy: gone from the API, its record sealed until purgeAfter.',
  'entity.purged': 'A sealed record was purged at the end of its retention period; only audit entries remain.',
  'requirement.submitted': "A requirement's value was submitted (details: the requirement slug, valueHmac: the value under the entity's digest key).",
  'member.declared': 'An individual was declared a member (owner, director) of a business entity.',
  'member.removed': "An individual's member link to a business entity was removed (the KYB profile was saved without it).",
  'file.submitted': 'A file was stored for an entity (details: its slug, document type and SHA-256).',
  'file.retired': 'A file was replaced by a newer one of the same kind, or discarded with its submission.',
  'person_data.kept':
    "A new version of a verified person's data was kept (subject: the version; details: provider, applicant, " +
    "dataHmac: the data under the entity's digest key).",
  'verification.stage': 'A verification moved to a stage (details: path, verification id, stage); never its outcome.',
  'decision.recorded':
    'A decision was appended to the record (subject: the decision; details: path, its provenance — batch and row, sync request, SDK review, ' +
    'submission — the event that carried it, its rule set, decisionSha256 and basisSha256: the decision as stored, and its rules and basis, ' +
    'each with its nonce). The outcome itself is not in the log.',
  'feature.enabled': 'A feature was enabled for an entity.',
  'feature.removed': 'A feature was removed from an entity.',
  'event.recorded': 'An event was recorded for delivery to the subscriptions of its type.',
  'event.redelivery_requested': 'A redelivery of an event was requested.',
  'batch.uploaded': 'A batch CSV was accepted (details: its SHA-256, row count).',
  'batch.canceled': 'A batch run was canceled.',
  'batch.retried': "A finished batch's retryable failed rows were put back for another run (details: rows, run).",
  'requirement_batch.uploaded': 'A batch of requirement submissions was accepted (details: its SHA-256, record count, records failed at upload).',
  'requirement_batch.canceled': 'A batch of requirement submissions was canceled.',
  'requirement_batch.retried': "A finished requirement batch's retryable failed records were put back for another run (details: records, run).",
  'sync_import.requested': 'A synchronous token-sharing import was requested.',
  'share.failed': 'A token-shared record failed (details: batch and row or sync request, the error code).',
  'sdk_token.issued': 'A hosted-SDK token was issued for an entity.',
  'provider_callback.received': "The identity provider called back about a person's review (actor: the provider); the workflow run decides.",
  'ukyc.submitted': "Universal KYC data was submitted (details: submission id, payloadHmac: the canonical payload under the entity's digest key).",
  'kyb.profile_saved': "A business entity's KYB profile was saved (details: profileHmac: the profile under the entity's digest key).",
  'kyb.submitted': 'A KYB submission was opened.',
  'subscription.created': 'A webhook subscription was created.',
  'subscription.replaced': 'A webhook subscription was replaced.',
  'subscription.deleted': 'A webhook subscription was deleted (its waiting deliveries canceled).',
  'subscription.disabled':
    'A webhook subscription was disabled after failing continuously for WEBHOOK_DISABLE_AFTER_MS, or at once when its receiver answered 410 Gone ' +
    '(details: failing since, deliveries held, reason failing or gone).',
  'subscription.enabled':
    'A webhook subscription was enabled again (details: by request, by a new URL, or by a delivery that succeeded; the state it left; deliveries sent now).',
  'subscription.secret_read': "A webhook subscription's secret was read (GET /notification/{id}/secret; never the secret).",
  'subscription.secret_rotated': "A webhook subscription's secret was replaced (details: until when the one it replaced still signs; never a secret).",
  'sandbox.review_requested': 'A sandbox review outcome was requested (sandbox only).',
  'signed_payload.issued': "A person's signed payload was read.",
  'download_link.issued': 'A download link to a file was issued (details: the file id, the link id).',
  'file.downloaded': 'A file was downloaded through a link (actor: the link).',
  'evidence.exported': "An evidence bundle of an entity was exported (details: the bundle's SHA-256; loginHmac, hostHmac: the operator's host).",
  'operator.read':
    "An operator read an entity's record with the admin CLI: its decisions and outcomes, history and entries (`vouch trace`), or " +
    "a legal hold's reason (`vouch hold list`) (details: the command; loginHmac, hostHmac: the host's login and name beside the name given).",
  'retention.policy_set': "A business's retention policy was set (details: years, or none).",
  'hold.added': "A legal hold was placed on an entity (details: until, and reasonHmac: its reason under the entity's digest key).",
  'hold.released': 'A legal hold was released.',
  'request.refused': 'A request that would have changed data or read personal data was refused (outcome: the error code).',
  'business_member.declared':
    'A person was declared a member of a business entity beyond its owners, or re-declared under another role (details: member id, role).',
  'business_member.removed': "A person's membership of a business entity (beyond its owners) was removed, with its feature assignments.",
  'feature.assigned': 'A feature was assigned to a member of a business entity (details: member id, feature id).',
  'feature.unassigned': "A feature's assignment to a member of a business entity was removed (details: member id, feature id).",
} as const satisfies Record<string, string>;

export type AuditAction = keyof typeof AUDIT_ACTIONS;

export const AUDIT_ACTION_NAMES = Object.keys(AUDIT_ACTIONS) as [AuditAction, ...AuditAction[]];

export const isAuditAction = (s: string): s is AuditAction => Object.hasOwn(AUDIT_ACTIONS, s);
