// Webhook delivery: one signed HTTP POST per attempt, logged. The workflow owns the retry schedule;
// an attempt's outcome is a value, not a thrown error (only infrastructure failures throw).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { Client } from '@temporalio/client';
import got, { RequestError } from 'got';
import type { Logger } from 'pino';
import { checkWebhookUrl, isNonPublicAddress } from '../domain/webhook-url.ts';
import { signingKeyAt, signWebhookBody, type SigningKey } from '../domain/webhook-signature.ts';
import { DELIVERY_TIMEOUT_MS } from '../domain/webhooks.ts';
import { startOnce } from '../runtime/temporal.ts';
import type { Db } from '../store/db.ts';
import { deliveryTarget, dispatchEvent, recordAttempt, setDeliveryStatus, undispatchedEvents } from '../store/webhooks.ts';
import { webhookWorkflowId, type WebhookDeliveryInput } from '../workflows/definitions.ts';

export type WebhookDeps = {
  db: Db;
  log: Logger;
  temporal: Client;
  keyRing: readonly SigningKey[];
  webhookTaskQueue: string;
  allowInsecureUrls: boolean;
};

export type AttemptOutcome = { outcome: 'delivered' | 'failed' | 'canceled'; httpStatus?: number; error?: string };

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

export function createWebhookActivities(deps: WebhookDeps) {
  const { db } = deps;

  async function startDeliveries(eventId: string) {
    for (const d of await dispatchEvent(db, eventId)) {
      if (d.status !== 'pending') continue;
      const input: WebhookDeliveryInput = { deliveryId: d.deliveryId };
      await startOnce(deps.temporal, 'webhookDeliveryWorkflow', { taskQueue: deps.webhookTaskQueue, workflowId: webhookWorkflowId(d.deliveryId, d.run), args: [input] });
    }
  }

  return {
    /** Fans an event out to its business's matching subscriptions, one delivery workflow each. Idempotent. */
    dispatchEvent: startDeliveries,

    /** Housekeeping: events whose dispatch was interrupted (a crash between recording and dispatching). */
    async dispatchStragglers(): Promise<number> {
      const ids = await undispatchedEvents(db, 60_000);
      for (const id of ids) await startDeliveries(id);
      return ids.length;
    },

    async deliverWebhook(deliveryId: string, attempt: number): Promise<AttemptOutcome> {
      const target = await deliveryTarget(db, deliveryId);
      if (!target || target.status === 'canceled') return { outcome: 'canceled' };
      if (target.status === 'delivered') return { outcome: 'delivered' };
      if (target.url === null) {
        await setDeliveryStatus(db, deliveryId, 'canceled'); // the subscription was deleted
        return { outcome: 'canceled' };
      }
      const startedAt = new Date();
      const log = (fields: { httpStatus: number | null; error: string | null; succeeded: boolean; keyId: string | null; latencyMs: number | null }) =>
        recordAttempt(db, { deliveryId, attempt, url: target.url!, startedAt, ...fields });
      const verdict = checkWebhookUrl(target.url, { allowInsecure: deps.allowInsecureUrls });
      if (!verdict.ok) {
        await log({ httpStatus: null, error: verdict.reason, succeeded: false, keyId: null, latencyMs: null });
        return { outcome: 'failed', error: verdict.reason };
      }
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
            'vouch-signature': signWebhookBody(target.body, key.privateKeyPem),
            'vouch-signature-key-id': key.keyId,
            'webhook-id': target.eventId,
            'webhook-timestamp': String(Math.floor(startedAt.getTime() / 1000)),
          },
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
      const latencyMs = Math.round(performance.now() - started);
      await log({ httpStatus, error, succeeded: error === null, keyId: key.keyId, latencyMs });
      return error === null ? { outcome: 'delivered', httpStatus: httpStatus! } : { outcome: 'failed', ...(httpStatus ? { httpStatus } : {}), error };
    },

    async giveUpDelivery(deliveryId: string): Promise<void> {
      await setDeliveryStatus(db, deliveryId, 'failed');
    },
  };
}
