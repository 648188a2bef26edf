// `vouch trace --text`: the trace (cli/commands/trace.ts) as a page an operator reads top to
// bottom — the record, decisions, history, audit entries, runs with their links, what is pending.
import type { AuditEntry } from '../../domain/audit-chain.ts';
import type { HistoryItem } from '../../domain/entity-history.ts';
import type { BatchTraced, EntityTrace, TraceResult, TracedRun } from './trace.ts';

const line = (label: string, value: string) => `  ${label.padEnd(14)}${value}`;
const heading = (title: string, n?: number) => `\n${title}${n === undefined ? '' : ` (${n})`}`;
const none = '  none';

function historyLine(i: HistoryItem): string {
  const what = ((): string => {
    switch (i.kind) {
      case 'entity.created':
        return `${i.type}`;
      case 'member.declared':
        return `${i.memberEntityId} ${i.role} of ${i.businessEntityId}`;
      case 'requirement.submitted':
      case 'requirement.retired':
        return `${i.requirementSlug} ${i.requirementId}`;
      case 'file.submitted':
      case 'file.retired':
        return `${i.requirementSlug} ${i.fileId}`;
      case 'verification.stage': {
        const p = i.provenance;
        const from =
          p.source === 'batch'
            ? `batch ${p.batchId} row ${p.rowNumber}`
            : p.source === 'sync'
              ? `sync ${p.requestId}`
              : p.source === 'hosted-sdk'
                ? `hosted SDK${p.applicantId ? ` applicant ${p.applicantId}` : ''}`
                : `${p.source} ${p.submissionId}`;
        return `${i.stage} ${from}${i.eventId ? ` (event ${i.eventId})` : ''}${i.decisionEventId ? ` decision event ${i.decisionEventId}` : ''}`;
      }
      case 'event': {
        const deliveries = i.deliveries.map(
          (d) =>
            `${d.subscriptionId}: ${d.outcome}, ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}${d.lastStatusCode ? `, last ${d.lastStatusCode}` : ''}`,
        );
        return `${i.eventType} ${i.eventId}${deliveries.length ? ` → ${deliveries.join('; ')}` : ' (no subscription took it)'}`;
      }
      case 'feature.enabled':
      case 'feature.removed':
        return `${i.featureSlug ?? i.featureId}${i.eventId ? ` (event ${i.eventId})` : ''}`;
    }
  })();
  return `  ${i.at}  ${i.kind.padEnd(21)} ${what}`;
}

const auditLine = (e: AuditEntry) =>
  `  #${e.seq} ${e.occurredAt}  ${e.action.padEnd(22)} by ${e.actorType} ${e.actorId}${e.runId ? ` (run ${e.runId})` : ''}` +
  `${e.subjectType ? ` on ${e.subjectType} ${e.subjectId}` : ''}${e.outcome === 'ok' ? '' : ` → ${e.outcome}`}`;

const runLines = (runs: readonly TracedRun[]) =>
  runs.length ? runs.flatMap((r) => [`  ${r.workflowId}  [${r.status}]  ${r.about}${r.runId ? `  run ${r.runId}` : ''}`, `    ${r.url}`]) : [none];

