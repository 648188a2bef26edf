// Pagination rules shared by every list endpoint: `page` from 1, `limit` 1..100 (default 20).
import { z } from 'zod';

export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 20;

const intParam = (name: string) =>
  z
    .string()
    .regex(/^\d{1,9}$/, `${name} must be a positive whole number`)
    .transform(Number);

// Validated as digit strings (a query string has no numbers); documented as the integers they are.
const pageParam = intParam('page').pipe(z.number().min(1, 'page must be 1 or more'));
const limitParam = intParam('limit').pipe(z.number().min(1, 'limit must be at least 1').max(MAX_LIMIT, `limit must be at most ${MAX_LIMIT}`));

/** `limit`, as every list takes it (1..MAX_LIMIT, default DEFAULT_LIMIT); also the events feed's. */
export const limitQueryParam = limitParam.default(DEFAULT_LIMIT).meta({ type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT });

export const paginationQuery = z
  .object({
    page: pageParam.default(1).meta({ type: 'integer', minimum: 1, maximum: 999_999_999, default: 1 }),
    limit: limitQueryParam,
  })
  .strict();

export type Page = { page: number; limit: number };

export type PageMeta = { page: number; limit: number; totalItems: number; totalPages: number };

export function pageMeta({ page, limit }: Page, totalItems: number): PageMeta {
  return { page, limit, totalItems, totalPages: Math.ceil(totalItems / limit) };
}

export function pageMetaSchema() {
  return z.object({
    page: z.number().int(),
    limit: z.number().int(),
    totalItems: z.number().int(),
    totalPages: z.number().int(),
  });
}

export function offsetOf({ page, limit }: Page): number {
  return (page - 1) * limit;
}

/**
 * Interface v1.0.2's "expanded pagination" on reads that answered everything in v1.0.1 (a batch's
 * summary.errors, the document manifest): `page` and `limit` as on the list endpoints, both
 * optional — with neither, the read answers as v1.0.1 did (everything, no meta); with either, a
 * page (the other at its default) and the list endpoints' `meta`.
 */
export const optionalPaginationQuery = z
  .object({
    page: pageParam
      .optional()
      .meta({ type: 'integer', minimum: 1, maximum: 999_999_999, description: 'Without page and limit: the whole list (as in v1.0.1)' }),
    limit: limitParam.optional().meta({ type: 'integer', minimum: 1, maximum: MAX_LIMIT, description: `Default ${DEFAULT_LIMIT} when page is given` }),
  })
  .strict();

/** The page asked for, or null when neither `page` nor `limit` was given (the whole list). */
export function requestedPage(q: { page?: number | undefined; limit?: number | undefined } | undefined): Page | null {
  if (!q || (q.page === undefined && q.limit === undefined)) return null;
  return { page: q.page ?? 1, limit: q.limit ?? DEFAULT_LIMIT };
}
