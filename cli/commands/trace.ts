// `vouch trace <entityId | externalId | batchId> [--business ID] [--text]`: the operator's
// one-minute answer (issue 21). For an entity — found by its id, or by an externalId of any business
// (every business that has it; --business narrows), sealed records too — the record with its legal
// holds, its decisions with outcome and rule labels, its history (store/entity-history.ts, as
// clients read it), its audit entries, the workflow runs that worked for it with a Temporal Web UI
// link each, and what is still pending. For a batch: the batch, its rows' states, its runs, the
// entities it touched. JSON by default; --text for people. Nothing found: exit code 2.
import { batchWorkflowId } from '../../contract/batch-import.ts';
import { personVerificationWorkflowId } from '../../contract/person-verification.ts';
import { retentionWorkflowId } from '../../contract/retention.ts';
import { sandboxReviewWorkflowId } from '../../contract/sandbox-review.ts';
import { syncWorkflowId } from '../../contract/sync-import.ts';
import { universalKybWorkflowId } from '../../contract/universal-kyb.ts';
import { universalKycWorkflowId } from '../../contract/universal-kyc.ts';
import { webhookRetryWorkflowId } from '../../contract/webhook-retry.ts';
import type { AuditEntry } from '../../domain/audit-chain.ts';
import { buildHistory } from '../../domain/entity-history.ts';
import type { Config } from '../../runtime/config.ts';
import { openDatabase } from '../../runtime/database.ts';
import { linkAll } from '../../store/audit-chainer.ts';
import { auditOfEntity, recordAudit } from '../../store/audit-log.ts';
import type { Queryable } from '../../store/db.ts';
import { historyFacts } from '../../store/entity-history.ts';
import { listHolds } from '../../store/retention.ts';
import { readRecord } from '../../store/record-reader.ts';
import { batchTrace, decisionsOf, entityRecord, entityRecordsByExternalId, pendingOf, runSubjects, type EntityRecord } from '../../store/trace.ts';
import { connectClient } from '../../temporal/connection.ts';
import { createRuns, runLink, type RunDescription } from '../../temporal/runs.ts';
import { CliText, operatorSeat, UsageError, type CliCommand } from '../command.ts';
import { UUID } from '../../domain/ids.ts';
import { traceText } from './trace-text.ts';

/** How long Temporal gets to answer (connecting, then all the descriptions), so a trace never hangs on it. */
const TEMPORAL_DEADLINE_MS = 10_000;

/** A workflow that works (or worked) for the subject: why we look for it, and the runs the audit log names. */
type Candidate = { workflowId: string; about: string; runIds: Set<string>; known: boolean };

export type TracedRun = {
  workflowId: string;
  runId: string | null;
  about: string;
  /** Temporal's (RUNNING, COMPLETED, …); `unknown` when Temporal did not answer; `not found` when it no longer has it (past the namespace's retention). */
  status: string;
  startedAt: string | null;
  closedAt: string | null;
  url: string;
};

type Runs = Pick<ReturnType<typeof createRuns>, 'describe' | 'runsOf'> | { unreachable: string };

