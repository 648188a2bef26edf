// The rules of an entity's history (domain/entity-history.ts): which stages a verification's rows
// prove, how they meet the stages its events announced, a feature's changes seen by several sources
// kept once, a delivery's outcome, the order and the pages.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildHistory,
  deliveryOutcome,
  historyPage,
  stagesOf,
  type EventFact,
  type HistoryFacts,
  type RecordedStage,
  type StoredDelivery,
} from '../../domain/entity-history.ts';
import { features } from '../../domain/feature-catalog.ts';

const t = (s: number) => new Date(Date.UTC(2030, 0, 1) + s * 1000).toISOString();
const ENTITY = '00000000-0000-4000-8000-000000000001';
const BATCH = '00000000-0000-4000-8000-0000000000b1';
const SUB = '00000000-0000-4000-8000-0000000000c1';
const CARD = features.find((f) => f.slug === 'card-issuance-api-access')!;
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const facts = (over: Partial<HistoryFacts> = {}): HistoryFacts => ({
  entity: { id: ENTITY, type: 'INDIVIDUAL', createdAt: t(0) },
  members: [],
  requirements: [],
  files: [],
  verifications: [],
  recordedStages: [],
  events: [],
  enabledFeatures: [],
  auditedFeatureChanges: [],
  ...over,
});
const event = (n: number, at: string, eventType: EventFact['eventType'], more: Partial<EventFact> = {}): EventFact => ({
  eventId: uuid(n),
  eventType,
  eventName: eventType,
  at,
  sourceKey: `key-${n}`,
  deliveries: [],
  ...more,
});
const ROW_KEY = `vouch-batch-${BATCH}-2`;
const batchRow = (more: Partial<Extract<HistoryFacts['verifications'][number], { source: 'batch' | 'sync' }>> = {}) => ({
  key: ROW_KEY,
  source: 'batch' as const,
  batchId: BATCH,
  rowNumber: 2,
  status: 'succeeded' as const,
  importAttempts: 1,
  errorCategory: null,
  startedAt: t(1),
  updatedAt: t(5),
  decidedAt: t(5),
  ...more,
});
const recorded = (key: string, at: string, stage: RecordedStage['stage'], more: Partial<RecordedStage> = {}): RecordedStage => ({
  key,
  at,
  path: 'token-sharing',
  stage,
  verificationId: BATCH,
  rowNumber: 2,
  eventId: null,
  ...more,
});

