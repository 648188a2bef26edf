// Writing CSV (RFC 4180): a field is quoted when it holds a comma, quote, line break or edge space.
//
// Files we write are opened in spreadsheets, where a cell that starts with = + - @ (or a tab or
// carriage return) is read as a formula: one in a failed-rows file could send the share token in
// the next cell to a server of the attacker's choosing. Such a field is written with a leading
// apostrophe, the spreadsheets' mark for "text" (OWASP's CSV injection advice). Files we read (the
// batch upload, kyc-share-token's input) drop that apostrophe again, so a file we wrote can be
// fixed and uploaded as it is.
const FORMULA_START = /^[=+\-@\t\r]/;

/** The field with a leading apostrophe when a spreadsheet would take it for a formula. */
export const neutralizedCell = (value: string) => (FORMULA_START.test(value) ? `'${value}` : value);

/** A cell as we wrote it back to its value: the apostrophe before a formula character removed. */
export const restoredCell = (value: string) => (value.startsWith("'") && FORMULA_START.test(value.slice(1)) ? value.slice(1) : value);

export function csvField(raw: string): string {
  const value = neutralizedCell(raw);
  return /[",\r\n]/.test(value) || /^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export const csvLine = (fields: string[]) => `${fields.map(csvField).join(',')}\n`;
