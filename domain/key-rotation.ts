// When signing keys change (interface 5.5: keys have validity windows, and a new pair follows the
// old one). A ring is a list of generations; a generation is the keys sharing one window (the
// webhook ring's pairs, one key in the Ed25519 rings). A rotation adds the next generation, valid
// from OVERLAP_DAYS before the ring's last key ends (or now, when that is later) for
// GENERATION_DAYS: published from the moment it is added, signing once the generation before it
// ends, so a receiver that fetched the keys any time after the rotation verifies across the switch.
// Processes read their rings at start: the new keys are published (GET /webhook-keys) and signed
// with by processes started after the rotation.
import type { SigningKey } from './webhook-signature.ts';

const DAY_MS = 86_400_000;
/** How long two generations are both valid. */
export const OVERLAP_DAYS = 30;
/** A generation's life: a year, plus the overlap with the next. */
export const GENERATION_DAYS = 365 + OVERLAP_DAYS;
/** /health warns (degraded) this long before the ring's last key ends. */
export const WARN_DAYS = 30;
/** The sandbox renews its own rings this long before they end (before the warning). */
export const RENEW_DAYS = 60;

export type Window = { validFrom: string; validUntil: string };

/** When the ring's last key stops being valid. */
export function ringEndsAt(ring: readonly SigningKey[]): Date {
  return new Date(Math.max(...ring.map((k) => Date.parse(k.validUntil))));
}

/** The window of the generation a rotation at `now` adds. */
export function nextWindow(ring: readonly SigningKey[], now: Date): Window {
  const from = Math.max(now.getTime(), ringEndsAt(ring).getTime() - OVERLAP_DAYS * DAY_MS);
  return { validFrom: new Date(from).toISOString(), validUntil: new Date(from + GENERATION_DAYS * DAY_MS).toISOString() };
}

/**
 * Until when, from `now`, some key of the ring is valid without a gap: the first instant no key
 * covers (a ring whose next generation starts after the current one ends has a gap there).
 */
export function coveredUntil(ring: readonly Pick<SigningKey, 'validFrom' | 'validUntil'>[], now: Date): Date {
  let t = now.getTime();
  for (;;) {
    const covering = ring.filter((k) => Date.parse(k.validFrom) <= t && t < Date.parse(k.validUntil));
    if (covering.length === 0) return new Date(t);
    t = Math.max(...covering.map((k) => Date.parse(k.validUntil)));
  }
}

/** Whether the ring stops covering within `days` of `now` (a gap or its end), or already has. */
export function endsWithin(ring: readonly SigningKey[], now: Date, days: number): boolean {
  return coveredUntil(ring, now).getTime() - now.getTime() <= days * DAY_MS;
}
