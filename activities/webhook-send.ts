// One signed webhook POST (interface 5.4, 6.3): the event's exact bytes, signed with the key valid at
// send time, no redirects followed, a 2xx within DELIVERY_TIMEOUT_MS or it failed. Used by the
// dispatcher (first attempts, redeliveries) and by retry workflows alike. Never throws for an HTTP
// or network failure: the outcome is a value that the caller records.
//
// The receiver is not trusted: its answer's status is all we need (interface 6.3: "body ignored").
// Nothing is decompressed, at most ANSWER_BODY_LIMIT bytes of the body are read (and thrown away,
// so a short answer keeps its keep-alive connection), and a body still arriving ANSWER_GRACE_MS after
// the status closes the connection. A gzip bomb, gigabytes or a trickle each cost one bounded request.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIP } from 'node:net';
import got from 'got';
import { checkWebhookUrl, isNonPublicAddress } from '../domain/webhook-url.ts';
import { signingKeyAt, signWebhookBodyOffLoop, validKeysAt, type SigningKey } from '../domain/webhook-signature.ts';
import { standardWebhookSignatureOffLoop, type Ed25519Key } from '../domain/standard-webhooks.ts';
import { createSecretBox, type SealingKey } from '../domain/secret-box.ts';
import { hmacSignatures } from '../domain/subscription-secret.ts';
import { afterAttempt, DELIVERY_TIMEOUT_MS, isGone, retryAfterOf } from '../domain/webhooks.ts';
import type { AttemptRecord, DeliveryTarget } from '../store/deliveries.ts';

/** Bytes of a receiver's answer read at most (then the connection is closed). */
export const ANSWER_BODY_LIMIT = 16 * 1024;
/** How long the rest of an answer's body may take once its status has arrived. */
export const ANSWER_GRACE_MS = 1000;

export type SendResult = {
  url: string;
  startedAt: Date;
  keyId: string | null;
  httpStatus: number | null;
  latencyMs: number | null;
  /** null when delivered; otherwise a short reason fit for the client's delivery log (no addresses, no raw error text) */
  error: string | null;
  /** the raw cause, for our own logs only */
  detail?: string;
  /** the wait the receiver asked for with Retry-After on a 429 or 503 (domain/webhooks.ts retryAfterOf) */
  retryAfterMs?: number;
  /** why the subscription's `v1,` signatures are missing (its sealed secret did not open), for our own logs */
  secretError?: string;
};

/** What one attempt sends: the event's bytes, where, and the subscription's sealed secrets (each signs a `v1,`). */
export type SendTarget = { eventId: string; body: string; url: string; subscriptionId?: string; sealedSecrets?: readonly string[] };

