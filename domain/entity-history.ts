// An entity's history as its business reads it (GET /entity/{entityId}/history, issue 21): what
// happened to it, oldest first — created, requirements and files submitted or retired, members
// declared, each verification's stages with where it came from, features enabled or removed, each
// event with its delivery to each subscription. Never a decision's outcome (interface 1.4: only the
// webhook carries it): a DECIDED stage names the event that carried it, which the client can
// redeliver. The store reads the facts (store/entity-history.ts); the rules that turn them into
// items — the stages a verification's rows prove, met with the stages recorded as they happened
// (audit entries, verification_status_change events), a feature's changes from every source, the
// order — are here.
import { z } from 'zod';
import { EVENT_TYPES } from './events.ts';
import { features } from './feature-catalog.ts';
import { VERIFICATION_PATHS, VERIFICATION_STAGES, type AnyVerificationPath, type VerificationStage } from './lifecycle-events.ts';
import { offsetOf, pageMeta, pageMetaSchema, paginationQuery, type Page, type PageMeta } from './pagination.ts';

/** Every kind of item, in the order items of one instant are listed. */
export const HISTORY_KINDS = [
  'entity.created',
  'member.declared',
  'requirement.submitted',
  'file.submitted',
  'requirement.retired',
  'file.retired',
  'verification.stage',
  'event',
  'feature.enabled',
  'feature.removed',
] as const;
export type HistoryKind = (typeof HISTORY_KINDS)[number];

export const historyQuery = paginationQuery;

const at = z.string().meta({ description: 'When it happened (ISO 8601, UTC).' });
const id = z.uuid();
const kindOf = <K extends HistoryKind>(kind: K) => z.literal(kind);

/** Where a verification came from: the request or file that started it, as the client knows it. */
export const provenanceSchema = z.discriminatedUnion('source', [
  z.object({
    source: z.literal('batch'),
    batchId: id,
    rowNumber: z.number().int().meta({ description: "The row's line in the batch file (the header is line 1), as the batch's summary.errors names it." }),
  }),
  z.object({ source: z.literal('sync'), requestId: id.meta({ description: 'The sync import request.' }) }),
  z.object({
    source: z.literal('hosted-sdk'),
    applicantId: z.string().nullable().meta({ description: "The provider's applicant whose review it is; null before the person started." }),
  }),
  z.object({ source: z.literal('universal-kyc'), submissionId: id }),
  z.object({ source: z.literal('universal-kyb'), submissionId: id }),
]);
export type Provenance = z.output<typeof provenanceSchema>;

