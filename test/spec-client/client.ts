// A client of the Compliance Onboarding Service Interface written from the interface document
// alone (/work/shared/spec/interface.md): its paths, headers, fields, codes, event types and
// statuses, and nothing of any one implementation. It uses only `fetch` and `node:crypto`.
//
// What it is given: the service's base URL, an API key, the word the spec's neutral `svc` stands for
// (header names `x-<svc>-api-key` and `<svc>-signature`, section 5), and the value it sends as
// `X-Provider` (the spec's `<provider_a>` is a placeholder, so that one value is configuration).
//
// Where the spec leaves something unnamed (pagination metadata, the name of a list's array, the
// success status of the sync import and of most endpoints), the client depends on nothing of it.
import { constants, verify } from 'node:crypto';

// ---- the spec's names -----------------------------------------------------------------------------

/** Section 6.1: every subscribable event type named by the interface. */
export const EVENT_TYPES = [
  'account_status_change',
  'kyb_status_change',
  'verification_status_change',
  'feature_access_change',
  'new_feature',
  'reminder',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Section 2.2: a feature requirement's fields and their values. */
export const FEATURE_REQUIREMENT = {
  requirementLevel: ['REQUIRED', 'OPTIONAL', 'PREFERED'],
  valueType: ['BOOLEAN', 'NUMERIC', 'STRING', 'FILE', 'JSON'],
} as const;

/** Section 6.2: the token-sharing decision event. */
export const DECISION_EVENT = { eventName: 'card_issuance_api_access_updated', eventType: 'account_status_change' } as const;

/** Section 7: the codes the interface names. */
export const CODES = {
  fileTooLarge: '0701010100',
  invalidData: '0701010200',
  alreadyProcessed: '0701010300',
  missingApiKey: '0000000100',
  invalidApiKey: '0000000200',
} as const;

/** Section 7: the batch upload's published string codes. */
export const STRING_CODES = {
  fileTooLarge: 'kyc_batch.upload.file_too_large',
  invalidData: 'kyc_batch.upload.invalid_data',
  duplicate: 'kyc_batch.upload.duplicate_file_or_content',
} as const;

/** Section 2.3: known per-record error categories. */
export const CATEGORIES = { tokenAlreadyUsed: 'TOKEN_ALREADY_USED', cardProcessorTokenInvalid: 'CARD_PROCESSOR_TOKEN_INVALID' } as const;

/** Section 3.1: batch job statuses, compared case-insensitively. */
export const BATCH_STATUS = { pending: 'pending', inProgress: 'in_progress', completed: 'completed', failed: 'failed', canceled: 'canceled' } as const;
export const sameStatus = (a: unknown, b: string): boolean => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();
const FINISHED = [BATCH_STATUS.completed, BATCH_STATUS.failed, BATCH_STATUS.canceled];

/** Section 9.1. */
export const ACCEPT_VERSION = 'v1.0';

/** Section 8: the synchronous import rate. */
export const SYNC_RATE_PER_SECOND = 3;

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isIsoTimestamp = (v: unknown): boolean => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v) && !Number.isNaN(Date.parse(v));

// ---- errors (section 7) ---------------------------------------------------------------------------

export type ErrorBody = { code: string; message: string; parameter: string };

/** Section 7: `code` (string), `message` (string), `parameter` (string, may be empty). */
export function isErrorBody(body: unknown): body is ErrorBody {
  if (!body || typeof body !== 'object') return false;
  const b = body as Record<string, unknown>;
  return typeof b.code === 'string' && typeof b.message === 'string' && typeof b.parameter === 'string';
}

/**
 * The batch upload's string code (section 7), if the body carries one. The spec publishes the
 * string codes but not the field they travel in, so any top-level string value of the form
 * `kyc_batch.upload.*` is taken as it.
 */
export function stringCodeOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  for (const v of Object.values(body as Record<string, unknown>)) if (typeof v === 'string' && v.startsWith('kyc_batch.upload.')) return v;
  return undefined;
}

// ---- webhook verification (section 5.4) and events (2.10) --------------------------------------------

