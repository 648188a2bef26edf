// Field rules shared by the batch CSV, the sync import and the entity requirements.

/** The card processor's 9-digit public token (not the 16-digit tokenised PAN). */
export const CARD_PROCESSOR_TOKEN = /^\d{9}$/;
export const CARD_PROCESSOR_TOKEN_RULE = 'must be exactly 9 digits (the public token, not a card number)';
export const MAX_SHARE_TOKEN = 2048;

/**
 * Text fields (externalId, shareToken) carry no control characters: PostgreSQL text cannot hold NUL,
 * and none belongs in them. One regex: validation tests it, and zod documents it as the pattern.
 */
export const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f]*$/;
export const CONTROL_CHARACTER_RULE = 'must not contain control characters';
