// The simulator's world: client accounts (donors and recipients) with their levels, applicants,
// share and SDK tokens, a clock that tests can move, fault knobs, and counters tests read back.
import { randomBytes, randomUUID } from 'node:crypto';
import { scenarioApplicant, type Scenario } from './scenarios.ts';

export type Limits = { postPer5s: number; getPer5s: number };

export type SimClient = {
  clientId: string;
  appToken: string;
  secretKey: string;
  levels: string[];
  defaultLevel: string;
  webhookUrl: string | null;
  webhookSecret: string;
  limits: Limits;
};

export type SimApplicant = {
  id: string;
  clientId: string;
  externalUserId: string;
  levelName: string;
  createdAt: number;
  info: Record<string, unknown>;
  fixedInfo: Record<string, unknown>;
  review: { reviewStatus: string; reviewResult?: Record<string, unknown>; reviewId?: string; attemptCnt?: number; reviewDate?: string } | null;
  importedWith: string | null;
};

export type ShareToken = {
  token: string;
  jti: string;
  applicantId: string;
  donorClientId: string;
  forClientId: string;
  createdAt: number;
  ttlInSecs: number;
  usedAt: number | null;
};

export type Faults = {
  /** Added to every matching response. */
  latencyMs: number;
  /** Share of matching requests answered 500. */
  errorRate: number;
  /** Share of matching requests never answered (the client's timeout fires). */
  timeoutRate: number;
  /** The next N matching requests answer 500 / hang, whatever the rates. */
  failNext: number;
  timeoutNext: number;
  /** Only requests whose path matches this regular expression are affected (all when empty). */
  pathPattern: string;
  /** A look-up by externalUserId misses applicants created less than this long ago (an index that lags). */
  lookupLagMs: number;
};

export const DEFAULT_LIMITS: Limits = { postPer5s: 50, getPer5s: 300 };
export const NO_FAULTS: Faults = { latencyMs: 0, errorRate: 0, timeoutRate: 0, failNext: 0, timeoutNext: 0, pathPattern: '', lookupLagMs: 0 };

export type ImportStats = { attempts: number; succeeded: number; applicantId: string | null };

export class SimState {
  clients = new Map<string, SimClient>();
  byAppToken = new Map<string, SimClient>();
  applicants = new Map<string, SimApplicant>();
  shareTokens = new Map<string, ShareToken>();
  clockOffsetMs = 0;
  faults: Faults = { ...NO_FAULTS };
  stats = this.freshStats();
  private windows = new Map<string, number[]>();

  freshStats() {
    return {
      requests: 0,
      byStatus: {} as Record<string, number>,
      rateLimited: 0,
      signatureFailures: 0,
      /** Requests being held by the latency fault right now (received, not yet acted on). */
      delayed: 0,
      imports: {} as Record<string, ImportStats>,
      /** When each import request arrived (simulator clock, ms): what a rate-limit test counts. */
      importTimes: [] as number[],
      webhooks: [] as { url: string; type: string; applicantId: string; status: number | null; error?: string }[],
    };
  }

  now(): number {
    return Date.now() + this.clockOffsetMs;
  }

  addClient(input: Partial<SimClient> & { clientId: string }): SimClient {
    if (this.clients.has(input.clientId)) throw new Error(`client ${input.clientId} exists`);
    const levels = input.levels ?? ['basic-kyc-level', 'id-and-liveness', 'id-liveness-poa'];
    const client: SimClient = {
      clientId: input.clientId,
      appToken: input.appToken ?? `sbx:${randomBytes(18).toString('base64url')}`,
      secretKey: input.secretKey ?? randomBytes(24).toString('base64url'),
      levels,
      defaultLevel: input.defaultLevel ?? levels[0]!,
      webhookUrl: input.webhookUrl ?? null,
      webhookSecret: input.webhookSecret ?? randomBytes(24).toString('base64url'),
      limits: { ...DEFAULT_LIMITS, ...input.limits },
    };
    this.clients.set(client.clientId, client);
    this.byAppToken.set(client.appToken, client);
    return client;
  }

  updateClient(
    clientId: string,
    patch: Partial<Pick<SimClient, 'levels' | 'defaultLevel' | 'webhookUrl' | 'webhookSecret'>> & { limits?: Partial<Limits> },
  ): SimClient {
    const client = this.clients.get(clientId);
    if (!client) throw new Error(`no client ${clientId}`);
    Object.assign(client, { ...patch, limits: { ...client.limits, ...patch.limits } });
    return client;
  }

  newApplicantId(): string {
    return randomBytes(12).toString('hex');
  }

  addApplicant(a: Omit<SimApplicant, 'id' | 'createdAt' | 'importedWith'> & { importedWith?: string | null }): SimApplicant {
    const applicant: SimApplicant = { id: this.newApplicantId(), createdAt: this.now(), importedWith: null, ...a };
    this.applicants.set(applicant.id, applicant);
    return applicant;
  }

  addScenarioApplicant(clientId: string, scenario: Scenario, externalUserId: string = randomUUID(), n = 0): SimApplicant {
    const client = this.clients.get(clientId);
    if (!client) throw new Error(`no client ${clientId}`);
    const { info, review } = scenarioApplicant(scenario, this.now(), n);
    return this.addApplicant({ clientId, externalUserId, levelName: client.defaultLevel, info, fixedInfo: {}, review });
  }

  findByExternalUserId(clientId: string, externalUserId: string): SimApplicant | undefined {
    for (const a of this.applicants.values()) if (a.clientId === clientId && a.externalUserId === externalUserId) return a;
    return undefined;
  }

  mintShareToken(applicantId: string, donorClientId: string, forClientId: string, ttlInSecs: number): ShareToken {
    const jti = `_act-${randomUUID()}`;
    const body = Buffer.from(JSON.stringify({ jti, url: 'provider-sim' })).toString('base64url');
    const token: ShareToken = {
      token: `_act-jwt-${Buffer.from('{"alg":"none"}').toString('base64url')}.${body}.`,
      jti,
      applicantId,
      donorClientId,
      forClientId,
      createdAt: this.now(),
      ttlInSecs,
      usedAt: null,
    };
    this.shareTokens.set(token.token, token);
    return token;
  }

  /** Sliding five-second windows per client and method class; returns ms to wait, or 0 when allowed. */
  takeRate(client: SimClient, method: string): number {
    const cls = method === 'GET' ? 'get' : 'post';
    const limit = cls === 'get' ? client.limits.getPer5s : client.limits.postPer5s;
    const key = `${client.clientId}:${cls}`;
    const now = Date.now();
    const window = (this.windows.get(key) ?? []).filter((t) => t > now - 5000);
    if (window.length >= limit) {
      this.windows.set(key, window);
      return window[0]! + 5000 - now;
    }
    window.push(now);
    this.windows.set(key, window);
    return 0;
  }

  importStats(token: string): ImportStats {
    return (this.stats.imports[token] ??= { attempts: 0, succeeded: 0, applicantId: null });
  }
}
