// Field rules shared by the batch CSV, the sync import and the entity requirements.

/** The card processor's 9-digit public token (not the 16-digit tokenised PAN). */
export const CARD_PROCESSOR_TOKEN = /^\d{9}$/;
export const CARD_PROCESSOR_TOKEN_RULE = 'must be exactly 9 digits (the public token, not a card number)';
export const MAX_SHARE_TOKEN = 2048;