export const DELIVERY_OUTCOMES = ['waiting', 'delivered', 'failing', 'failed', 'canceled'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

export const eventDeliverySchema = z.object({
  subscriptionId: id,
  outcome: z.enum(DELIVERY_OUTCOMES).meta({
    description:
      '`waiting` (no attempt yet in this run), `delivered`, `failing` (attempted, not yet delivered: retried on its schedule), ' +
      '`failed` (its schedule spent: POST /events/{eventId}/redeliver sends it again), `canceled` (its subscription was deleted).',
  }),
  attempts: z.number().int().meta({ description: 'Attempts made, in every run.' }),
  lastStatusCode: z
    .number()
    .int()
    .nullable()
    .meta({ description: 'The HTTP status your endpoint answered the last attempt with; null when it did not answer or there was none.' }),
  lastAttemptAt: z.string().nullable(),
  deliveredAt: z.string().nullable(),
});
export type EventDelivery = z.output<typeof eventDeliverySchema>;

export const historyItemSchema = z
  .discriminatedUnion('kind', [
    z.object({ at, kind: kindOf('entity.created'), entityId: id, type: z.enum(['INDIVIDUAL', 'BUSINESS']) }).meta({ description: 'The entity was created.' }),
    z
      .object({ at, kind: kindOf('member.declared'), businessEntityId: id, memberEntityId: id, role: z.string() })
      .meta({ description: 'An INDIVIDUAL was declared a member (owner, director) of a BUSINESS entity: this one, or one that names this person.' }),
    z
      .object({ at, kind: kindOf('requirement.submitted'), requirementId: id, requirementSlug: z.string(), submissionId: id.nullable() })
      .meta({ description: "A requirement's value was submitted (the value is read with GET /entity/{entityId}; a file is a file.submitted)." }),
    z
      .object({
        at,
        kind: kindOf('file.submitted'),
        fileId: id,
        requirementSlug: z.string(),
        documentType: z.string().nullable(),
        submissionId: id.nullable(),
      })
      .meta({ description: 'A file was stored for the entity.' }),
    z
      .object({ at, kind: kindOf('requirement.retired'), requirementId: id, requirementSlug: z.string() })
      .meta({ description: "A requirement's value was replaced by a newer one." }),
    z
      .object({ at, kind: kindOf('file.retired'), fileId: id, requirementSlug: z.string() })
      .meta({ description: 'A file was replaced by a newer one of the same kind.' }),
    z
      .object({
        at,
        kind: kindOf('verification.stage'),
        path: z.enum(VERIFICATION_PATHS),
        stage: z.enum(VERIFICATION_STAGES),
        provenance: provenanceSchema,
        eventId: id
          .nullable()
          .meta({ description: 'The verification_status_change event that announced the stage; null when none was recorded (no subscription took it).' }),
        decisionEventId: id.nullable().meta({
          description:
            'DECIDED only: the account_status_change or kyb_status_change event that carried the decision (POST /events/{eventId}/redeliver sends it again).',
        }),
      })
      .meta({ description: 'A verification reached a stage (never its outcome).' }),
    z
      .object({ at, kind: kindOf('event'), eventId: id, eventType: z.enum(EVENT_TYPES), eventName: z.string(), deliveries: z.array(eventDeliverySchema) })
      .meta({ description: 'An event about the entity was recorded, with its delivery to each subscription that takes its type.' }),
    z
      .object({ at, kind: kindOf('feature.enabled'), featureId: id, featureSlug: z.string().nullable(), eventId: id.nullable() })
      .meta({ description: 'A feature was enabled for the entity (eventId: its feature_access_change, when one was recorded).' }),
    z
      .object({ at, kind: kindOf('feature.removed'), featureId: id, featureSlug: z.string().nullable(), eventId: id.nullable() })
      .meta({ description: 'A feature was removed from the entity (eventId: its feature_access_change, when one was recorded).' }),
  ])
  .meta({ description: `One thing that happened to the entity; \`kind\` is one of ${HISTORY_KINDS.map((k) => `\`${k}\``).join(', ')}.` });
export type HistoryItem = z.output<typeof historyItemSchema>;

export const historyPageSchema = z.object({ items: z.array(historyItemSchema), meta: pageMetaSchema() });
export type HistoryPage = z.input<typeof historyPageSchema>;

// ---- the facts the store reads ----

/**
 * A verification as its own rows tell it (times ISO 8601). `key` names it as its stages and its
 * decision are recorded (the stage events' and audit entries' verification, the decision event's
 * source key): each stage of a verification is recorded once per key.
 */
export type VerificationFact = { key: string } & (
  | {
      source: 'batch' | 'sync';
      /** The batch (with its row) or the sync request. */
      batchId?: string;
      rowNumber?: number;
      requestId?: string;
      status: 'pending' | 'succeeded' | 'failed';
      /** Import requests sent for it (it STARTED once one was). */
      importAttempts: number;
      errorCategory: string | null;
      /** When the batch run (or the sync request) started: the earliest its STARTED can have been. */
      startedAt: string;
      /** Its row's last change: when it failed, for a failed one. */
      updatedAt: string;
      /** Its KYC account's decision time, once decided. */
      decidedAt: string | null;
    }
  | { source: 'hosted-sdk'; applicantId: string; decidedAt: string }
  | {
      source: 'universal-kyc';
      submissionId: string;
      createdAt: string;
      status: 'waiting' | 'decided' | 'expired';
      settledAt: string | null;
      /** When its first identity document arrived (it is complete from then). */
      firstIdDocumentAt: string | null;
    }
  | {
      source: 'universal-kyb';
      submissionId: string;
      createdAt: string;
      status: 'waiting' | 'decided' | 'expired' | 'superseded';
      settledAt: string | null;
      /** When the last of its owners had a decision (null: not all have one). */
      ownersDecidedAt: string | null;
    }
);

/** A stage as it was recorded when it happened: by its audit entry (eventId null) or its verification_status_change event. */
export type RecordedStage = {
  /** The verification's key (see VerificationFact). */
  key: string;
  at: string;
  path: AnyVerificationPath;
  stage: VerificationStage;
  verificationId: string | null;
  rowNumber: number | null;
  eventId: string | null;
};

export type StoredDelivery = {
  subscriptionId: string;
  status: 'pending' | 'delivered' | 'failed' | 'canceled';
  attempts: number;
  /** Attempts in the current run (a redelivery starts a new one). */
  runAttempts: number;
  lastStatusCode: number | null;
  lastAttemptAt: string | null;
  deliveredAt: string | null;
};

export type EventFact = {
  eventId: string;
  eventType: (typeof EVENT_TYPES)[number];
  eventName: string;
  at: string;
  /** What makes it once-only: a decision event's is its verification's key. */
  sourceKey: string;
  /** A feature_access_change's change. */
  feature?: { featureId: string; enabled: boolean };
  deliveries: StoredDelivery[];
};

export type HistoryFacts = {
  entity: { id: string; type: 'INDIVIDUAL' | 'BUSINESS'; createdAt: string };
  members: { businessEntityId: string; memberEntityId: string; role: string; declaredAt: string }[];
  /** Requirements whose value is not a file (a file is in `files`). */
  requirements: { requirementId: string; slug: string; submissionId: string | null; submittedAt: string; retiredAt: string | null }[];
  files: { fileId: string; slug: string; documentType: string | null; submissionId: string | null; submittedAt: string; retiredAt: string | null }[];
  verifications: VerificationFact[];
  /** Stages recorded as they happened: audit entries first, then events. */
  recordedStages: RecordedStage[];
  /** Every event about the entity, oldest first. */
  events: EventFact[];
  /** The features enabled now, since when. */
  enabledFeatures: { featureId: string; enabledAt: string }[];
  /** Feature changes the audit log holds (an entry per change, whatever the subscriptions). */
  auditedFeatureChanges: { featureId: string; enabled: boolean; at: string }[];
};

// ---- the rules ----

/** A delivery's outcome as the history names it. */
export function deliveryOutcome(d: StoredDelivery): DeliveryOutcome {
  if (d.status !== 'pending') return d.status;
  return d.runAttempts > 0 ? 'failing' : 'waiting';
}

type Stage = { stage: VerificationStage; at: string };
const later = (a: string, b: string) => (a > b ? a : b);

/** The stages a verification's rows prove, at the times the rows show (a stage recorded as it happened has its own time). */
export function stagesOf(v: VerificationFact, entityCreatedAt: string): Stage[] {
  switch (v.source) {
    case 'batch':
    case 'sync': {
      const out: Stage[] = [];
      // a batch row starts at some point of its run; not before the run, nor before the entity it names
      if (v.importAttempts > 0) out.push({ stage: 'STARTED', at: later(v.startedAt, entityCreatedAt) });
      if (v.status === 'succeeded') out.push({ stage: 'DECIDED', at: v.decidedAt ?? v.updatedAt });
      // a record that failed because its entity was gone announces no FAILED (store/share-records.ts)
      if (v.status === 'failed' && v.errorCategory !== 'ENTITY_NOT_FOUND') out.push({ stage: 'FAILED', at: v.updatedAt });
      return out;
    }
    case 'hosted-sdk':
      return [{ stage: 'DECIDED', at: v.decidedAt }];
    case 'universal-kyc': {
      const settledBy = v.settledAt ?? '9999';
      const doc = v.firstIdDocumentAt !== null && v.firstIdDocumentAt <= settledBy ? v.firstIdDocumentAt : null;
      const out: Stage[] =
        doc !== null && doc <= v.createdAt
          ? [{ stage: 'IN_REVIEW', at: v.createdAt }]
          : [{ stage: 'WAITING_FOR_DOCUMENTS', at: v.createdAt }, ...(doc ? [{ stage: 'IN_REVIEW' as const, at: doc }] : [])];
      if (v.status !== 'waiting' && v.settledAt) out.push({ stage: 'DECIDED', at: v.settledAt });
      return out;
    }
    case 'universal-kyb': {
      const settledBy = v.settledAt ?? '9999';
      const ready = v.ownersDecidedAt !== null && v.ownersDecidedAt <= settledBy ? v.ownersDecidedAt : null;
      const out: Stage[] =
        ready !== null && ready <= v.createdAt
          ? [{ stage: 'IN_REVIEW', at: v.createdAt }]
          : [{ stage: 'WAITING_FOR_PERSON', at: v.createdAt }, ...(ready ? [{ stage: 'IN_REVIEW' as const, at: ready }] : [])];
      if (v.settledAt && v.status !== 'waiting') out.push({ stage: v.status === 'superseded' ? 'SUPERSEDED' : 'DECIDED', at: v.settledAt });
      return out;
    }
  }
}

function provenanceOf(v: VerificationFact): Provenance {
  switch (v.source) {
    case 'batch':
      return { source: 'batch', batchId: v.batchId!, rowNumber: v.rowNumber! };
    case 'sync':
      return { source: 'sync', requestId: v.requestId! };
    case 'hosted-sdk':
      return { source: 'hosted-sdk', applicantId: v.applicantId };
    default:
      return { source: v.source, submissionId: v.submissionId };
  }
}

/** The provenance a recorded stage names (a token-shared record with a row is a batch's). */
function provenanceOfRecorded(s: RecordedStage): Provenance {
  switch (s.path) {
    case 'token-sharing':
      return s.rowNumber !== null ? { source: 'batch', batchId: s.verificationId!, rowNumber: s.rowNumber } : { source: 'sync', requestId: s.verificationId! };
    case 'hosted-sdk':
      return { source: 'hosted-sdk', applicantId: null };
    default:
      return { source: s.path, submissionId: s.verificationId! };
  }
}

const pathOf = (p: Provenance): AnyVerificationPath => (p.source === 'batch' || p.source === 'sync' ? 'token-sharing' : p.source);

const DECISION_EVENT_TYPES = new Set(['account_status_change', 'kyb_status_change']);

/**
 * One stage of one verification is one item: each is recorded once per verification key, so the
 * stage its rows prove, its audit entry and its event are the same stage. The recorded time is the
 * stage's own (the event's before the audit entry's, the rows' last); a DECIDED stage is at its
 * decision's instant, the decision event's (source key: the verification's key).
 */
function verificationItems(facts: HistoryFacts): HistoryItem[] {
  type StageItem = Extract<HistoryItem, { kind: 'verification.stage' }>;
  const stages = new Map<string, { key: string; item: StageItem }>();
  const stageItem = (at: string, stage: VerificationStage, provenance: Provenance, eventId: string | null): StageItem => ({
    at,
    kind: 'verification.stage',
    path: pathOf(provenance),
    stage,
    provenance,
    eventId,
    decisionEventId: null,
  });
  for (const v of facts.verifications) {
    const provenance = provenanceOf(v);
    for (const s of stagesOf(v, facts.entity.createdAt)) stages.set(`${v.key}|${s.stage}`, { key: v.key, item: stageItem(s.at, s.stage, provenance, null) });
  }
  for (const r of facts.recordedStages) {
    const known = stages.get(`${r.key}|${r.stage}`)?.item;
    if (!known) {
      stages.set(`${r.key}|${r.stage}`, { key: r.key, item: stageItem(r.at, r.stage, provenanceOfRecorded(r), r.eventId) });
    } else if (known.eventId === null) {
      known.at = r.at;
      known.eventId = r.eventId;
    }
  }
  for (const { key, item } of stages.values()) {
    const decision = item.stage === 'DECIDED' ? facts.events.find((e) => DECISION_EVENT_TYPES.has(e.eventType) && e.sourceKey === key) : undefined;
    if (!decision) continue;
    item.decisionEventId = decision.eventId;
    item.at = decision.at;
  }
  return [...stages.values()].map((s) => s.item);
}

/**
 * A feature's changes from every source that saw them — the audit log, its feature_access_change
 * events (recorded for subscribers), and its being enabled now — in time order; a change repeating
 * the one before it is the same change seen twice (a feature is only ever turned on when off, and
 * off when on), so it is kept once, with the event that announced it.
 */
function featureItems(facts: HistoryFacts): HistoryItem[] {
  type Change = { featureId: string; enabled: boolean; at: string; eventId: string | null };
  const changes: Change[] = [
    ...facts.auditedFeatureChanges.map((c) => ({ ...c, eventId: null })),
    ...facts.events.flatMap((e) => (e.feature ? [{ ...e.feature, at: e.at, eventId: e.eventId }] : [])),
    ...facts.enabledFeatures.map((f) => ({ featureId: f.featureId, enabled: true, at: f.enabledAt, eventId: null })),
  ].sort((a, b) => a.featureId.localeCompare(b.featureId) || a.at.localeCompare(b.at));
  const kept: Change[] = [];
  for (const c of changes) {
    const last = kept.at(-1);
    if (last && last.featureId === c.featureId && last.enabled === c.enabled) {
      last.eventId ??= c.eventId;
      continue;
    }
    kept.push({ ...c });
  }
  return kept.map((c) => ({
    at: c.at,
    kind: c.enabled ? 'feature.enabled' : 'feature.removed',
    featureId: c.featureId,
    featureSlug: features.find((f) => f.id === c.featureId)?.slug ?? null,
    eventId: c.eventId,
  }));
}

/** Every item of the entity's history, oldest first (items of one instant in HISTORY_KINDS order). */
export function buildHistory(facts: HistoryFacts): HistoryItem[] {
  const items: HistoryItem[] = [{ at: facts.entity.createdAt, kind: 'entity.created', entityId: facts.entity.id, type: facts.entity.type }];
  for (const m of facts.members) {
    items.push({ at: m.declaredAt, kind: 'member.declared', businessEntityId: m.businessEntityId, memberEntityId: m.memberEntityId, role: m.role });
  }
  for (const r of facts.requirements) {
    items.push({ at: r.submittedAt, kind: 'requirement.submitted', requirementId: r.requirementId, requirementSlug: r.slug, submissionId: r.submissionId });
    if (r.retiredAt) items.push({ at: r.retiredAt, kind: 'requirement.retired', requirementId: r.requirementId, requirementSlug: r.slug });
  }
  for (const f of facts.files) {
    items.push({
      at: f.submittedAt,
      kind: 'file.submitted',
      fileId: f.fileId,
      requirementSlug: f.slug,
      documentType: f.documentType,
      submissionId: f.submissionId,
    });
    if (f.retiredAt) items.push({ at: f.retiredAt, kind: 'file.retired', fileId: f.fileId, requirementSlug: f.slug });
  }
  items.push(...verificationItems(facts));
  for (const e of facts.events) {
    items.push({
      at: e.at,
      kind: 'event',
      eventId: e.eventId,
      eventType: e.eventType,
      eventName: e.eventName,
      deliveries: e.deliveries.map((d) => ({
        subscriptionId: d.subscriptionId,
        outcome: deliveryOutcome(d),
        attempts: d.attempts,
        lastStatusCode: d.lastStatusCode,
        lastAttemptAt: d.lastAttemptAt,
        deliveredAt: d.deliveredAt,
      })),
    });
  }
  items.push(...featureItems(facts));
  const rank = (k: HistoryKind) => HISTORY_KINDS.indexOf(k);
  // a stable sort: items of one instant and kind keep the order they were read in
  return items.sort((a, b) => a.at.localeCompare(b.at) || rank(a.kind) - rank(b.kind));
}

/** One page of the history. */
export function historyPage(items: readonly HistoryItem[], page: Page): { items: HistoryItem[]; meta: PageMeta } {
  const from = offsetOf(page);
  return { items: items.slice(from, from + page.limit), meta: pageMeta(page, items.length) };
}
