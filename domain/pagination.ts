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
export const paginationQuery = z
  .object({
    page: intParam('page')
      .pipe(z.number().min(1, 'page starts at 1'))
      .default(1)
      .meta({ type: 'integer', minimum: 1, maximum: 999_999_999, default: 1 }),
    limit: intParam('limit')
      .pipe(z.number().min(1, 'limit must be at least 1').max(MAX_LIMIT, `limit must be at most ${MAX_LIMIT}`))
      .default(DEFAULT_LIMIT)
      .meta({ type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT }),
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