describe('entity history rules', () => {
  it("a delivery's outcome: waiting before any attempt of its run, failing after one that failed, else its status", () => {
    const d = (status: StoredDelivery['status'], runAttempts: number): StoredDelivery => ({
      subscriptionId: SUB,
      status,
      attempts: runAttempts + 3,
      runAttempts,
      lastStatusCode: null,
      lastAttemptAt: null,
      deliveredAt: null,
    });
    assert.equal(deliveryOutcome(d('pending', 0)), 'waiting', 'a redelivery not yet attempted');
    assert.equal(deliveryOutcome(d('pending', 2)), 'failing');
    assert.equal(deliveryOutcome(d('delivered', 1)), 'delivered');
    assert.equal(deliveryOutcome(d('failed', 10)), 'failed');
    assert.equal(deliveryOutcome(d('canceled', 0)), 'canceled');
  });

  it('a token-shared record: STARTED once a request went out (not before its entity), then DECIDED or FAILED — not FAILED when its entity was gone', () => {
    assert.deepEqual(stagesOf(batchRow(), t(0)), [
      { stage: 'STARTED', at: t(1) },
      { stage: 'DECIDED', at: t(5) },
    ]);
    assert.deepEqual(stagesOf(batchRow({ startedAt: t(1) }), t(3))[0], { stage: 'STARTED', at: t(3) }, 'an entity created after the run started');
    assert.deepEqual(stagesOf(batchRow({ status: 'failed', errorCategory: 'TOKEN_EXPIRED_OR_INVALID', decidedAt: null }), t(0)), [
      { stage: 'STARTED', at: t(1) },
      { stage: 'FAILED', at: t(5) },
    ]);
    assert.deepEqual(stagesOf(batchRow({ status: 'failed', errorCategory: 'ENTITY_NOT_FOUND', decidedAt: null }), t(0)), [{ stage: 'STARTED', at: t(1) }]);
    assert.deepEqual(stagesOf(batchRow({ status: 'pending', importAttempts: 0, decidedAt: null }), t(0)), [], 'not started yet');
  });

  it('a universal KYC submission waits for its document unless it came with one; a KYB submission waits for its owners unless all are decided', () => {
    const ukyc = {
      source: 'universal-kyc' as const,
      submissionId: uuid(7),
      createdAt: t(10),
      status: 'decided' as const,
      key: 'universal-kyc:7',
      settledAt: t(30),
    };
    assert.deepEqual(stagesOf({ ...ukyc, firstIdDocumentAt: t(5) }, t(0)), [
      { stage: 'IN_REVIEW', at: t(10) },
      { stage: 'DECIDED', at: t(30) },
    ]);
    assert.deepEqual(stagesOf({ ...ukyc, firstIdDocumentAt: t(20) }, t(0)), [
      { stage: 'WAITING_FOR_DOCUMENTS', at: t(10) },
      { stage: 'IN_REVIEW', at: t(20) },
      { stage: 'DECIDED', at: t(30) },
    ]);
    assert.deepEqual(stagesOf({ ...ukyc, status: 'expired', firstIdDocumentAt: null }, t(0)), [
      { stage: 'WAITING_FOR_DOCUMENTS', at: t(10) },
      { stage: 'DECIDED', at: t(30) },
    ]);
    assert.deepEqual(stagesOf({ ...ukyc, status: 'waiting', settledAt: null, firstIdDocumentAt: null }, t(0)), [{ stage: 'WAITING_FOR_DOCUMENTS', at: t(10) }]);

    const kyb = { key: 'universal-kyb:8', source: 'universal-kyb' as const, submissionId: uuid(8), createdAt: t(10), settledAt: t(40) };
    assert.deepEqual(stagesOf({ ...kyb, status: 'decided', ownersDecidedAt: t(25) }, t(0)), [
      { stage: 'WAITING_FOR_PERSON', at: t(10) },
      { stage: 'IN_REVIEW', at: t(25) },
      { stage: 'DECIDED', at: t(40) },
    ]);
    assert.deepEqual(stagesOf({ ...kyb, status: 'superseded', ownersDecidedAt: t(2) }, t(0)), [
      { stage: 'IN_REVIEW', at: t(10) },
      { stage: 'SUPERSEDED', at: t(40) },
    ]);
    assert.deepEqual(stagesOf({ ...kyb, status: 'expired', ownersDecidedAt: t(50) }, t(0)), [
      { stage: 'WAITING_FOR_PERSON', at: t(10) },
      { stage: 'DECIDED', at: t(40) },
    ]);
  });

  it('a stage recorded as it happened is the stage its rows prove: one item, at its recorded time, naming its event; DECIDED at the decision', () => {
    const items = buildHistory(
      facts({
        verifications: [batchRow()],
        recordedStages: [
          recorded(ROW_KEY, t(2.5), 'STARTED'), // its audit entry
          recorded(ROW_KEY, t(5.5), 'DECIDED'),
          recorded(ROW_KEY, t(2), 'STARTED', { eventId: uuid(10) }), // its event
        ],
        events: [event(50, t(5), 'account_status_change', { sourceKey: ROW_KEY }), event(51, t(5), 'account_status_change', { sourceKey: 'another' })],
      }),
    );
    const stage = (at: string, s: string, eventId: string | null, decisionEventId: string | null) => ({
      at,
      kind: 'verification.stage',
      path: 'token-sharing',
      stage: s,
      provenance: { source: 'batch', batchId: BATCH, rowNumber: 2 },
      eventId,
      decisionEventId,
    });
    assert.deepEqual(
      items.filter((i) => i.kind === 'verification.stage'),
      [stage(t(2), 'STARTED', uuid(10), null), stage(t(5), 'DECIDED', null, uuid(50))],
    );
    // another row's stage is another verification's; a stage only recorded stands alone, its provenance from the record
    const other = buildHistory(facts({ verifications: [batchRow()], recordedStages: [recorded('vouch-batch-x-3', t(3), 'STARTED', { rowNumber: 3 })] }));
    const stages = other.filter((i) => i.kind === 'verification.stage');
    assert.equal(stages.length, 3);
    assert.deepEqual(stages[1], { ...stage(t(3), 'STARTED', null, null), provenance: { source: 'batch', batchId: BATCH, rowNumber: 3 } });
  });

  it('hosted-SDK rounds are told apart by their keys: the account’s decision meets its own round’s records; an earlier round stands alone', () => {
    const sdk = (key: string, n: number, at: string, s: 'WAITING_FOR_PERSON' | 'DECIDED') =>
      recorded(key, at, s, { path: 'hosted-sdk', verificationId: null, rowNumber: null, eventId: uuid(n) });
    const items = buildHistory(
      facts({
        verifications: [{ key: 'round-2', source: 'hosted-sdk', applicantId: 'app-1', decidedAt: t(20) }],
        recordedStages: [
          sdk('wait-1', 1, t(1), 'WAITING_FOR_PERSON'),
          sdk('round-1', 3, t(5), 'DECIDED'),
          sdk('wait-2', 4, t(10), 'WAITING_FOR_PERSON'),
          sdk('round-2', 6, t(20), 'DECIDED'),
        ],
        events: [event(2, t(5), 'account_status_change', { sourceKey: 'round-1' }), event(5, t(20), 'account_status_change', { sourceKey: 'round-2' })],
      }),
    );
    const stages = items.flatMap((i) => (i.kind === 'verification.stage' ? [[i.at, i.stage, i.provenance, i.eventId, i.decisionEventId]] : []));
    assert.deepEqual(stages, [
      [t(1), 'WAITING_FOR_PERSON', { source: 'hosted-sdk', applicantId: null }, uuid(1), null],
      [t(5), 'DECIDED', { source: 'hosted-sdk', applicantId: null }, uuid(3), uuid(2)],
      [t(10), 'WAITING_FOR_PERSON', { source: 'hosted-sdk', applicantId: null }, uuid(4), null],
      [t(20), 'DECIDED', { source: 'hosted-sdk', applicantId: 'app-1' }, uuid(6), uuid(5)],
    ]);
  });

  it("a feature's change seen by the audit log, its event and the entity's features is one change; a change that is no change is not listed", () => {
    const access = (n: number, at: string, enabled: boolean) => event(n, at, 'feature_access_change', { feature: { featureId: CARD.id, enabled } });
    const items = buildHistory(
      facts({
        events: [access(1, t(5), true), access(2, t(9), false)],
        auditedFeatureChanges: [
          { featureId: CARD.id, enabled: true, at: t(5) },
          { featureId: CARD.id, enabled: false, at: t(9) },
          { featureId: CARD.id, enabled: true, at: t(12) },
        ],
        enabledFeatures: [{ featureId: CARD.id, enabledAt: t(12) }],
      }),
    );
    const changes = items.flatMap((i) => (i.kind === 'feature.enabled' || i.kind === 'feature.removed' ? [[i.at, i.kind, i.featureSlug, i.eventId]] : []));
    assert.deepEqual(changes, [
      [t(5), 'feature.enabled', CARD.slug, uuid(1)],
      [t(9), 'feature.removed', CARD.slug, uuid(2)],
      [t(12), 'feature.enabled', CARD.slug, null],
    ]);
    // only the entity's features: enabled since then
    const now = buildHistory(facts({ enabledFeatures: [{ featureId: CARD.id, enabledAt: t(3) }] })).filter((i) => i.kind.startsWith('feature.'));
    assert.deepEqual(now, [{ at: t(3), kind: 'feature.enabled', featureId: CARD.id, featureSlug: CARD.slug, eventId: null }]);
  });

  it('lists oldest first, the items of one instant in a fixed order, and pages the list', () => {
    const items = buildHistory(
      facts({
        requirements: [{ requirementId: uuid(20), slug: 'card-processor-public-token', submissionId: null, submittedAt: t(0), retiredAt: t(8) }],
        files: [{ fileId: uuid(21), slug: 'ukyc-id-document', documentType: null, submissionId: null, submittedAt: t(4), retiredAt: null }],
        members: [{ businessEntityId: uuid(30), memberEntityId: ENTITY, role: 'owner', declaredAt: t(6) }],
        verifications: [batchRow()],
        events: [event(50, t(5), 'account_status_change', { sourceKey: ROW_KEY })],
        enabledFeatures: [{ featureId: CARD.id, enabledAt: t(5) }],
      }),
    );
    assert.deepEqual(
      items.map((i) => [i.at, i.kind]),
      [
        [t(0), 'entity.created'],
        [t(0), 'requirement.submitted'],
        [t(1), 'verification.stage'],
        [t(4), 'file.submitted'],
        [t(5), 'verification.stage'],
        [t(5), 'event'],
        [t(5), 'feature.enabled'],
        [t(6), 'member.declared'],
        [t(8), 'requirement.retired'],
      ],
    );
    assert.deepEqual(historyPage(items, { page: 2, limit: 4 }), { items: items.slice(4, 8), meta: { page: 2, limit: 4, totalItems: 9, totalPages: 3 } });
    assert.deepEqual(historyPage(items, { page: 4, limit: 4 }).items, []);
  });
});
