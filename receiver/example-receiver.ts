// An example receiver of Vouch webhooks: it verifies `vouch-signature` over the raw body and, given
// the Standard Webhooks keys, `webhook-signature` with its five-minute window (so a captured delivery
// replayed later is refused), answers 200 at once (processing happens after the answer, well inside
// the 5-second window), and processes each event once however often it is delivered (deduplicating
// on data.eventId).
//
//   VOUCH_API_URL=http://127.0.0.1:3000 VOUCH_API_KEY=vk_… PORT=4000 node receiver/example-receiver.ts
//
// Keep the dedup set in a database in production; memory is lost on restart. It reads the public
// keys with the typed API client (client/), generated from the API's OpenAPI document.
import { createServer, type Server } from 'node:http';
import { createVouchClient } from '../client/index.ts';
import { verifyStandardWebhook, verifyWebhook } from './verify-webhook.ts';

/** What every event has; `data.entityId` and `data.status` only where the event type has them (docs/api/webhooks.md, "Event types"). */
export type VouchEvent = {
  eventName: string;
  eventType: string;
  sequence?: number;
  data: { eventId: string; entityId?: string; status?: string; [k: string]: unknown };
};

const MAX_BODY = 1024 * 1024;

export function createWebhookReceiver(options: {
  publicKeys: string[];
  standardKeys?: string[];
  onEvent(event: VouchEvent): void | Promise<void>;
  seenLimit?: number;
}): Server {
  const seen = new Set<string>();
  const remember = (id: string) => {
    seen.add(id);
    if (seen.size > (options.seenLimit ?? 100_000)) seen.delete(seen.values().next().value!);
  };
  return createServer(async (req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY) return void res.writeHead(413).end();
      chunks.push(chunk as Buffer);
    }
    const raw = Buffer.concat(chunks); // verify these bytes, never a re-serialised object
    if (!verifyWebhook(raw, req.headers['vouch-signature'], options.publicKeys)) return void res.writeHead(401).end();
    if (options.standardKeys && !verifyStandardWebhook(raw, req.headers, options.standardKeys).ok) return void res.writeHead(401).end();
    let event: VouchEvent;
    try {
      event = JSON.parse(raw.toString('utf8'));
    } catch {
      return void res.writeHead(400).end();
    }
    res.writeHead(200).end(); // acknowledge first, then process
    if (seen.has(event.data.eventId)) return; // a retry or a redelivery of an event already handled
    remember(event.data.eventId);
    setImmediate(() => void Promise.resolve(options.onEvent(event)).catch((err) => console.error('event handler failed', err)));
  });
}

if (import.meta.main) {
  const api = process.env.VOUCH_API_URL ?? 'http://127.0.0.1:3000';
  const vouch = createVouchClient({ baseUrl: api, apiKey: process.env.VOUCH_API_KEY ?? '' });
  const { data, response } = await vouch.GET('/webhook-keys');
  if (!data) throw new Error(`cannot read the public keys from ${api}/webhook-keys (${response.status}); set VOUCH_API_KEY`);
  const { keys, standardWebhooks } = data;
  const port = Number(process.env.PORT ?? 4000);
  createWebhookReceiver({
    publicKeys: keys.map((k) => k.publicKeyPem),
    standardKeys: standardWebhooks.keys.map((k) => k.publicKey),
    onEvent: (e) => {
      const why = Array.isArray(e.data.rejectLabels)
        ? ` ${e.data.rejectLabels.join(',')} (${String(e.data.reviewRejectType)}): ${String(e.data.moderationComment ?? '')}`
        : '';
      const about = [e.data.status, e.data.entityId && `entity ${e.data.entityId}`].filter(Boolean).join(' ');
      console.log(`${e.eventName}${about ? ` ${about}` : ''} (event ${e.data.eventId}, sequence ${e.sequence ?? '-'})${why}`);
    },
  }).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/ with ${keys.length} public keys`));
}