/** Connects to Temporal for the trace's descriptions; a Temporal that does not answer is reported, not fatal. */
async function temporalRuns(config: Config): Promise<{ runs: Runs; close(): Promise<void> }> {
  const deadline = Date.now() + TEMPORAL_DEADLINE_MS;
  let timer: NodeJS.Timeout | undefined;
  try {
    const client = await Promise.race([
      connectClient(config),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${TEMPORAL_DEADLINE_MS} ms`)), TEMPORAL_DEADLINE_MS))),
    ]);
    const runs = createRuns(client);
    const within = <T>(fn: () => Promise<T>) => client.connection.withDeadline(Math.max(deadline, Date.now() + 2000), fn);
    return {
      runs: { describe: (workflowId, runId) => within(() => runs.describe(workflowId, runId)), runsOf: (workflowId) => within(() => runs.runsOf(workflowId)) },
      close: () => client.connection.close(),
    };
  } catch (err) {
    return { runs: { unreachable: `Temporal at ${config.temporal.address} did not answer: ${(err as Error).message}` }, close: async () => {} };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Each candidate's runs — every run visibility lists for its id (else the latest, which visibility
 * may not list yet), and those the audit log names — each with its link; a workflow Temporal never
 * had is left out.
 */
async function describeRuns(config: Config, runs: Runs, candidates: Candidate[]): Promise<TracedRun[]> {
  const { uiUrl, namespace } = config.temporal;
  const link = (workflowId: string, runId: string | null) => runLink(uiUrl, namespace, workflowId, runId);
  const out: TracedRun[] = [];
  for (const c of candidates) {
    if ('unreachable' in runs) {
      const ids: (string | null)[] = c.runIds.size ? [...c.runIds] : c.known ? [null] : [];
      for (const runId of ids)
        out.push({ workflowId: c.workflowId, runId, about: c.about, status: 'unknown', startedAt: null, closedAt: null, url: link(c.workflowId, runId) });
      continue;
    }
    const found = await runs.runsOf(c.workflowId);
    if (found.length === 0) {
      const latest = await runs.describe(c.workflowId);
      if (latest) found.push(latest);
    }
    if (found.length === 0 && c.runIds.size === 0 && c.known) {
      out.push({ workflowId: c.workflowId, runId: null, about: c.about, status: 'not found', startedAt: null, closedAt: null, url: link(c.workflowId, null) });
    }
    // a run the audit log names that visibility does not list (yet, or any more)
    for (const runId of c.runIds) {
      if (found.some((r) => r.runId === runId)) continue;
      found.push(
        (await runs.describe(c.workflowId, runId)) ?? { workflowId: c.workflowId, runId, type: '', status: 'not found', startedAt: '', closedAt: null },
      );
    }
    for (const d of found.sort((a, b) => a.startedAt.localeCompare(b.startedAt))) {
      out.push({
        workflowId: c.workflowId,
        runId: d.runId,
        about: c.about,
        status: d.status,
        startedAt: d.startedAt || null,
        closedAt: d.closedAt,
        url: link(c.workflowId, d.runId),
      });
    }
  }
  return out;
}

/** The workflow runs the audit log says acted, by workflow id. */
function auditedRuns(entries: readonly AuditEntry[]): Map<string, Set<string>> {
  const byWorkflow = new Map<string, Set<string>>();
  for (const e of entries) {
    if (e.actorType !== 'workflow' || !e.runId) continue;
    byWorkflow.set(e.actorId, (byWorkflow.get(e.actorId) ?? new Set()).add(e.runId));
  }
  return byWorkflow;
}

/** The candidates, each once: those the code starts for the subject (`known` when its rows say it was started), then those only the audit log names. */
function candidatesOf(started: Omit<Candidate, 'runIds'>[], audited: Map<string, Set<string>>): Candidate[] {
  const out = new Map<string, Candidate>();
  for (const s of started) out.set(s.workflowId, { ...s, runIds: new Set(audited.get(s.workflowId) ?? []) });
  for (const [workflowId, runIds] of audited)
    if (!out.has(workflowId)) out.set(workflowId, { workflowId, about: 'named by the audit log', runIds, known: true });
  return [...out.values()];
}

/** What the database holds of an entity, read in the record's snapshot (sealed rows too). */
async function entityFacts(db: Queryable, e: EntityRecord) {
  // one after another: a transaction is one connection, which runs one query at a time
  const facts = await historyFacts(db, e.id);
  const decisions = await decisionsOf(db, e.id);
  const audit = await auditOfEntity(db, e.businessId, e.id);
  const holds = await listHolds(db, { entityId: e.id, all: true });
  const subjects = await runSubjects(db, e);
  const pending = await pendingOf(db, e);
  return { e, facts, decisions, audit, holds, subjects, pending };
}

async function traceEntity(config: Config, runs: Runs, { e, facts, decisions, audit, holds, subjects, pending }: Awaited<ReturnType<typeof entityFacts>>) {
  const started: Omit<Candidate, 'runIds'>[] = [
    ...subjects.batches.flatMap(({ batchId, runs: n }) =>
      Array.from({ length: n }, (_, i) => ({
        workflowId: batchWorkflowId(batchId, i + 1),
        about: i === 0 ? `batch import ${batchId}` : `batch import ${batchId}, retry ${i}`,
        known: true,
      })),
    ),
    ...subjects.syncRequests.map((id) => ({ workflowId: syncWorkflowId(id), about: `sync import ${id}`, known: true })),
    ...(e.type === 'INDIVIDUAL' ? [{ workflowId: personVerificationWorkflowId(e.id), about: 'person verification (hosted SDK)', known: false }] : []),
    ...subjects.ukycSubmissions.map((id) => ({ workflowId: universalKycWorkflowId(id), about: `universal KYC submission ${id}`, known: true })),
    ...subjects.kybSubmissions.map((id) => ({ workflowId: universalKybWorkflowId(id), about: `universal KYB submission ${id}`, known: true })),
    ...subjects.sandboxReviews.map((id) => ({ workflowId: sandboxReviewWorkflowId(id), about: `sandbox review ${id}`, known: true })),
    ...subjects.retriedDeliveries.map((d) => ({
      workflowId: webhookRetryWorkflowId(d.deliveryId, d.run),
      about: `webhook delivery ${d.deliveryId} retries`,
      known: true,
    })),
    { workflowId: retentionWorkflowId(e.id), about: 'retention (sealed record: purge at the end of its period)', known: e.sealedAt !== null },
  ];
  const traced = await describeRuns(config, runs, candidatesOf(started, auditedRuns(audit)));
  return {
    entity: { ...e, holds },
    decisions,
    history: facts ? buildHistory(facts) : [],
    audit,
    runs: traced,
    pending: { ...pending, runs: traced.filter((r) => r.status === 'RUNNING').map((r) => ({ workflowId: r.workflowId, runId: r.runId, url: r.url })) },
  };
}

async function traceBatch(config: Config, runs: Runs, batch: NonNullable<Awaited<ReturnType<typeof batchTrace>>>, audit: AuditEntry[]) {
  const started = Array.from({ length: batch.batch.runs }, (_, i) => ({
    workflowId: batchWorkflowId(batch.batch.id, i + 1),
    about: i === 0 ? 'batch import (the upload’s run)' : `batch import (retry ${i})`,
    known: true,
  }));
  const traced = await describeRuns(config, runs, candidatesOf(started, auditedRuns(audit)));
  return {
    ...batch,
    audit,
    runs: traced,
    pending: {
      rows: batch.rows.items.filter((r) => r.status === 'pending').map((r) => r.rowNumber),
      runs: traced.filter((r) => r.status === 'RUNNING').map((r) => ({ workflowId: r.workflowId, runId: r.runId, url: r.url })),
    },
  };
}

export type EntityTrace = Awaited<ReturnType<typeof traceEntity>>;
export type BatchTraced = Awaited<ReturnType<typeof traceBatch>>;
export type TraceResult = {
  query: string;
  found: 'entity id' | 'externalId' | 'batch id';
  /** When Temporal did not answer: runs are listed from the database, their status unknown. */
  temporal?: string;
  entities?: EntityTrace[];
  batch?: BatchTraced;
};

export const trace: CliCommand = {
  name: 'trace',
  usage: `  vouch trace ID [--business ID] [--text]             everything about an entity (its id, or an externalId of any business;
                                                        --business narrows) or a batch: record, holds, decisions with outcome,
                                                        history, audit entries, workflow runs with Temporal UI links, what is
                                                        pending. JSON; --text for reading. Exit code 2 when nothing is found`,
  options: { text: { type: 'boolean', default: false } },
  actsAs: 'operator',
  async run({ args, values, config }) {
    const [id, ...extra] = args;
    if (!id || extra.length > 0) throw new UsageError('give one id: vouch trace <entityId | externalId | batchId> [--business ID] [--text]');
    const business = values.business as string | undefined;
    if (business !== undefined && !UUID.test(business)) throw new UsageError('--business must be a business id (UUID)');
    const database = await openDatabase(config);
    let result: TraceResult;
    try {
      const db = database.db;
      await linkAll(db); // audit entries committed a moment ago, linked before they are read
      // the database first, in one snapshot of the record; Temporal after, with no transaction open
      const read = await readRecord(db, async (tx) => {
        const byId = UUID.test(id) ? await entityRecord(tx, id) : null;
        const batch = UUID.test(id) && !byId ? await batchTrace(tx, id) : null;
        const byExternalId = byId || batch ? [] : await entityRecordsByExternalId(tx, id, business);
        if (byId && business && byId.businessId !== business) throw new UsageError(`entity ${id} is not of business ${business}`);
        if (batch && business && batch.batch.businessId !== business) throw new UsageError(`batch ${id} is not of business ${business}`);
        if (!byId && !batch && byExternalId.length === 0) {
          throw new UsageError(
            `nothing found for "${id}": no entity or batch has this id, and no entity${business ? ` of business ${business}` : ''} this externalId`,
          );
        }
        if (batch) return { found: 'batch id' as const, batch, audit: await auditOfEntity(tx, batch.batch.businessId, batch.batch.id) };
        const entities: Awaited<ReturnType<typeof entityFacts>>[] = [];
        for (const e of byId ? [byId] : byExternalId) entities.push(await entityFacts(tx, e));
        return { found: byId ? ('entity id' as const) : ('externalId' as const), entities };
      });
      // the read is in the record before anything of it is printed (issue 37): one entry per entity or batch traced
      // (the host's login and name beside the name given, by their keyed digests: the business reads its log, not our hosts)
      const details = { command: 'trace' };
      await db.tx(async (tx) => {
        if (read.found === 'batch id')
          recordAudit(tx, { businessId: read.batch.batch.businessId, action: 'operator.read', subject: { type: 'batch', id: read.batch.batch.id }, details });
        else
          for (const { e } of read.entities)
            recordAudit(tx, {
              businessId: e.businessId,
              action: 'operator.read',
              entityId: e.id,
              subject: { type: 'entity', id: e.id },
              details,
              keyed: operatorSeat(),
            });
      });
      const temporal = await temporalRuns(config);
      try {
        result = {
          query: id,
          found: read.found,
          ...('unreachable' in temporal.runs ? { temporal: temporal.runs.unreachable } : {}),
          ...(read.found === 'batch id'
            ? { batch: await traceBatch(config, temporal.runs, read.batch, read.audit) }
            : { entities: await Promise.all(read.entities.map((facts) => traceEntity(config, temporal.runs, facts))) }),
        };
      } finally {
        await temporal.close();
      }
    } finally {
      await database.close();
    }
    return values.text ? new CliText(traceText(result)) : result;
  },
};
