// Field rules shared by the batch CSV, the sync import and the entity requirements.
import type { ImportErrorCategory } from './import-errors.ts';

/** The card processor's 9-digit public token (not the 16-digit tokenised PAN). */
export const CARD_PROCESSOR_TOKEN = /^\d{9}$/;
export const CARD_PROCESSOR_TOKEN_RULE = 'must be exactly 9 digits (the public token, not a card number)';

/** A card processor token another entity of the business already holds: the one category it is refused with. */
export type CardProcessorTokenTaken = { readonly category: Extract<ImportErrorCategory, 'CARD_PROCESSOR_TOKEN_INVALID'>; readonly holder: string };

/**
 * A card processor token belongs to one entity of a business. Decided from the entity the store
 * reports holding the token (null: none): taken when that is another entity than the one it is for.
 * Checked before a token is assigned — a shared record (batch row, sync import), a universal KYC
 * submission and its decision — each telling the category as clients already see it there
 * (CARD_PROCESSOR_TOKEN_INVALID; 409 syncCardProcessorTokenTaken; reject label CARD_PROCESSOR_TOKEN_IN_USE);
 * the unique index on entities enforces it under a race.
 */
export function cardProcessorTokenTaken(entityId: string, holder: string | null): CardProcessorTokenTaken | null {
  return holder !== null && holder !== entityId ? { category: 'CARD_PROCESSOR_TOKEN_INVALID', holder } : null;
}

export const MAX_SHARE_TOKEN = 2048;

/**
 * Text fields (externalId, shareToken) carry no control characters: PostgreSQL text cannot hold NUL,
 * and none belongs in them. One regex: validation tests it, and zod documents it as the pattern.
 */
export const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f]*$/;
export const CONTROL_CHARACTER_RULE = 'must not contain control characters';
