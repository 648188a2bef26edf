// Events for webhook tests: an account_status_change event recorded as the onboarding records one
// (with its deliveries).
import { randomUUID } from 'node:crypto';
import { recordEvent } from '../../store/events.ts';
import type { Writer } from '../../store/in-tx.ts';

export function recordTestEvent(q: Writer, businessId: string, label: string, data: Record<string, unknown> = {}): Promise<string> {
  return recordEvent(q, {
    businessId,
    entityId: null,
    eventName: 'card_issuance_api_access_updated',
    eventType: 'account_status_change',
    payload: (id) => ({ eventName: 'card_issuance_api_access_updated', eventType: 'account_status_change', data: { eventId: id, ...data } }),
    sourceKey: `${label}-${randomUUID()}`,
  });
}
