// A payment card number (PAN) must never be kept or shown whole (PCI DSS 3.3/3.4): one sent by
// mistake — in the card-token column of a batch file, or inside a record we echo back — is masked to
// its first six and last four digits before anything stores or echoes it (issue 38, item 12).

/** 13 to 19 digits, spaces or dashes allowed between them: how a card number is written. */
const CARD_NUMBER = /^\d(?:[ -]?\d){12,18}$/;
/** A run of 13 to 19 digits (with spaces or dashes between) inside other text. */
const CARD_NUMBER_RUN = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d])/g;

/** The number masked: first six and last four digits kept, the others `*` (separators dropped). */
export function maskCardNumber(value: string): string {
  const digits = value.replace(/\D/g, '');
  return `${digits.slice(0, 6)}${'*'.repeat(digits.length - 10)}${digits.slice(-4)}`;
}

/** Whether the digits pass the Luhn check every card number passes. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * A card-token cell as it may be kept: unchanged, unless it is written as a card number (13 to 19
 * digits), which is masked whatever its check digit — a field meant for a 9-digit token holds no
 * such number legitimately.
 */
export function cardTokenAsKept(value: string): string {
  return CARD_NUMBER.test(value.trim()) ? maskCardNumber(value) : value;
}

/** Free text (an echoed record) with every card number in it masked: runs of 13 to 19 digits that pass the Luhn check. */
export function withoutCardNumbers(text: string): string {
  return text.replace(CARD_NUMBER_RUN, (run) => {
    const digits = run.replace(/\D/g, '');
    return passesLuhn(digits) ? maskCardNumber(digits) : run;
  });
}
