// The identity-provider simulator: Sumsub's API surface over HTTP, with its signatures, share-token
// rules, levels, rate limits and webhooks, plus a /_sim admin API for tests and benchmarks.
// Development and tests only: it keeps everything in memory.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { hexEqual, signRequest, webhookDigest } from '../provider/sumsub/signing.ts';
import { SCENARIOS, type Scenario } from './scenarios.ts';
import { NO_FAULTS, SimState, type SimApplicant, type SimClient } from './state.ts';

type Req = { method: string; path: string; query: URLSearchParams; raw: Buffer; json: any; client: SimClient | null; match: RegExpMatchArray };
type Res = { status: number; body?: unknown; headers?: Record<string, string> };
type Handler = (req: Req) => Res | Promise<Res>;

const SIGNATURE_TOLERANCE_S = 600;
const MAX_BODY = 1024 * 1024;

const err = (status: number, description: string, extra: Record<string, unknown> = {}): Res => ({
  status,
  body: { description, code: status, correlationId: randomUUID().replace(/-/g, '').slice(0, 24), ...extra },
});

export type ProviderSim = { url: string; state: SimState; server: Server; close(): Promise<void> };

export function applicantJson(a: SimApplicant) {
  return {
    id: a.id,
    createdAt: new Date(a.createdAt).toISOString().replace('T', ' ').slice(0, 19),
    clientId: a.clientId,
    externalUserId: a.externalUserId,
    levelName: a.levelName,
    info: a.info,
    fixedInfo: a.fixedInfo,
    review: a.review ? { ...a.review, levelName: a.levelName } : { reviewStatus: 'init', levelName: a.levelName },
    type: 'individual',
  };
}