function entityText(t: EntityTrace): string[] {
  const e = t.entity;
  const out = [
    `ENTITY ${e.id} (${e.type}) of business ${e.businessId} “${e.businessName}”`,
    line('externalId', e.externalId),
    line('created', `${e.createdAt}, updated ${e.updatedAt}`),
    line('verified by', e.verifiedBy ?? '-'),
    line('sealed', e.sealedAt ? `at ${e.sealedAt}, purge after ${e.purgeAfter}` : 'no'),
    line(
      'legal holds',
      e.holds.length
        ? e.holds
            .map(
              (h) =>
                `${h.id} by ${h.placedBy} at ${h.placedAt}${h.until ? ` until ${h.until}` : ''}` +
                `${h.releasedAt ? ` (released by ${h.releasedBy} at ${h.releasedAt})` : ' (in force)'}: ${h.reason}`,
            )
            .join('\n' + ' '.repeat(16))
        : 'none',
    ),
    heading('DECISIONS', t.decisions.length),
  ];
  if (!t.decisions.length) out.push(none);
  for (const d of t.decisions) {
    const rules =
      d.decision === 'REJECTED' ? ` ${d.reviewRejectType ?? ''} [${d.rejectLabels.join(', ')}]${d.moderationComment ? ` “${d.moderationComment}”` : ''}` : '';
    out.push(
      `  ${d.decidedAt}  ${d.decision}${rules}`,
      `    ${d.path}: ${d.source} ${d.sourceRef}${d.eventId ? `, event ${d.eventId}` : ''}, rules ${d.rules}`,
    );
  }
  out.push(heading('HISTORY', t.history.length), ...(t.history.length ? t.history.map(historyLine) : [none]));
  out.push(heading('AUDIT', t.audit.length), ...(t.audit.length ? t.audit.map(auditLine) : [none]));
  out.push(heading('RUNS', t.runs.length), ...runLines(t.runs));
  const p = t.pending;
  const pending = [
    ...p.submissions.map((s) => `  ${s.path} submission ${s.submissionId} open since ${s.openedAt}, deadline ${s.deadlineAt}`),
    ...p.batchRows.map((r) => `  batch ${r.batchId} row ${r.rowNumber} (batch ${r.batchStatus})`),
    ...p.syncImports.map((s) => `  sync import ${s.requestId} since ${s.requestedAt}`),
    ...p.deliveries.map(
      (d) =>
        `  delivery ${d.deliveryId} of ${d.eventType} ${d.eventId} to ${d.subscriptionId}: ${d.state}, ${d.attempts} attempts, ` +
        `next at ${d.nextAttemptAt} by the ${d.attemptedBy}${d.lastError ? ` (last error: ${d.lastError})` : ''}`,
    ),
    ...p.runs.map((r) => `  running ${r.workflowId} ${r.url}`),
  ];
  out.push(heading('PENDING', pending.length), ...(pending.length ? pending : [none]));
  return out;
}

function batchText(t: BatchTraced): string[] {
  const b = t.batch;
  const counts = Object.entries(t.rows.counts)
    .map(([status, n]) => `${n} ${status}`)
    .join(', ');
  const out = [
    `BATCH ${b.id} of business ${b.businessId} “${b.businessName}”`,
    line('status', `${b.status}${b.failureReason ? ` (${b.failureReason})` : ''}`),
    line('records', `${b.totalRecords}: ${b.successfulRecords} succeeded, ${b.failedRecords} failed${counts ? ` — rows now ${counts}` : ''}`),
    line('runs', String(b.runs)),
    line('created', `${b.createdAt}, started ${b.startedAt ?? '-'}, completed ${b.completedAt ?? '-'}${b.canceledAt ? `, canceled ${b.canceledAt}` : ''}`),
    heading('ROWS', t.rows.items.length),
    ...t.rows.items.map(
      (r) =>
        `  ${String(r.rowNumber).padStart(5)}  ${r.status.padEnd(9)} ${r.externalId}${r.entityId ? ` → ${r.entityId}` : ''}` +
        `${r.decision ? ` ${r.decision}` : ''}${r.errorCategory ? ` ${r.errorCategory}${r.retryable ? ' (retryable)' : ''}` : ''}`,
    ),
    heading('ENTITIES', t.entities.length),
    ...(t.entities.length ? t.entities.map((id) => `  ${id}`) : [none]),
    heading('AUDIT', t.audit.length),
    ...(t.audit.length ? t.audit.map(auditLine) : [none]),
    heading('RUNS', t.runs.length),
    ...runLines(t.runs),
    heading('PENDING'),
    t.pending.rows.length ? `  ${t.pending.rows.length} rows: ${t.pending.rows.join(', ')}` : '  no rows',
    ...t.pending.runs.map((r) => `  running ${r.workflowId} ${r.url}`),
  ];
  return out;
}

export function traceText(t: TraceResult): string {
  const parts = [`vouch trace ${t.query}: found by ${t.found}`, ...(t.temporal ? [`(${t.temporal}; run states unknown)`] : [])];
  if (t.batch) parts.push('', ...batchText(t.batch));
  for (const e of t.entities ?? []) parts.push('', ...entityText(e));
  return `${parts.join('\n')}\n`;
}
