// The soak's clients (bench/soak.ts): businesses with 10 webhook subscriptions each, and the flows
// they run over HTTP — sync imports, batch uploads, hosted-SDK reviews played by the sandbox,
// universal KYC, KYB with its owners, downloads of KYB documents, reads. Each flow notes what it
// expects the service to do about each person or business it touched (one decision event, none, or
// at most one when the client could not tell what happened), for the checks after the drain.
import { randomUUID } from 'node:crypto';
import type { Scenario } from '../../provider-sim/scenarios.ts';
import { createSumsubClient, type SumsubClient } from '../../provider/sumsub/client.ts';
import { createBusiness } from '../../store/businesses.ts';
import type { Db } from '../../store/db.ts';
import { canonicalPayload, documentsForm, FILES, filesForm } from '../../test/helpers/ukyc.ts';
import type { Answer, CallOptions, Client, Method, Route } from './client.ts';
import { sleep } from './fleet.ts';

export type Kind = 'sync' | 'batch' | 'sdk' | 'ukyc' | 'kyb' | 'download' | 'read';

export type Rates = {
  /** Sync imports per second of a business in its turn (the spec's limit, 3), and of the others meanwhile. */
  syncRate: number;
  syncHot: number;
  syncBackground: number;
  /** Seconds between a business's flows of each kind (0: none). */
  batchEvery: number;
  batchRows: number;
  sdkEvery: number;
  ukycEvery: number;
  kybEvery: number;
  downloadEvery: number;
  readEvery: number;
};

export type Business = {
  index: number;
  id: string;
  apiKey: string;
  /** Receiver path → subscription id and the types it takes. */
  subscriptions: { path: string; id: string; types: string[] }[];
  entities: string[];
  kybDone: string[];
};

export type Expectation = {
  entityId: string;
  business: number;
  kind: Kind | 'kyb-owner';
  eventType: 'account_status_change' | 'kyb_status_change';
  /** 1: exactly one decision event; 0: none; 'atMostOne': the client does not know whether its request took effect. */
  expect: 1 | 0 | 'atMostOne';
  /** When the last request that should lead to the decision was answered (for answer → webhook latency). */
  answeredAt?: number;
};

export type BatchRecord = { batchId: string; business: number; rows: number; uploadedAt: number; finishedAt: number | null; status: string };

export type FlowStats = Record<Kind, { started: number; done: number; failed: Record<string, number>; skipped: number }>;

const ALL_TYPES = ['account_status_change', 'kyb_status_change', 'verification_status_change', 'feature_access_change', 'new_feature', 'reminder'];
const DECISION_TYPES = ['account_status_change', 'kyb_status_change'];

/** Share-token scenarios and how often: mostly approvable people, some under 18 (REJECTED, an event), some the donor rejected (refused, no event). */
const SCENARIO_MIX: [Scenario, number][] = [
  ['complete', 0.9],
  ['under-18', 0.05],
  ['donor-rejected', 0.05],
];
const pickScenario = (): Scenario => {
  let r = Math.random();
  for (const [s, p] of SCENARIO_MIX) if ((r -= p) < 0) return s;
  return 'complete';
};
/** A record of this scenario ends succeeded (with one decision event) or failed as the provider refuses it. */
export const scenarioSucceeds = (s: Scenario) => s !== 'donor-rejected';

