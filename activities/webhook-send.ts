// One signed webhook POST (interface 5.4, 6.3): the event's exact bytes, signed with the key valid at
// send time, no redirects followed, a 2xx within DELIVERY_TIMEOUT_MS or it failed. Used by the
// dispatcher (first attempts, redeliveries) and by retry workflows alike. Never throws for an HTTP
// or network failure: the outcome is a value that the caller records.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIP } from 'node:net';
import got, { RequestError } from 'got';
import { checkWebhookUrl, isNonPublicAddress } from '../domain/webhook-url.ts';
import { signingKeyAt, signWebhookBody, type SigningKey } from '../domain/webhook-signature.ts';
import { afterAttempt, DELIVERY_TIMEOUT_MS } from '../domain/webhooks.ts';
import type { AttemptRecord, DeliveryTarget } from '../store/webhooks.ts';

export type SendResult = {
  url: string;
  startedAt: Date;
  keyId: string | null;
  httpStatus: number | null;
  latencyMs: number | null;
  /** null when delivered */
  error: string | null;
};

/** dns.lookup that refuses to hand back a non-public address: the check is on what is dialled. */
export function publicOnlyLookup(hostname: string, options: object, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) {
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

export function createWebhookSender(deps: { keyRing: readonly SigningKey[]; allowInsecureUrls: boolean }) {
  // Keep-alive connections: a receiver that takes many deliveries is not paying a TCP (and TLS)
  // handshake for each.
  const agent = { http: new HttpAgent({ keepAlive: true, maxSockets: 256 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 256 }) };
  const privateKeys = new Map<string, KeyObject>();
  // Every subscription of an event gets the same bytes, so one signature per (event, key) serves them all.
  const signatures = new Map<string, string>();
  const signatureOf = (eventId: string, body: string, key: SigningKey) => {
    const cacheKey = `${key.keyId}/${eventId}`;
    let signature = signatures.get(cacheKey);
    if (!signature) {
      let privateKey = privateKeys.get(key.keyId);
      if (!privateKey) privateKeys.set(key.keyId, (privateKey = createPrivateKey(key.privateKeyPem)));
      signature = signWebhookBody(body, privateKey);
      if (signatures.size >= 10_000) signatures.delete(signatures.keys().next().value!);
      signatures.set(cacheKey, signature);
    }
    return signature;
  };

  return async function send(target: { eventId: string; body: string; url: string }): Promise<SendResult> {
    const startedAt = new Date();
    const verdict = checkWebhookUrl(target.url, { allowInsecure: deps.allowInsecureUrls });
    if (!verdict.ok) return { url: target.url, startedAt, keyId: null, httpStatus: null, latencyMs: null, error: verdict.reason };
    const key = signingKeyAt(deps.keyRing, startedAt);
    const started = performance.now();
    let httpStatus: number | null = null;
    let error: string | null = null;
    try {
      const res = await got.post(verdict.url, {
        body: target.body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Vouch-Webhooks/1.0',
          'vouch-signature': signatureOf(target.eventId, target.body, key),
          'vouch-signature-key-id': key.keyId,
          'webhook-id': target.eventId,
          'webhook-timestamp': String(Math.floor(startedAt.getTime() / 1000)),
        },
        agent,
        timeout: { request: DELIVERY_TIMEOUT_MS },
        followRedirect: false,
        throwHttpErrors: false,
        retry: { limit: 0 },
        responseType: 'text',
        ...(deps.allowInsecureUrls || isIP(verdict.url.hostname.replace(/^\[|\]$/g, '')) ? {} : { dnsLookup: publicOnlyLookup as never }),
      });
      httpStatus = res.statusCode;
      if (res.statusCode < 200 || res.statusCode >= 300) {
        error = res.statusCode >= 300 && res.statusCode < 400 ? `redirect (${res.statusCode}) not followed` : `HTTP ${res.statusCode}`;
      }
    } catch (err) {
      if (!(err instanceof RequestError)) throw err;
      error = err.code === 'ETIMEDOUT' ? `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s` : `${err.code ?? 'request failed'}: ${err.message.slice(0, 200)}`;
    }
    return { url: target.url, startedAt, keyId: key.keyId, httpStatus, latencyMs: Math.round(performance.now() - started), error };
  };
}

export type WebhookSender = ReturnType<typeof createWebhookSender>;

/** What an attempt at `target` that ended in `result` records, and what follows it (the retry schedule). */
export function attemptRecord(target: DeliveryTarget, result: SendResult, random = Math.random()): AttemptRecord {
  return {
    deliveryId: target.deliveryId,
    attempt: target.attempts + 1,
    url: result.url,
    keyId: result.keyId,
    startedAt: result.startedAt,
    latencyMs: result.latencyMs,
    httpStatus: result.httpStatus,
    error: result.error,
    succeeded: result.error === null,
    next: afterAttempt(target.runAttempts + 1, result.error === null, random),
  };
}
