// Writing CSV (RFC 4180): a field is quoted when it holds a comma, quote, line break or edge space.
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) || /^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export const csvLine = (fields: string[]) => `${fields.map(csvField).join(',')}\n`;