/** The donor fintech at the simulator: its applicants (made through the simulator's admin API) and share tokens for us, minted over its signed API. */
export async function createDonor(simUrl: string, recipientClientId: string) {
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${simUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`simulator ${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as any;
  };
  const account = await admin('POST', '/_sim/clients', { clientId: `soak-donor-${randomUUID().slice(0, 8)}`, limits: { postPer5s: 1e9, getPer5s: 1e9 } });
  const api: SumsubClient = createSumsubClient({ baseUrl: simUrl, appToken: account.appToken, secretKey: account.secretKey, timeoutMs: 10_000 });
  const pools = new Map<Scenario, string[]>();
  const refills = new Map<Scenario, Promise<void>>();
  const applicant = async (scenario: Scenario): Promise<string> => {
    for (;;) {
      const pool = pools.get(scenario) ?? [];
      pools.set(scenario, pool);
      const id = pool.pop();
      if (id) return id;
      let refill = refills.get(scenario);
      if (!refill) {
        refill = admin('POST', '/_sim/applicants', { clientId: account.clientId, scenario, count: 100 })
          .then((made: { id: string }[]) => void pool.push(...made.map((a) => a.id)))
          .finally(() => refills.delete(scenario));
        refills.set(scenario, refill);
      }
      await refill;
    }
  };
  /** Which scenario each minted token was made for. */
  const scenarioOf = new Map<string, Scenario>();
  return {
    scenarioOf,
    async token(scenario: Scenario, ttlInSecs = 7200): Promise<string> {
      const { token } = await api.createShareToken({ applicantId: await applicant(scenario), forClientId: recipientClientId, ttlInSecs });
      scenarioOf.set(token, scenario);
      return token;
    },
  };
}
export type Donor = Awaited<ReturnType<typeof createDonor>>;

export function emptyFlowStats(): FlowStats {
  const one = () => ({ started: 0, done: 0, failed: {} as Record<string, number>, skipped: 0 });
  return { sync: one(), batch: one(), sdk: one(), ukyc: one(), kyb: one(), download: one(), read: one() };
}

/** Makes the business (with the admin store, as the CLI does) and its 10 subscriptions (over the API): eight for decisions, two for every type. */
export async function setUpBusiness(db: Db, client: Client, index: number, receiverUrl: (path: string) => string): Promise<Business> {
  const { business, apiKey } = await createBusiness(db, { name: `Soak ${index}`, binSponsored: false, environment: 'sandbox' });
  const b: Business = { index, id: business.id, apiKey, subscriptions: [], entities: [], kybDone: [] };
  for (let n = 0; n < 10; n++) {
    const path = `/hooks/${index}/${n}`;
    const types = n < 8 ? DECISION_TYPES : ALL_TYPES;
    const res = await client.call('POST', '/notification', {
      key: apiKey,
      json: { notificationChannel: 'WEBHOOK', notificationTypes: types, webhookUrl: receiverUrl(path) },
    });
    if (res.status !== 201) throw new Error(`subscription ${path}: ${res.status} ${res.text}`);
    b.subscriptions.push({ path, id: String(res.body.id), types });
  }
  return b;
}

export type Traffic = ReturnType<typeof createTraffic>;

export function createTraffic(options: {
  client: Client;
  donor: Donor;
  businesses: Business[];
  rates: Rates;
  /** The flows start until this time, and wait (for a batch to finish) until `waitUntil()`. */
  trafficEnd: number;
  waitUntil: () => number;
  trafficStart: number;
}) {
  const { client, donor, businesses, rates } = options;
  const expectations: Expectation[] = [];
  const batches: BatchRecord[] = [];
  const stats = emptyFlowStats();
  const downloads = { ok: 0, wrongBytes: 0 };
  const sync429 = { count: 0 };
  const inFlight = new Set<Promise<void>>();
  let serial = 0;

  const fail = (kind: Kind, why: string) => {
    stats[kind].failed[why] = (stats[kind].failed[why] ?? 0) + 1;
  };
  const why = (res: Answer) =>
    res.status === 0 ? `no answer (${res.error?.refused ? 'refused' : 'cut off'})` : `${res.status} ${res.body?.code ?? ''}`.trim();
  /** A call retried while the answer says the service could not do it now (5xx, 429, no answer): what a careful client does. */
  const persist = async (method: Method, route: Route, o: CallOptions, attempts = 4): Promise<Answer> => {
    let res = await client.call(method, route, o);
    for (let i = 1; i < attempts && (res.status >= 500 || res.status === 429 || (res.status === 0 && o.idempotent)); i++) {
      const retryAfter = Number(res.headers?.get('retry-after') ?? 0);
      await sleep(retryAfter > 0 ? retryAfter * 1000 : 1000 * 2 ** i);
      res = await client.call(method, route, o);
    }
    return res;
  };
  const person = async (b: Business, kind: Kind, type: 'INDIVIDUAL' | 'BUSINESS' = 'INDIVIDUAL'): Promise<{ id: string; externalId: string } | null> => {
    const externalId = `b${b.index}-${kind}-${++serial}`;
    // not idempotent (a second create is refused as a duplicate externalId), so only refused connections and 5xx are retried
    const res = await persist('POST', '/entity', { key: b.apiKey, json: { externalId, type } });
    if (res.status !== 201) {
      fail(kind, `POST /entity ${why(res)}`);
      return null;
    }
    const id = String(res.body.id);
    b.entities.push(id);
    if (b.entities.length > 500) b.entities.shift();
    return { id, externalId };
  };
  const expect = (e: Expectation) => void expectations.push(e);

  async function syncOne(b: Business) {
    const s = stats.sync;
    s.started++;
    const p = await person(b, 'sync');
    if (!p) return;
    const scenario = pickScenario();
    const token = await donor.token(scenario);
    const key = randomUUID();
    let res: Answer | undefined;
    for (let attempt = 0; attempt < 6; attempt++) {
      res = await client.call('POST', '/entity/kyc/import/sync', {
        key: b.apiKey,
        json: { externalId: p.externalId, shareToken: token },
        headers: { 'Idempotency-Key': key },
        idempotent: true,
      });
      if (res.status === 429) {
        sync429.count++;
        await sleep(Math.max(1, Number(res.headers?.get('retry-after') ?? 1)) * 1000);
        continue;
      }
      if (res.status === 0 || res.status >= 500) {
        await sleep(2000 * (attempt + 1));
        continue;
      }
      break;
    }
    const answeredAt = Date.now();
    if (res!.status === 200) {
      s.done++;
      expect({
        entityId: p.id,
        business: b.index,
        kind: 'sync',
        eventType: 'account_status_change',
        expect: scenarioSucceeds(scenario) ? 1 : 'atMostOne',
        answeredAt,
      });
      if (!scenarioSucceeds(scenario)) fail('sync', `200 for a ${scenario} token`);
    } else if (res!.status === 422 && !scenarioSucceeds(scenario)) {
      s.done++;
      expect({ entityId: p.id, business: b.index, kind: 'sync', eventType: 'account_status_change', expect: 0 });
    } else {
      fail('sync', why(res!));
      expect({ entityId: p.id, business: b.index, kind: 'sync', eventType: 'account_status_change', expect: 'atMostOne' });
    }
  }

  async function batchOne(b: Business) {
    const s = stats.batch;
    s.started++;
    const rows: { entityId: string; externalId: string; token: string; scenario: Scenario }[] = [];
    for (let i = 0; i < rates.batchRows; i++) {
      const p = await person(b, 'batch');
      if (!p) continue;
      const scenario = pickScenario();
      rows.push({ entityId: p.id, externalId: p.externalId, scenario, token: await donor.token(scenario) });
    }
    if (rows.length === 0) return;
    const csv = `externalId,shareToken\n${rows.map((r) => `${r.externalId},${r.token}`).join('\n')}\n`;
    const key = randomUUID();
    const res = await persist('POST', '/entity/kyc/import/batch', {
      key: b.apiKey,
      headers: { 'X-Provider': 'sumsub', 'Idempotency-Key': key },
      form: () => {
        const form = new FormData();
        form.append('file', new Blob([csv], { type: 'text/csv' }), 'soak.csv');
        return form;
      },
      idempotent: true,
    });
    // a retried upload whose first answer was lost: the same key and file name the batch that was made
    const batchId = res.status === 201 ? String(res.body.batchId) : typeof res.body?.batchId === 'string' ? String(res.body.batchId) : null;
    if (!batchId) {
      fail('batch', `upload ${why(res)}`);
      for (const r of rows) expect({ entityId: r.entityId, business: b.index, kind: 'batch', eventType: 'account_status_change', expect: 'atMostOne' });
      return;
    }
    const record: BatchRecord = { batchId, business: b.index, rows: rows.length, uploadedAt: Date.now(), finishedAt: null, status: 'pending' };
    batches.push(record);
    for (const r of rows)
      expect({ entityId: r.entityId, business: b.index, kind: 'batch', eventType: 'account_status_change', expect: scenarioSucceeds(r.scenario) ? 1 : 0 });
    while (Date.now() < options.waitUntil()) {
      await sleep(5000);
      const st = await client.call('GET', '/entity/kyc/import/batch/{batchId}', { key: b.apiKey, params: { batchId }, idempotent: true });
      if (st.status !== 200) continue;
      record.status = String(st.body.status);
      if (!['pending', 'in_progress'].includes(record.status)) {
        record.finishedAt = Date.now();
        s.done++;
        return;
      }
    }
    fail('batch', `still ${record.status} at the end`);
  }

  async function sdkOne(b: Business) {
    const s = stats.sdk;
    s.started++;
    const p = await person(b, 'sdk');
    if (!p) return;
    const token = await persist('POST', '/entity/{entityId}/kyc', { key: b.apiKey, params: { entityId: p.id }, idempotent: true });
    if (token.status !== 200) return fail('sdk', `token ${why(token)}`);
    const green = Math.random() < 0.9;
    // not idempotent (a second review would be a second decision): only a refused connection is retried
    const review = await client.call('POST', '/sandbox/entity/{entityId}/kyc/complete', {
      key: b.apiKey,
      params: { entityId: p.id },
      json: green ? { reviewAnswer: 'GREEN' } : { reviewAnswer: 'RED', rejectLabels: ['FORGERY'], reviewRejectType: 'FINAL' },
    });
    if (review.status === 202) {
      s.done++;
      expect({ entityId: p.id, business: b.index, kind: 'sdk', eventType: 'account_status_change', expect: 1, answeredAt: Date.now() });
    } else {
      fail('sdk', `review ${why(review)}`);
      expect({ entityId: p.id, business: b.index, kind: 'sdk', eventType: 'account_status_change', expect: 'atMostOne' });
    }
  }

  /** The person's canonical KYC data and identity document: true when both were accepted. */
  async function universalKyc(b: Business, kind: Kind, entityId: string): Promise<boolean> {
    const data = await persist('POST', '/entity/{entityId}/requirement', {
      key: b.apiKey,
      params: { entityId },
      json: { requirementSlug: 'ukyc-canonical-kyc-data', value: JSON.stringify(canonicalPayload()) },
      idempotent: true, // newer data supersedes; still one decision
    });
    if (data.status !== 201) return (fail(kind, `data ${why(data)}`), false);
    const upload = await persist('POST', '/entity/{entityId}/requirement-slug/{requirementSlug}/upload', {
      key: b.apiKey,
      params: { entityId, requirementSlug: 'ukyc-id-document' },
      form: () => filesForm([{ bytes: FILES.pdf, name: 'passport.pdf' }]),
      idempotent: true, // a file after the decision waits for a next submission
    });
    if (upload.status !== 201) return (fail(kind, `upload ${why(upload)}`), false);
    return true;
  }

  async function ukycOne(b: Business) {
    const s = stats.ukyc;
    s.started++;
    const p = await person(b, 'ukyc');
    if (!p) return;
    const ok = await universalKyc(b, 'ukyc', p.id);
    if (ok) s.done++;
    expect({ entityId: p.id, business: b.index, kind: 'ukyc', eventType: 'account_status_change', expect: ok ? 1 : 'atMostOne', answeredAt: Date.now() });
  }

  async function kybOne(b: Business) {
    const s = stats.kyb;
    s.started++;
    const p = await person(b, 'kyb', 'BUSINESS');
    if (!p) return;
    const ubos = [0, 1].map((i) => ({
      externalId: `${p.externalId}-owner-${i}`,
      firstName: i ? 'Grace' : 'Ada',
      lastName: i ? 'Hopper' : 'Lovelace',
      dob: i ? '1976-12-09' : '1980-12-10',
      nationality: 'GBR',
      ownershipPercentage: 40,
    }));
    let profile = await persist('POST', '/ukyb', {
      key: b.apiKey,
      json: {
        entityId: p.id,
        business: {
          legalName: `${p.externalId} Ltd`,
          registrationNumber: String(serial),
          country: 'GBR',
          address: { country: 'GBR', postCode: 'EC1A 1BB', street: 'King Street' },
        },
        ubos,
      },
    });
    if (profile.status === 409) profile = await persist('GET', '/ukyb/{entityId}', { key: b.apiKey, params: { entityId: p.id }, idempotent: true });
    if (profile.status !== 201 && profile.status !== 200) return fail('kyb', `profile ${why(profile)}`);
    const owners = (profile.body.ubos as { entityId: string }[]).map((o) => o.entityId);
    const document = (fields: Record<string, string>) =>
      persist('POST', '/ukyb/documents', { key: b.apiKey, form: () => documentsForm(fields), idempotent: true });
    for (const requirementSlug of ['ukyb-certificate-of-incorporation', 'ukyb-proof-of-address', 'ukyb-register-of-shareholders']) {
      const res = await document({ entityId: p.id, requirementSlug });
      if (res.status !== 201) return fail('kyb', `document ${why(res)}`);
    }
    for (const memberId of owners) {
      const res = await document({ entityId: p.id, memberId, documentType: 'PASSPORT' });
      if (res.status !== 201) return fail('kyb', `owner document ${why(res)}`);
    }
    const submit = await persist('POST', '/ukyb/submit', { key: b.apiKey, json: { entityId: p.id }, idempotent: true });
    if (submit.status !== 202) return fail('kyb', `submit ${why(submit)}`);
    let all = true;
    for (const owner of owners) {
      const ok = await universalKyc(b, 'kyb', owner);
      all &&= ok;
      expect({
        entityId: owner,
        business: b.index,
        kind: 'kyb-owner',
        eventType: 'account_status_change',
        expect: ok ? 1 : 'atMostOne',
        answeredAt: Date.now(),
      });
    }
    expect({ entityId: p.id, business: b.index, kind: 'kyb', eventType: 'kyb_status_change', expect: all ? 1 : 'atMostOne', answeredAt: Date.now() });
    if (all) {
      s.done++;
      b.kybDone.push(p.id);
    }
  }

  async function downloadOne(b: Business) {
    const s = stats.download;
    const entityId = b.kybDone[Math.floor(Math.random() * b.kybDone.length)];
    if (!entityId) return void s.skipped++;
    s.started++;
    const manifest = await persist('GET', '/entity/{entityId}/documents', { key: b.apiKey, params: { entityId }, idempotent: true });
    if (manifest.status !== 200) return fail('download', `manifest ${why(manifest)}`);
    const files = Object.values(manifest.body.business as Record<string, { fileId: string }[]>).flat();
    const file = files[Math.floor(Math.random() * files.length)];
    if (!file) return fail('download', 'empty manifest');
    const link = await persist('GET', '/entity/{entityId}/file/{fileId}/presigned-url', {
      key: b.apiKey,
      params: { entityId, fileId: file.fileId },
      idempotent: true,
    });
    if (link.status !== 200) return fail('download', `presign ${why(link)}`);
    const got = await persist('GET', '/files/{link}', {
      params: { link: decodeURIComponent(new URL(String(link.body.url)).pathname.split('/').pop()!) },
      idempotent: true,
    });
    if (got.status !== 200) return fail('download', `file ${why(got)}`);
    if (got.text !== FILES.pdf.toString('utf8')) downloads.wrongBytes++;
    else downloads.ok++;
    s.done++;
  }

  async function readOne(b: Business) {
    const s = stats.read;
    const entityId = b.entities[Math.floor(Math.random() * b.entities.length)];
    if (!entityId) return void s.skipped++;
    s.started++;
    const res = await client.call('GET', '/entity/{entityId}', { key: b.apiKey, params: { entityId }, idempotent: true });
    if (res.status === 200) s.done++;
    else fail('read', why(res));
  }

  const launch = (fn: () => Promise<void>, kind: Kind) => {
    const p: Promise<void> = fn()
      .catch((err: unknown) => fail(kind, `client error: ${(err as Error).message.slice(0, 120)}`))
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };

  /** A flow of one kind for one business, every `everySeconds` (first at a random point of its first period, capped at a quarter of the run). */
  const every = async (b: Business, kind: Kind, everySeconds: number, fn: (b: Business) => Promise<void>) => {
    if (everySeconds <= 0) return;
    const period = everySeconds * 1000;
    const untilEnd = (ms: number) => sleep(Math.max(0, Math.min(ms, options.trafficEnd - Date.now())));
    await untilEnd(Math.random() * Math.min(period, (options.trafficEnd - Date.now()) / 4));
    while (Date.now() < options.trafficEnd) {
      launch(() => fn(b), kind);
      await untilEnd(period * (0.8 + 0.4 * Math.random()));
    }
  };

  /** Whether a business is in its sync turn: the businesses take turns, `syncHot` at a time, each once over the run. */
  const turns = Math.max(1, Math.ceil(businesses.length / Math.max(1, rates.syncHot)));
  const turnMs = (options.trafficEnd - options.trafficStart) / turns;
  const hot = (b: Business) =>
    Math.floor(b.index / Math.max(1, rates.syncHot)) === Math.min(turns - 1, Math.floor((Date.now() - options.trafficStart) / turnMs));
  const syncLoop = async (b: Business) => {
    let inflight = 0;
    let next = Date.now();
    while (Date.now() < options.trafficEnd) {
      const rate = hot(b) ? rates.syncRate : rates.syncBackground;
      if (rate <= 0) {
        await sleep(500);
        next = Date.now();
        continue;
      }
      // in its turn, evenly spaced at the rate (never catching up in a burst after a stall); otherwise at random (a Poisson process of that rate)
      next = Math.max(next, Date.now() - 1000 / rate);
      next += hot(b) ? 1000 / rate : -Math.log(1 - Math.random()) * (1000 / rate);
      await sleep(Math.max(0, Math.min(next, options.trafficEnd) - Date.now()));
      if (Date.now() >= options.trafficEnd) break;
      if (inflight >= Math.max(4, Math.ceil(rates.syncRate * 3))) {
        stats.sync.skipped++;
        continue;
      }
      inflight++;
      launch(() => syncOne(b).finally(() => inflight--), 'sync');
    }
  };

  return {
    expectations,
    batches,
    stats,
    downloads,
    sync429,
    /** Runs every business's flows until the end of the traffic, then waits for the flows still under way. */
    async run() {
      const loops: Promise<void>[] = [];
      for (const b of businesses) {
        loops.push(syncLoop(b));
        loops.push(every(b, 'batch', rates.batchEvery, batchOne));
        loops.push(every(b, 'sdk', rates.sdkEvery, sdkOne));
        loops.push(every(b, 'ukyc', rates.ukycEvery, ukycOne));
        loops.push(every(b, 'kyb', rates.kybEvery, kybOne));
        loops.push(every(b, 'download', rates.downloadEvery, downloadOne));
        loops.push(every(b, 'read', rates.readEvery, readOne));
      }
      await Promise.all(loops);
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
