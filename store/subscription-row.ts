// A subscription as stored, and how a row of notification_subscriptions reads (one shape for the
// store's subscription files).
import type { SubscriptionView } from '../domain/webhooks.ts';
import { iso, type Row } from './db.ts';

/** A stored subscription (the API presents it in the shape of interface 2.6). */
export type Subscription = {
  id: string;
  channel: SubscriptionView['channel'];
  types: string[];
  url: string;
  createdAt: string;
  updatedAt: string;
  /** Its health (store/subscription-health.ts): the start of its current run of failed attempts, and when it was disabled. */
  failingSince: string | null;
  disabledAt: string | null;
};

export const toSubscription = (r: Row): Subscription => ({
  id: String(r.id),
  channel: String(r.channel) as Subscription['channel'],
  types: r.types as string[],
  url: String(r.url),
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
  failingSince: r.failing_since == null ? null : iso(r.failing_since),
  disabledAt: r.disabled_at == null ? null : iso(r.disabled_at),
});