/** dns.lookup that refuses to hand back a non-public address: the check is on what is dialled. */
export function publicOnlyLookup(
  hostname: string,
  options: object,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, []);
    const bad = addresses.find((a) => isNonPublicAddress(a.address));
    if (bad) {
      const e: NodeJS.ErrnoException = new Error(`${hostname} resolves to a non-public address (${bad.address})`);
      e.code = 'ENONPUBLIC';
      return callback(e, []);
    }
    if ((options as { all?: boolean }).all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

/** What a network failure is called in a client's delivery log: by its code, never by its message (which names addresses). */
const NETWORK_ERRORS: Record<string, string> = {
  ENONPUBLIC: 'the host resolves to a non-public address, so it was not dialled',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved (temporary DNS failure)',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  EPIPE: 'connection closed by the receiver while sending',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the TLS certificate does not name this host',
  CERT_HAS_EXPIRED: 'the TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'the TLS certificate chain is not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the TLS certificate chain is not trusted',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the TLS certificate chain is not trusted',
};

export function deliveryErrorText(code: string | undefined): string {
  if (code === 'ETIMEDOUT') return `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`;
  const known = code ? NETWORK_ERRORS[code] : undefined;
  return known ? `${known} (${code})` : `request failed (${code ?? 'unknown error'})`;
}

type Exchange = { status: number; retryAfter?: string } | { code: string | undefined; detail: string };

/**
 * The rings a delivery is signed with: `vouch-signature` (RSA) and `webhook-signature` (Standard
 * Webhooks: Ed25519 `v1a`), and the payload codec ring that opens each subscription's sealed secret
 * (its `v1` HMAC).
 */
export type WebhookKeys = { signature: readonly SigningKey[]; standard: readonly Ed25519Key[]; sealing: readonly SealingKey[] };

/** Signatures being made or made, by what they sign: concurrent sends share one signing; a failed one is forgotten; bounded. */
function signatureCache(limit = 10_000) {
  const made = new Map<string, Promise<string>>();
  return (key: string, make: () => Promise<string>): Promise<string> => {
    let signature = made.get(key);
    if (!signature) {
      signature = make();
      signature.catch(() => made.delete(key));
      if (made.size >= limit) made.delete(made.keys().next().value!);
      made.set(key, signature);
    }
    return signature;
  };
}

/** How long an idle kept-alive connection to a receiver stays open (shorter when the receiver announces less). */
const IDLE_CONNECTION_MS = 30_000;
/** The errors of a request sent on a connection its receiver had just closed. */
const CLOSED_AS_REUSED = new Set(['ECONNRESET', 'EPIPE']);

export function createWebhookSender(deps: { keys: WebhookKeys; allowInsecureUrls: boolean }) {
  // Keep-alive connections: a receiver that takes many deliveries is not paying a TCP (and TLS)
  // handshake for each. An idle one is closed after IDLE_CONNECTION_MS, or a second before the
  // receiver said it would close it (its `Keep-Alive: timeout=N`: Node honours the hint only when the
  // agent has a timeout of its own), so we rarely send on a connection the receiver is closing.
  const pooled = { keepAlive: true, maxSockets: 256, timeout: IDLE_CONNECTION_MS };
  const agent = { http: new HttpAgent(pooled), https: new HttpsAgent(pooled) };
  const privateKeys = new Map<string, KeyObject>();
  const privateKeyOf = (key: SigningKey) => {
    let privateKey = privateKeys.get(key.keyId);
    if (!privateKey) privateKeys.set(key.keyId, (privateKey = createPrivateKey(key.privateKeyPem)));
    return privateKey;
  };
  // Signatures are made off the event loop (libuv's thread pool), and each once: every subscription
  // of an event gets the same bytes, so one RSA signature per (event, key) serves them all; the
  // Standard Webhooks one covers the attempt's timestamp (whole seconds), so the deliveries of one
  // event sent within one second share it too.
  const signed = signatureCache();
  // A subscription's secrets, opened once per (subscription, sealed value): the key names the
  // subscription, so a sealed value copied onto another subscription's row is opened — and refused —
  // for that one (bounded; a rotation seals a new value).
  const box = createSecretBox(deps.keys.sealing);
  const opened = new Map<string, string>();
  const secretsOf = (target: SendTarget): { secrets: string[]; error?: string } => {
    const secrets: string[] = [];
    for (const sealed of target.sealedSecrets ?? []) {
      const key = `${target.subscriptionId}\u0000${sealed}`;
      let secret = opened.get(key);
      if (secret === undefined) {
        try {
          secret = box.open(target.subscriptionId!, sealed);
        } catch (err) {
          return { secrets, error: (err as Error).message };
        }
        if (opened.size >= 10_000) opened.delete(opened.keys().next().value!);
        opened.set(key, secret);
      }
      secrets.push(secret);
    }
    return { secrets };
  };
  const signatureOf = (eventId: string, body: string, key: SigningKey) =>
    signed(`rsa/${key.keyId}/${eventId}`, () => signWebhookBodyOffLoop(body, privateKeyOf(key)));
  const standardSignatureOf = (eventId: string, timestamp: string, body: string, at: Date) => {
    const keys = validKeysAt(deps.keys.standard, at);
    return signed(`ed25519/${keys.map((k) => k.keyId).join(',')}/${eventId}/${timestamp}`, () =>
      standardWebhookSignatureOffLoop(keys, { id: eventId, timestamp, body }, at),
    );
  };

  /**
   * Posts and reads only the answer's status; the body is drained up to a limit, never kept. A
   * connection reset before any answer, on a kept-alive connection the receiver closed as we reused
   * it, is sent once more at once on a new connection: the receiver never read it (Node's own
   * advice for `reusedSocket`). A reset on a new connection is the receiver's answer.
   */
  const exchange = async (url: URL, headers: Record<string, string>, body: string): Promise<Exchange> => {
    const first = await exchangeOnce(url, headers, body);
    return 'code' in first && first.reusedConnection && CLOSED_AS_REUSED.has(first.code ?? '') ? exchangeOnce(url, headers, body) : first;
  };

  const exchangeOnce = (url: URL, headers: Record<string, string>, body: string): Promise<Exchange & { reusedConnection?: boolean }> =>
    new Promise((resolve) => {
      let reusedConnection = false;
      let status: number | null = null;
      let retryAfter: string | undefined;
      let read = 0;
      let grace: NodeJS.Timeout | undefined;
      const finish = (outcome: Exchange & { reusedConnection?: boolean }, close: boolean) => {
        clearTimeout(grace);
        if (close) request.destroy();
        resolve(outcome);
      };
      const request = got.stream.post(url, {
        body,
        headers,
        agent,
        timeout: { request: DELIVERY_TIMEOUT_MS },
        followRedirect: false,
        throwHttpErrors: false,
        decompress: false,
        retry: { limit: 0 },
        ...(deps.allowInsecureUrls || isIP(url.hostname.replace(/^\[|\]$/g, '')) ? {} : { dnsLookup: publicOnlyLookup as never }),
      });
      request.on('response', (response: { statusCode: number; headers: Record<string, string | string[] | undefined> }) => {
        status = response.statusCode;
        const header = response.headers['retry-after'];
        retryAfter = typeof header === 'string' ? header.slice(0, 64) : undefined;
        grace = setTimeout(() => finish({ status: status!, retryAfter }, true), ANSWER_GRACE_MS);
      });
      request.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > ANSWER_BODY_LIMIT) finish({ status: status!, retryAfter }, true);
      });
      request.on('end', () => finish({ status: status!, retryAfter }, false));
      request.on('error', (err: NodeJS.ErrnoException) => {
        // an error after the status (the body broke off) does not change the answer we got
        if (status !== null) finish({ status, retryAfter }, true);
        else finish({ code: err.code, detail: err.message.slice(0, 300), reusedConnection }, true);
      });
      request.on('request', (req: { reusedSocket?: boolean }) => (reusedConnection = req.reusedSocket === true));
    });

  return async function send(target: SendTarget): Promise<SendResult> {
    const startedAt = new Date();
    const verdict = checkWebhookUrl(target.url, { allowInsecure: deps.allowInsecureUrls });
    if (!verdict.ok) return { url: target.url, startedAt, keyId: null, httpStatus: null, latencyMs: null, error: verdict.reason };
    const key = signingKeyAt(deps.keys.signature, startedAt);
    const timestamp = String(Math.floor(startedAt.getTime() / 1000));
    const started = performance.now();
    const [signature, standardSignature] = await Promise.all([
      signatureOf(target.eventId, target.body, key),
      standardSignatureOf(target.eventId, timestamp, target.body, startedAt),
    ]);
    // the subscription's own `v1,` HMACs first (a few microseconds each), then the environment's `v1a,`
    const { secrets, error: secretError } = secretsOf(target);
    const hmacs = secrets.length ? `${hmacSignatures(secrets, { id: target.eventId, timestamp, body: target.body })} ` : '';
    const outcome = await exchange(
      verdict.url,
      {
        'content-type': 'application/json',
        'user-agent': 'Vouch-Webhooks/1.0',
        'vouch-signature': signature,
        'vouch-signature-key-id': key.keyId,
        'webhook-id': target.eventId,
        'webhook-timestamp': timestamp,
        'webhook-signature': hmacs + standardSignature,
      },
      target.body,
    );
    const latencyMs = Math.round(performance.now() - started);
    const result = { url: target.url, startedAt, keyId: key.keyId, latencyMs, ...(secretError ? { secretError } : {}) };
    if ('code' in outcome) return { ...result, httpStatus: null, error: deliveryErrorText(outcome.code), detail: outcome.detail };
    const s = outcome.status;
    const error = s >= 200 && s < 300 ? null : s >= 300 && s < 400 ? `redirect (${s}) not followed` : `HTTP ${s}`;
    const retryAfterMs = retryAfterOf(s, outcome.retryAfter, Date.now());
    return { ...result, httpStatus: s, error, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  };
}