export function createProviderSim(state = new SimState()) {
  const api: [string, RegExp, Handler][] = [];
  const admin: [string, RegExp, Handler][] = [];
  const on = (table: typeof api, method: string, pattern: RegExp, handler: Handler) => table.push([method, pattern, handler]);

  async function sendWebhook(client: SimClient, applicant: SimApplicant, type: string, extra: Record<string, unknown> = {}) {
    if (!client.webhookUrl) return;
    const body = JSON.stringify({
      applicantId: applicant.id,
      inspectionId: applicant.id,
      correlationId: randomUUID(),
      externalUserId: applicant.externalUserId,
      levelName: applicant.levelName,
      type,
      reviewResult: applicant.review?.reviewResult ?? {},
      reviewStatus: applicant.review?.reviewStatus ?? 'init',
      createdAtMs: new Date(state.now()).toISOString(),
      clientId: client.clientId,
      sandboxMode: true,
      ...extra,
    });
    const record: (typeof state.stats.webhooks)[number] = { url: client.webhookUrl, type, applicantId: applicant.id, status: null };
    state.stats.webhooks.push(record);
    try {
      const res = await fetch(client.webhookUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-payload-digest': webhookDigest(client.webhookSecret, body, 'HMAC_SHA256_HEX'),
          'x-payload-digest-alg': 'HMAC_SHA256_HEX',
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(5000),
      });
      record.status = res.status;
    } catch (e) {
      record.error = (e as Error).message;
    }
  }

  // ---- Sumsub API --------------------------------------------------------------------------------

  on(api, 'POST', /^\/resources\/applicants$/, ({ client, query, json }) => {
    const levelName = query.get('levelName') ?? client!.defaultLevel;
    if (!client!.levels.includes(levelName)) return err(404, `Level '${levelName}' not found`, { errorName: 'level-not-found' });
    if (!json || typeof json.externalUserId !== 'string' || !json.externalUserId) return err(400, 'externalUserId is required');
    if (state.findByExternalUserId(client!.clientId, json.externalUserId)) {
      return err(409, `Applicant with external user id '${json.externalUserId}' already exists`);
    }
    const a = state.addApplicant({
      clientId: client!.clientId,
      externalUserId: json.externalUserId,
      levelName,
      info: json.info ?? {},
      fixedInfo: json.fixedInfo ?? {},
      review: null,
    });
    return { status: 200, body: applicantJson(a) };
  });

  const ownApplicant = (client: SimClient, a: SimApplicant | undefined) => (a && a.clientId === client.clientId ? a : undefined);

  on(api, 'GET', /^\/resources\/applicants\/-;externalUserId=([^/]+)\/one$/, ({ client, match }) => {
    const a = state.findByExternalUserId(client!.clientId, decodeURIComponent(match[1]!));
    const listed = a && state.now() - a.createdAt >= state.faults.lookupLagMs;
    return listed ? { status: 200, body: applicantJson(a) } : err(404, 'Applicant not found');
  });

  on(api, 'GET', /^\/resources\/applicants\/([^/;]+)\/one$/, ({ client, match }) => {
    const a = ownApplicant(client!, state.applicants.get(decodeURIComponent(match[1]!)));
    return a ? { status: 200, body: applicantJson(a) } : err(404, 'Applicant not found');
  });

  on(api, 'POST', /^\/resources\/applicants\/([^/]+)\/status\/testCompleted$/, ({ client, match, json }) => {
    const a = ownApplicant(client!, state.applicants.get(decodeURIComponent(match[1]!)));
    if (!a) return err(404, 'Applicant not found');
    if (!json || (json.reviewAnswer !== 'GREEN' && json.reviewAnswer !== 'RED')) return err(400, 'reviewAnswer must be GREEN or RED');
    const result: Record<string, unknown> = { reviewAnswer: json.reviewAnswer };
    if (json.reviewAnswer === 'RED') {
      result.rejectLabels = Array.isArray(json.rejectLabels) ? json.rejectLabels : [];
      result.reviewRejectType = json.reviewRejectType ?? 'RETRY';
      if (json.moderationComment) result.moderationComment = json.moderationComment;
    }
    // each review of an applicant is a new round with its own id, as at Sumsub
    a.review = {
      reviewStatus: 'completed',
      reviewResult: result,
      reviewId: randomUUID().slice(0, 8),
      attemptCnt: (a.review?.attemptCnt ?? 0) + 1,
      reviewDate: new Date(state.now()).toISOString(),
    };
    void sendWebhook(client!, a, 'applicantReviewed');
    return { status: 200, body: { ok: 1 } };
  });

  // Sumsub's "add ID document": multipart with a JSON `metadata` part (and optionally an image,
  // which the simulator does not keep); merged into the applicant's documents by type and country.
  on(api, 'POST', /^\/resources\/applicants\/([^/]+)\/info\/idDoc$/, ({ client, match, raw }) => {
    const a = ownApplicant(client!, state.applicants.get(decodeURIComponent(match[1]!)));
    if (!a) return err(404, 'Applicant not found');
    const part = /Content-Disposition: form-data; name="metadata"[^]*?\r\n\r\n([^]*?)\r\n--/i.exec(raw.toString('utf8'));
    let metadata: any;
    try {
      metadata = part ? JSON.parse(part[1]!) : undefined;
    } catch {
      metadata = undefined;
    }
    if (!metadata || typeof metadata.idDocType !== 'string' || typeof metadata.country !== 'string')
      return err(400, 'metadata with idDocType and country is required');
    const docs: Record<string, unknown>[] = Array.isArray(a.info.idDocs) ? (a.info.idDocs as Record<string, unknown>[]) : [];
    const same = docs.find((d) => d.idDocType === metadata.idDocType && d.country === metadata.country);
    if (same) Object.assign(same, metadata);
    else docs.push({ ...metadata });
    a.info.idDocs = docs;
    return { status: 200, body: metadata };
  });

  on(api, 'POST', /^\/resources\/accessTokens\/shareToken$/, ({ client, json }) => {
    if (!json || typeof json.applicantId !== 'string' || typeof json.forClientId !== 'string') return err(400, 'applicantId and forClientId are required');
    const a = ownApplicant(client!, state.applicants.get(json.applicantId));
    if (!a) return err(404, 'Applicant not found');
    if (!state.clients.has(json.forClientId)) return err(400, `Unknown recipient client '${json.forClientId}'`);
    const ttl = json.ttlInSecs === undefined ? 1200 : Number(json.ttlInSecs);
    if (!Number.isInteger(ttl) || ttl <= 0) return err(400, 'ttlInSecs must be a positive integer');
    const t = state.mintShareToken(a.id, client!.clientId, json.forClientId, ttl);
    return { status: 200, body: { token: t.token, forClientId: t.forClientId } };
  });

  const importHandler =
    (withLevel: boolean): Handler =>
    ({ client, query }) => {
      const raw = query.get('shareToken') ?? '';
      const stats = state.importStats(raw);
      stats.attempts++;
      if (state.stats.importTimes.length < 100_000) state.stats.importTimes.push(state.now());
      const t = state.shareTokens.get(raw);
      const at = new Date(state.now()).toUTCString();
      if (!t) return err(401, `Token is invalid: Token ${raw.slice(0, 40)} is malformed or unknown [source: null]`);
      if (t.forClientId !== client!.clientId) return err(401, `Token is invalid: Token ${t.jti} was not issued for this client`);
      if (t.usedAt !== null) return err(401, `Token is invalid: Token ${t.jti} was already used at ${new Date(t.usedAt).toUTCString()}`);
      if (state.now() > t.createdAt + t.ttlInSecs * 1000) {
        return err(
          401,
          `Token is invalid: Token ${t.jti} is invalid now: created at ` +
            `${new Date(t.createdAt).toUTCString()} with ttl ${t.ttlInSecs} but accessed at ${at} ` +
            `[source: null]`,
        );
      }
      const levelName = (withLevel && query.get('levelName')) || client!.defaultLevel;
      const wantedExternalUserId = query.get('externalUserId');
      if (wantedExternalUserId && state.findByExternalUserId(client!.clientId, wantedExternalUserId)) {
        return err(409, `Applicant with external user id '${wantedExternalUserId}' already exists`);
      }
      if (!client!.levels.includes(levelName)) {
        return err(400, `Level '${levelName}' not found`, { errorCode: 10501, errorName: 'reusable-kyc-level-not-found' });
      }
      const donor = state.applicants.get(t.applicantId)!;
      if (donor.review?.reviewStatus !== 'completed') {
        return err(400, `Not Reusable KYC for level: ${levelName}`, { errorCode: 10513, errorName: 'reusable-kyc-not-compatible-doc-type' });
      }
      if (donor.review.reviewResult?.reviewAnswer !== 'GREEN') {
        return err(400, 'Applicant is not approved in the donor account', { errorCode: 10514, errorName: 'reusable-kyc-applicant-not-approved' });
      }
      t.usedAt = state.now();
      const copy = state.addApplicant({
        clientId: client!.clientId,
        externalUserId: wantedExternalUserId || `copy-${randomUUID()}`,
        levelName,
        info: structuredClone(donor.info),
        fixedInfo: structuredClone(donor.fixedInfo),
        review: structuredClone(donor.review),
        importedWith: t.token,
      });
      stats.succeeded++;
      stats.applicantId = copy.id;
      void sendWebhook(client!, copy, 'applicantReviewed', { reuseScope: 'reusableIdentity' });
      return { status: 200, body: applicantJson(copy) };
    };
  on(api, 'POST', /^\/resources\/api\/reusableIdentity\/reuse$/, importHandler(true));
  on(api, 'POST', /^\/resources\/applicants\/-\/import$/, importHandler(false));

  on(api, 'POST', /^\/resources\/accessTokens\/sdk$/, ({ client, json }) => {
    if (!json || typeof json.userId !== 'string' || !json.userId || typeof json.levelName !== 'string') return err(400, 'userId and levelName are required');
    if (!client!.levels.includes(json.levelName)) return err(404, `Level '${json.levelName}' not found`, { errorName: 'level-not-found' });
    return { status: 200, body: { token: `_act-sbx-jwt-${randomUUID()}`, userId: json.userId } };
  });

  // ---- admin API (no signature; bind the simulator to loopback) --------------------------------

  on(admin, 'POST', /^\/_sim\/clients$/, ({ json }) => {
    if (!json?.clientId) return err(400, 'clientId is required');
    try {
      return { status: 201, body: state.addClient(json) };
    } catch (e) {
      return err(409, (e as Error).message);
    }
  });
  on(admin, 'GET', /^\/_sim\/clients$/, () => ({ status: 200, body: [...state.clients.values()] }));
  on(admin, 'PATCH', /^\/_sim\/clients\/([^/]+)$/, ({ json, match }) => {
    try {
      return { status: 200, body: state.updateClient(decodeURIComponent(match[1]!), json ?? {}) };
    } catch (e) {
      return err(404, (e as Error).message);
    }
  });
  on(admin, 'GET', /^\/_sim\/scenarios$/, () => ({ status: 200, body: SCENARIOS }));
  on(admin, 'POST', /^\/_sim\/applicants$/, ({ json }) => {
    const scenario = (json?.scenario ?? 'complete') as Scenario;
    if (!SCENARIOS.includes(scenario)) return err(400, `scenario must be one of ${SCENARIOS.join(', ')}`);
    if (!state.clients.has(json?.clientId)) return err(404, `no client ${json?.clientId}`);
    const count = Number(json.count ?? 1);
    const made = Array.from({ length: count }, (_, i) =>
      state.addScenarioApplicant(
        json.clientId,
        scenario,
        count === 1 && json.externalUserId ? json.externalUserId : `${json.externalUserIdPrefix ?? 'applicant'}-${randomUUID()}`,
        i,
      ),
    );
    return { status: 201, body: made.map((a) => ({ id: a.id, externalUserId: a.externalUserId, scenario })) };
  });
  on(admin, 'PUT', /^\/_sim\/clock$/, ({ json }) => {
    if (typeof json?.offsetMs === 'number') state.clockOffsetMs = json.offsetMs;
    if (typeof json?.advanceMs === 'number') state.clockOffsetMs += json.advanceMs;
    return { status: 200, body: { now: new Date(state.now()).toISOString(), offsetMs: state.clockOffsetMs } };
  });
  on(admin, 'PUT', /^\/_sim\/faults$/, ({ json }) => {
    state.faults = { ...NO_FAULTS, ...json };
    return { status: 200, body: state.faults };
  });
  on(admin, 'GET', /^\/_sim\/stats$/, () => ({ status: 200, body: state.stats }));
  on(admin, 'DELETE', /^\/_sim\/stats$/, () => {
    state.stats = state.freshStats();
    return { status: 204 };
  });

  // ---- plumbing --------------------------------------------------------------------------------

  function authenticate(req: IncomingMessage, path: string, raw: Buffer): SimClient | Res {
    const token = req.headers['x-app-token'];
    const ts = req.headers['x-app-access-ts'];
    const sig = req.headers['x-app-access-sig'];
    if (typeof token !== 'string' || typeof ts !== 'string' || typeof sig !== 'string')
      return err(401, 'App token, timestamp and signature headers are required');
    const client = state.byAppToken.get(token);
    if (!client) return err(401, 'App token is not valid');
    if (!/^\d+$/.test(ts) || Math.abs(Date.now() / 1000 - Number(ts)) > SIGNATURE_TOLERANCE_S)
      return err(401, 'Request timestamp is too far from the current time');
    if (!hexEqual(signRequest(client.secretKey, ts, req.method!, path, raw), sig)) return err(401, 'Request signature mismatch');
    return client;
  }

  const faultApplies = (path: string) => !state.faults.pathPattern || new RegExp(state.faults.pathPattern).test(path);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_BODY) return send(res, err(413, 'Request body too large'));
      chunks.push(c as Buffer);
    }
    const raw = Buffer.concat(chunks);
    const rawPath = req.url ?? '/';
    const url = new URL(rawPath, 'http://sim');
    const isAdmin = url.pathname.startsWith('/_sim/');
    let json: any;
    const multipart = /^multipart\/form-data/i.test(req.headers['content-type'] ?? '');
    if (raw.length && !multipart) {
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        return send(res, err(400, 'Malformed JSON'));
      }
    }
    const table = isAdmin ? admin : api;
    const found = table.find(([m, p]) => m === req.method && p.test(url.pathname));
    let client: SimClient | null = null;
    if (!isAdmin) {
      state.stats.requests++;
      const auth = authenticate(req, rawPath, raw);
      if (!('clientId' in auth)) {
        state.stats.signatureFailures++;
        return send(res, auth);
      }
      client = auth;
      const waitMs = state.takeRate(client, req.method!);
      if (waitMs > 0) {
        state.stats.rateLimited++;
        return send(res, { ...err(429, 'Too many requests'), headers: { 'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))) } });
      }
      if (faultApplies(url.pathname)) {
        const f = state.faults;
        if (f.latencyMs > 0) {
          const stats = state.stats; // the same object even if the stats are reset meanwhile
          stats.delayed++;
          await new Promise((r) => setTimeout(r, f.latencyMs));
          stats.delayed--;
        }
        if (f.timeoutNext > 0 || (f.timeoutRate > 0 && Math.random() < f.timeoutRate)) {
          if (f.timeoutNext > 0) f.timeoutNext--;
          return; // never answer; the socket closes when the client gives up or the server stops
        }
        if (f.failNext > 0 || (f.errorRate > 0 && Math.random() < f.errorRate)) {
          if (f.failNext > 0) f.failNext--;
          return send(res, err(500, 'Internal server error (simulated)'));
        }
      }
    }
    if (!found) return send(res, err(404, `No such endpoint: ${req.method} ${url.pathname}`));
    return send(
      res,
      await found[2]({ method: req.method!, path: url.pathname, query: url.searchParams, raw, json, client, match: url.pathname.match(found[1])! }),
    );
  }

  function send(res: ServerResponse, r: Res) {
    if (!res.headersSent) {
      state.stats.byStatus[r.status] = (state.stats.byStatus[r.status] ?? 0) + 1;
      res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
    }
    res.end(r.body === undefined ? undefined : JSON.stringify(r.body));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => send(res, err(500, `simulator error: ${(e as Error).message}`)));
  });
  return { server, state };
}

export async function startProviderSim(options: { port?: number; host?: string; state?: SimState } = {}): Promise<ProviderSim> {
  const { server, state } = createProviderSim(options.state);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    state,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
