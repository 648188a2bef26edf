// Calendar dates (YYYY-MM-DD) and ISO 3166-1 alpha-3 country codes, as every verification path
// checks them. Countries come from a maintained list (i18n-iso-countries), not a table of ours.
import countries from 'i18n-iso-countries';

const ALPHA3 = new Set(Object.keys(countries.getAlpha3Codes()));

/** An ISO 3166-1 alpha-3 code in upper case (GBR, DEU, …). */
export function isCountryAlpha3(code: string): boolean {
  return ALPHA3.has(code);
}

/** A real calendar day written YYYY-MM-DD (2025-02-30 is not). */
export function isCalendarDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00.000Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** The UTC day of `at`, YYYY-MM-DD. */
export function dayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The day `years` whole years after `day` (negative: before); 29 Feb becomes 28 Feb in other years. */
export function addYears(day: string, years: number): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const target = new Date(Date.UTC(y + years, m - 1, d));
  if (target.getUTCMonth() !== m - 1) target.setUTCDate(0);
  return dayOf(target);
}