export type WebhookSender = ReturnType<typeof createWebhookSender>;

/**
 * What an attempt at `target` that ended in `result` records, and what follows it: the retry
 * schedule — or the wait the receiver asked for with Retry-After (429, 503), in place of the
 * schedule's — or, for a failed early attempt (a probe: its subscription answered again, or was
 * enabled), the slot it was waiting for, its place in the schedule unspent. A 410 marks the
 * subscription gone (store/subscription-health.ts disables it in the same transaction).
 */
export function attemptRecord(target: DeliveryTarget, result: SendResult, random = Math.random(), now = Date.now()): AttemptRecord {
  const succeeded = result.error === null;
  const probe = !succeeded && target.resumedSlot !== null;
  return {
    deliveryId: target.deliveryId,
    subscriptionId: target.subscriptionId,
    run: target.run,
    probe,
    attempt: target.attempts + 1,
    url: result.url,
    keyId: result.keyId,
    startedAt: result.startedAt,
    latencyMs: result.latencyMs,
    httpStatus: result.httpStatus,
    error: result.error,
    succeeded,
    gone: isGone(result.httpStatus),
    next: probe
      ? { status: 'pending', delayMs: Math.max(result.retryAfterMs ?? 0, Date.parse(target.resumedSlot!) - now) }
      : afterAttempt(target.runAttempts + 1, succeeded, random, result.retryAfterMs),
  };
}