/** Base64 RSA-SHA512 (PKCS#1 v1.5) over the raw body, against any of the given public keys (PEM). */
export function verifySignature(rawBody: Uint8Array, signature: string | string[] | undefined, publicKeysPem: readonly string[]): boolean {
  const sig = Array.isArray(signature) ? signature[0] : signature;
  if (!sig) return false;
  const bytes = Buffer.from(sig, 'base64');
  if (bytes.length === 0) return false;
  return publicKeysPem.some((key) => {
    try {
      return verify('sha512', rawBody, { key, padding: constants.RSA_PKCS1_PADDING }, bytes);
    } catch {
      return false;
    }
  });
}

export type WebhookEvent = {
  eventName: string;
  eventType: string;
  data: {
    eventId: string;
    message?: string;
    entityId?: string;
    timestamp: string;
    status?: string;
    moderationComment?: string;
    rejectLabels?: string[];
    reviewRejectType?: string;
    [k: string]: unknown;
  };
  [k: string]: unknown;
};

/** What is wrong with an event against section 2.10 (empty when nothing is). */
export function eventProblems(e: WebhookEvent): string[] {
  const problems: string[] = [];
  if (typeof e.eventName !== 'string' || !e.eventName) problems.push('eventName is not a string');
  if (typeof e.eventType !== 'string' || !e.eventType) problems.push('eventType is not a string');
  if (!e.data || typeof e.data !== 'object') return [...problems, 'data is missing'];
  if (typeof e.data.eventId !== 'string' || !UUID.test(e.data.eventId)) problems.push('data.eventId is not a UUID');
  if (!isIsoTimestamp(e.data.timestamp)) problems.push('data.timestamp is not ISO 8601');
  if (typeof e.data.message !== 'string') problems.push('data.message is not a string');
  // 2.10 lists data.entityId for every event; the one documented exception (the service's docs/decisions/) is new_feature, which is about no entity
  if (e.eventType !== 'new_feature' && (typeof e.data.entityId !== 'string' || !UUID.test(e.data.entityId))) problems.push('data.entityId is not a UUID');
  if (e.eventType === 'new_feature' && 'entityId' in e.data) problems.push('new_feature names an entity');
  // 1.4: a decision is told by its webhook alone (account_status_change, kyb_status_change): no other event carries an outcome
  if (e.eventType !== DECISION_EVENT.eventType && e.eventType !== 'kyb_status_change' && 'status' in e.data)
    problems.push(`${e.eventType} carries data.status`);
  if (e.eventType === DECISION_EVENT.eventType) {
    if (e.data.status !== 'APPROVED' && e.data.status !== 'REJECTED') problems.push(`data.status is ${String(e.data.status)}`);
    if (typeof e.data.entityId !== 'string') problems.push('data.entityId is missing');
    const rejectedOnly = ['moderationComment', 'rejectLabels', 'reviewRejectType'] as const;
    if (e.data.status === 'APPROVED') for (const f of rejectedOnly) if (f in e.data) problems.push(`${f} present on APPROVED`);
    if (e.data.status === 'REJECTED') {
      if (typeof e.data.moderationComment !== 'string') problems.push('moderationComment missing on REJECTED');
      if (!Array.isArray(e.data.rejectLabels) || !e.data.rejectLabels.every((l) => typeof l === 'string')) problems.push('rejectLabels missing on REJECTED');
      if (typeof e.data.reviewRejectType !== 'string') problems.push('reviewRejectType missing on REJECTED');
    }
  }
  return problems;
}

// ---- CSV (section 2.4) -----------------------------------------------------------------------------

export type CsvRow = { externalId: string; shareToken: string; applicantLevel?: string; cardProcessorPublicToken?: string };

