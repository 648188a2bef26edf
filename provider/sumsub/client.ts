// Sumsub over HTTP with got: every request signed (X-App-Token, X-App-Access-Ts, X-App-Access-Sig),
// one attempt per call (Temporal owns retries), no redirects followed, a timeout on every request,
// and every failure classified (provider/errors.ts).
import { randomBytes } from 'node:crypto';
import type { ClientRequest } from 'node:http';
import got, { RequestError } from 'got';
import { ProviderError } from '../errors.ts';
import { PROVIDER_REQUEST_TIMEOUT_MS, type IdentityProvider, type ImportApplicantInput, type ProviderApplicant } from '../types.ts';
import { toProviderApplicant } from './applicant.ts';
import { classifyHttpError, classifyNetworkError, type SumsubErrorBody } from './classify.ts';
import { signRequest, verifyWebhookDigest } from './signing.ts';
import { observeProviderCall, providerOperation } from '../provider-metrics.ts';
import { sentNotice } from '../send-notice.ts';

export type SumsubConfig = {
  baseUrl: string;
  appToken: string;
  secretKey: string;
  /** Secret of the provider's webhooks to us (x-payload-digest). */
  webhookSecret?: string | undefined;
  timeoutMs?: number;
  /** Use the older POST /resources/applicants/-/import endpoint instead of reusableIdentity/reuse. */
  legacyImport?: boolean;
  /** Clock for X-App-Access-Ts (tests). */
  now?: () => number;
};

export type SumsubClient = IdentityProvider & {
  /** Donor side: mints a share token for one of the caller's applicants. */
  createShareToken(input: { applicantId: string; forClientId: string; ttlInSecs?: number }): Promise<{ token: string; forClientId: string }>;
  /** One signed request; resolves with the parsed JSON or throws a classified ProviderError. */
  call<T = any>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T>;
};

