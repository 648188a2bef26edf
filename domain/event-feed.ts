// The events feed (issue 38, item 6): a business's events oldest first, by `sequence` — a number per
// business that only grows, in the order events became visible, and carried in every event's body —
// so a receiver that was down reconciles from the last sequence it handled (as Stripe's and Svix's
// polling endpoints allow). Paged by cursor: `after` is the last sequence read.
import { z } from 'zod';
import { limitQueryParam } from './pagination.ts';

export const eventFeedQuery = z
  .object({
    after: z
      .string()
      .regex(/^\d{1,15}$/, 'after must be a sequence number (a whole number, 0 or more, at most 15 digits)')
      .transform(Number)
      .default(0)
      .meta({
        type: 'integer',
        minimum: 0,
        default: 0,
        description: 'The last sequence you have read (meta.lastSequence of the previous page); 0 from the start',
      }),
    limit: limitQueryParam,
  })
  .strict();
export type EventFeedQuery = z.infer<typeof eventFeedQuery>;

/** How an event's deliveries stand, one count per delivery status. */
export const deliverySummarySchema = z.object({
  total: z.number().int(),
  delivered: z.number().int(),
  pending: z.number().int(),
  failed: z.number().int(),
  canceled: z.number().int(),
});

export const feedEventSchema = z.object({
  eventId: z.uuid(),
  sequence: z.number().int(),
  eventName: z.string(),
  eventType: z.string(),
  entityId: z.string().nullable(),
  createdAt: z.string(),
  payload: z.record(z.string(), z.unknown()).meta({ description: 'The body every delivery of the event carries (parsed)' }),
  deliveries: deliverySummarySchema,
});
export type FeedEvent = z.input<typeof feedEventSchema>;

export const eventFeedSchema = z.object({
  items: z.array(feedEventSchema),
  meta: z.object({
    limit: z.number().int(),
    after: z.number().int(),
    lastSequence: z.number().int().meta({ description: 'Pass it as `after` for the next page (the same `after` when this page is empty)' }),
    hasMore: z.boolean(),
  }),
});
export type EventFeed = z.input<typeof eventFeedSchema>;