/** A header row and one line per record; UTF-8. */
export function batchCsv(rows: readonly CsvRow[]): string {
  const withLevel = rows.some((r) => r.applicantLevel !== undefined);
  const withCpt = rows.some((r) => r.cardProcessorPublicToken !== undefined);
  const columns = ['externalId', 'shareToken', ...(withLevel ? ['applicantLevel'] : []), ...(withCpt ? ['cardProcessorPublicToken'] : [])] as (keyof CsvRow)[];
  const cell = (v: string | undefined) => (v === undefined ? '' : /[",\n\r]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
  return [columns.join(','), ...rows.map((r) => columns.map((c) => cell(r[c])).join(','))].join('\n') + '\n';
}

// ---- the client ----------------------------------------------------------------------------------

export type Reply<T = any> = { status: number; headers: Headers; text: string; body: T };

export type SpecClientOptions = {
  baseUrl: string;
  apiKey: string;
  /** The word the spec's neutral `svc` stands for. */
  svc: string;
  /** The `X-Provider` value (the spec's `<provider_a>`). */
  provider: string;
};

type RequestOptions = {
  json?: unknown;
  form?: FormData;
  headers?: Record<string, string>;
  /** `null`: send no API key; a string: send this one instead of the client's. */
  apiKey?: string | null;
};

export type Subscription = { id: string; channel: string; types: string[]; config: { webhook: { url: string } }; createdAt: string };

export class SpecClient {
  readonly baseUrl: string;
  readonly apiKeyHeader: string;
  readonly signatureHeader: string;
  readonly provider: string;
  #apiKey: string;
  #syncSent: number[] = [];

  constructor(options: SpecClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKeyHeader = `x-${options.svc}-api-key`;
    this.signatureHeader = `${options.svc}-signature`;
    this.provider = options.provider;
    this.#apiKey = options.apiKey;
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.apiKey === undefined ? this.#apiKey : options.apiKey;
    if (key !== null) headers[this.apiKeyHeader] = key;
    let body: string | FormData | undefined;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    } else if (options.form) body = options.form;
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed as T };
  }

  // -- entities (2.1, 4.3)

  /** POST /entity. "Returns the new entity UUID": the body itself, or the entity's `id` (2.1). */
  async createEntity(externalId: string, type: 'INDIVIDUAL' | 'BUSINESS' = 'INDIVIDUAL'): Promise<Reply & { entityId: string | undefined }> {
    const reply = await this.request('POST', '/entity', { json: { externalId, type } });
    const b = reply.body;
    const entityId = typeof b === 'string' ? b : b && typeof b === 'object' && typeof b.id === 'string' ? b.id : undefined;
    return { ...reply, entityId };
  }

  listEntities(query = '', options: { acceptVersion?: string | null } = {}) {
    return this.request('GET', `/entity${query}`, { headers: versionHeader(options.acceptVersion) });
  }

  listFeatures(query = '', options: { acceptVersion?: string | null } = {}) {
    return this.request('GET', `/features${query}`, { headers: versionHeader(options.acceptVersion) });
  }

  /** 4.6: "list of feature requirements" (2.2's fields). */
  featureRequirements(featureId: string) {
    return this.request('GET', `/feature/${encodeURIComponent(featureId)}/requirement`);
  }

  // -- webhook subscriptions (2.6, 4.2)

  registerWebhook(webhookUrl: string, notificationTypes: readonly string[]) {
    return this.request<Subscription>('POST', '/notification', { json: { notificationChannel: 'WEBHOOK', notificationTypes, webhookUrl } });
  }

  listWebhooks(query = '', options: { acceptVersion?: string | null } = {}) {
    return this.request('GET', `/notification${query}`, { headers: versionHeader(options.acceptVersion) });
  }

  getWebhook(notificationId: string) {
    return this.request<Subscription>('GET', `/notification/${encodeURIComponent(notificationId)}`);
  }

  replaceWebhook(notificationId: string, webhookUrl: string, notificationTypes: readonly string[]) {
    return this.request<Subscription>('PUT', `/notification/${encodeURIComponent(notificationId)}`, {
      json: { notificationChannel: 'WEBHOOK', notificationTypes, webhookUrl },
    });
  }

  deleteWebhook(notificationId: string) {
    return this.request('DELETE', `/notification/${encodeURIComponent(notificationId)}`);
  }

  // -- synchronous import (2.5, 4.1)

  /** One POST /entity/kyc/import/sync, as it is. */
  importSyncOnce(input: { externalId: string; shareToken: string; cardProcessorPublicToken?: string }, options: RequestOptions = {}) {
    return this.request('POST', '/entity/kyc/import/sync', { ...options, json: input });
  }

  /**
   * A well-behaved sync import: at most 3 a second from this client (section 8), and a 429 (section
   * 7) retried after a pause until `deadlineMs`. Any other answer is returned.
   */
  async importSync(input: { externalId: string; shareToken: string; cardProcessorPublicToken?: string }, deadlineMs = 30_000): Promise<Reply> {
    const end = Date.now() + deadlineMs;
    for (let attempt = 0; ; attempt++) {
      await this.#paceSync();
      const reply = await this.importSyncOnce(input);
      if (reply.status !== 429 || Date.now() > end) return reply;
      // the spec names no retry header: back off a fraction of the one-second window and try again
      await pause(350 * Math.min(attempt + 1, 3));
    }
  }

  async #paceSync(): Promise<void> {
    for (;;) {
      const now = Date.now();
      this.#syncSent = this.#syncSent.filter((t) => now - t < 1000);
      if (this.#syncSent.length < SYNC_RATE_PER_SECOND) {
        this.#syncSent.push(now);
        return;
      }
      await pause(1000 - (now - this.#syncSent[0]!) + 20);
    }
  }

  // -- batch import (2.3, 2.4, 4.1)

  /**
   * POST /entity/kyc/import/batch, multipart/form-data with the CSV in the field `file`.
   * `provider` / `idempotencyKey` as `null` leave that header out; `file: null` sends no file.
   */
  uploadBatch(
    file: string | Uint8Array | null,
    options: { idempotencyKey: string | null; provider?: string | null; apiKey?: string | null; fileName?: string },
  ): Promise<Reply> {
    const form = new FormData();
    if (file !== null)
      form.append('file', new Blob([typeof file === 'string' ? file : Buffer.from(file)], { type: 'text/csv' }), options.fileName ?? 'records.csv');
    const headers: Record<string, string> = {};
    const provider = options.provider === undefined ? this.provider : options.provider;
    if (provider !== null) headers['X-Provider'] = provider;
    if (options.idempotencyKey !== null) headers['Idempotency-Key'] = options.idempotencyKey;
    return this.request('POST', '/entity/kyc/import/batch', { form, headers, ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}) });
  }

  batchStatus(batchId: string, options: { apiKey?: string | null } = {}) {
    return this.request('GET', `/entity/kyc/import/batch/${encodeURIComponent(batchId)}`, options);
  }

  /**
   * Polls the status until it is `completed`, `failed` or `canceled` (any case, 3.1). The spec
   * suggests 30 to 60 s between polls in production; `intervalMs` is the caller's.
   */
  async waitForBatch(batchId: string, options: { timeoutMs: number; intervalMs: number }): Promise<Reply> {
    const end = Date.now() + options.timeoutMs;
    for (;;) {
      const reply = await this.batchStatus(batchId);
      if (reply.status !== 200) return reply;
      if (FINISHED.some((s) => sameStatus(reply.body?.status, s))) return reply;
      if (Date.now() > end) throw new Error(`batch ${batchId} still ${String(reply.body?.status)} after ${options.timeoutMs} ms`);
      await pause(options.intervalMs);
    }
  }
}

/**
 * The array of a list answer. The spec says a list returns "an array ... plus pagination metadata"
 * without naming either, so the array is found by what its items look like, not by its name.
 */
export function listItems<T = any>(body: unknown, looksLikeItem: (item: any) => boolean): T[] | undefined {
  if (Array.isArray(body)) return body as T[];
  if (!body || typeof body !== 'object') return undefined;
  for (const v of Object.values(body as Record<string, unknown>)) if (Array.isArray(v) && (v.length === 0 || v.every(looksLikeItem))) return v as T[];
  return undefined;
}

const versionHeader = (v: string | null | undefined): Record<string, string> => (v === null ? {} : { 'Accept-Version': v ?? ACCEPT_VERSION });
export const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));