export function createSumsubClient(config: SumsubConfig): SumsubClient {
  const timeout = config.timeoutMs ?? PROVIDER_REQUEST_TIMEOUT_MS;
  const now = config.now ?? Date.now;

  /** One request, counted and timed by operation and outcome (provider/provider-metrics.ts). */
  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const started = performance.now();
    let outcome = 'ok';
    try {
      return await request<T>(method, path, body);
    } catch (err) {
      outcome = err instanceof ProviderError ? err.kind : 'error';
      throw err;
    } finally {
      observeProviderCall(providerOperation(method, path), outcome, (performance.now() - started) / 1000);
    }
  }

  /** A JSON body, or a multipart one (`{ multipart: { name: json } }`, each part a JSON document, as Sumsub's idDoc metadata). */
  async function request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const url = new URL(path, config.baseUrl);
    let payload: string | Buffer = '';
    let contentType: string | undefined;
    if (body !== undefined && typeof body === 'object' && body !== null && 'multipart' in body) {
      const boundary = `----vouch${randomBytes(12).toString('hex')}`;
      const parts = Object.entries((body as { multipart: Record<string, unknown> }).multipart).map(
        ([name, value]) =>
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(value)}\r\n`,
      );
      payload = Buffer.from(`${parts.join('')}--${boundary}--\r\n`, 'utf8');
      contentType = `multipart/form-data; boundary=${boundary}`;
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      contentType = 'application/json';
    }
    const ts = Math.floor(now() / 1000);
    const headers: Record<string, string> = {
      accept: 'application/json',
      'x-app-token': config.appToken,
      'x-app-access-ts': String(ts),
      'x-app-access-sig': signRequest(config.secretKey, ts, method, url.pathname + url.search, payload),
    };
    if (contentType) headers['content-type'] = contentType;
    const sent = sentNotice();
    let res;
    try {
      res = await got(url, {
        method,
        headers,
        body: body === undefined ? undefined : payload,
        throwHttpErrors: false,
        followRedirect: false,
        retry: { limit: 0 },
        timeout: { request: timeout },
        responseType: 'text',
      }).on('request', (req: ClientRequest) => {
        // 'finish': the request's last bytes were handed to the operating system
        if (req.writableFinished) sent();
        else req.once('finish', sent);
      });
    } catch (err) {
      if (err instanceof RequestError || (err as Error).name === 'TimeoutError') throw classifyNetworkError(err);
      throw err;
    }
    let parsed: unknown;
    try {
      parsed = res.body ? JSON.parse(res.body) : {};
    } catch {
      parsed = { description: res.body.slice(0, 200) };
    }
    if (res.statusCode >= 200 && res.statusCode < 300) return parsed as T;
    if (res.statusCode >= 300 && res.statusCode < 400) {
      throw new ProviderError('unavailable', `The identity provider answered with a redirect (${res.statusCode}).`, { status: res.statusCode });
    }
    throw classifyHttpError(res.statusCode, parsed as SumsubErrorBody, res.headers);
  }

  return {
    name: 'sumsub',
    call,
    async importApplicant({ shareToken, levelName, externalUserId }: ImportApplicantInput): Promise<ProviderApplicant> {
      const q = new URLSearchParams({ shareToken });
      if (externalUserId) q.set('externalUserId', externalUserId);
      if (config.legacyImport) return toProviderApplicant(await call('POST', `/resources/applicants/-/import?${q}`));
      if (levelName) q.set('levelName', levelName);
      return toProviderApplicant(await call('POST', `/resources/api/reusableIdentity/reuse?${q}`));
    },
    async getApplicant(applicantId: string) {
      return toProviderApplicant(await call('GET', `/resources/applicants/${encodeURIComponent(applicantId)}/one`));
    },
    async findApplicantByExternalUserId(externalUserId: string) {
      try {
        return toProviderApplicant(await call('GET', `/resources/applicants/-;externalUserId=${encodeURIComponent(externalUserId)}/one`));
      } catch (err) {
        if (err instanceof ProviderError && err.kind === 'not_found') return null;
        throw err;
      }
    },
    async createSdkToken({ userId, levelName, ttlInSecs = 1800 }) {
      const res = await call<{ token: string; userId: string }>('POST', '/resources/accessTokens/sdk', { userId, levelName, ttlInSecs });
      return { token: res.token, userId: res.userId };
    },
    async createApplicant({ externalUserId, levelName, person }) {
      const { address, ...names } = person;
      const fixedInfo: Record<string, unknown> = { ...names, ...(names.nationality ? { country: names.nationality } : {}) };
      if (address) fixedInfo.addresses = [address];
      return toProviderApplicant(await call('POST', `/resources/applicants?${new URLSearchParams({ levelName })}`, { externalUserId, fixedInfo }));
    },
    async addIdDocument(applicantId, d) {
      const metadata = {
        idDocType: d.type,
        country: d.country,
        number: d.number,
        ...(d.issuedDate ? { issuedDate: d.issuedDate } : {}),
        ...(d.validUntil ? { validUntil: d.validUntil } : {}),
      };
      await call('POST', `/resources/applicants/${encodeURIComponent(applicantId)}/info/idDoc`, { multipart: { metadata } });
    },
    async completeSandboxReview(applicantId, result) {
      await call('POST', `/resources/applicants/${encodeURIComponent(applicantId)}/status/testCompleted`, result);
    },
    async createShareToken({ applicantId, forClientId, ttlInSecs = 1200 }) {
      const res = await call<{ token: string; forClientId: string }>('POST', '/resources/accessTokens/shareToken', { applicantId, forClientId, ttlInSecs });
      return { token: res.token, forClientId: res.forClientId };
    },
    verifyWebhook(rawBody, headersIn) {
      if (!config.webhookSecret) return false;
      const header = (name: string) => {
        const v = headersIn[name] ?? headersIn[name.toLowerCase()];
        return Array.isArray(v) ? v[0] : v;
      };
      return verifyWebhookDigest(config.webhookSecret, rawBody, header('x-payload-digest'), header('x-payload-digest-alg'));
    },
  };
}
