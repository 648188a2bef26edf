// The batch upload's CSV rules (interface 2.4 and 8), in one place: encoding, header, row count and
// every per-row rule. Rows are numbered as a spreadsheet shows them: the header is row 1.
import { parse } from 'csv-parse/sync';
import { MAX_EXTERNAL_ID } from './entity.ts';
import { CARD_PROCESSOR_TOKEN, CARD_PROCESSOR_TOKEN_RULE, CONTROL_CHARACTER_RULE, MAX_SHARE_TOKEN, NO_CONTROL_CHARACTERS } from './share-fields.ts';

export const MAX_FILE_BYTES = 10 * 1024 * 1024;
export const MAX_ROWS = 5000;
export const REQUIRED_COLUMNS = ['externalId', 'shareToken'] as const;
export const OPTIONAL_COLUMNS = ['applicantLevel', 'cardProcessorPublicToken'] as const;
const LEVEL_NAME = /^[A-Za-z0-9 _.-]{1,100}$/;
const LISTED_IN_MESSAGE = 20;
const MAX_DETAILS = 500;

export type BatchRow = {
  rowNumber: number;
  externalId: string;
  shareToken: string;
  applicantLevel: string | null;
  cardProcessorPublicToken: string | null;
};

export type RowIssue = { row: number; field: string; message: string };

/** Why an upload is refused; `kind` picks the error code (file too large vs invalid data). */
export class UploadRejected extends Error {
  readonly kind: 'tooLarge' | 'invalid';
  readonly issues: RowIssue[];
  constructor(kind: 'tooLarge' | 'invalid', message: string, issues: RowIssue[] = []) {
    super(message);
    this.kind = kind;
    this.issues = issues;
  }
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } catch {
    throw new UploadRejected('invalid', 'The file is not valid UTF-8 text.');
  }
}

export function parseBatchCsv(bytes: Uint8Array, options: { binSponsored: boolean }): BatchRow[] {
  if (bytes.length > MAX_FILE_BYTES) throw new UploadRejected('tooLarge', `The file is larger than ${MAX_FILE_BYTES / 1024 / 1024} MB.`);
  const text = decodeUtf8(bytes);
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(text, { relax_column_count: true, skip_empty_lines: true, trim: true, info: true }) as unknown as typeof records;
  } catch (err) {
    throw new UploadRejected('invalid', `The file is not valid CSV: ${(err as Error).message}`);
  }
  const header = records[0]?.record;
  if (!header || header.every((h) => h === '')) throw new UploadRejected('invalid', 'The file has no header row.');
  const known = new Set<string>([...REQUIRED_COLUMNS, ...OPTIONAL_COLUMNS]);
  const unknown = header.filter((h) => !known.has(h));
  if (unknown.length) {
    throw new UploadRejected('invalid', `Unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"`).join(', ')}; the columns are ${[...known].join(', ')}.`);
  }
  const duplicated = header.filter((h, i) => header.indexOf(h) !== i);
  if (duplicated.length) throw new UploadRejected('invalid', `Column "${duplicated[0]}" appears twice in the header.`);
  const missing = REQUIRED_COLUMNS.filter((c) => !header.includes(c));
  if (missing.length) throw new UploadRejected('invalid', `The header lacks the required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`);
  const data = records.slice(1);
  if (data.length > MAX_ROWS) throw new UploadRejected('tooLarge', `The file has ${data.length} records; at most ${MAX_ROWS} are allowed.`);
  if (data.length === 0) throw new UploadRejected('invalid', 'The file has a header but no records.');

  const col = Object.fromEntries(header.map((h, i) => [h, i])) as Record<string, number>;
  const issues: RowIssue[] = [];
  const rows: BatchRow[] = [];
  const seen = { externalId: new Map<string, number>(), shareToken: new Map<string, number>(), cardProcessorPublicToken: new Map<string, number>() };
  for (const { record, info } of data) {
    const row = info.lines;
    const issue = (field: string, message: string) => issues.push({ row, field, message });
    if (record.length > header.length) issue('', `has ${record.length} values but the header has ${header.length} columns`);
    const value = (name: string) => (col[name] === undefined ? '' : (record[col[name]!] ?? ''));
    const externalId = value('externalId');
    const shareToken = value('shareToken');
    const applicantLevel = value('applicantLevel');
    const cpt = value('cardProcessorPublicToken');
    if (!externalId) issue('externalId', 'is required');
    else if (externalId.length > MAX_EXTERNAL_ID) issue('externalId', `is longer than ${MAX_EXTERNAL_ID} characters`);
    if (!shareToken) issue('shareToken', 'is required');
    else if (shareToken.length > MAX_SHARE_TOKEN) issue('shareToken', `is longer than ${MAX_SHARE_TOKEN} characters`);
    if (applicantLevel && !LEVEL_NAME.test(applicantLevel)) issue('applicantLevel', 'must be 1 to 100 letters, digits, spaces, dots, dashes or underscores');
    if (!cpt && options.binSponsored) issue('cardProcessorPublicToken', 'is required for BIN-sponsored programs');
    else if (cpt && !CARD_PROCESSOR_TOKEN.test(cpt)) issue('cardProcessorPublicToken', CARD_PROCESSOR_TOKEN_RULE);
    for (const [field, v] of [['externalId', externalId], ['shareToken', shareToken]] as const) {
      if (!NO_CONTROL_CHARACTERS.test(v)) issue(field, CONTROL_CHARACTER_RULE);
    }
    for (const [field, v] of [['externalId', externalId], ['shareToken', shareToken], ['cardProcessorPublicToken', cpt]] as const) {
      if (!v) continue;
      const first = seen[field].get(v);
      if (first !== undefined) issue(field, `repeats the value of row ${first}`);
      else seen[field].set(v, row);
    }
    rows.push({ rowNumber: row, externalId, shareToken, applicantLevel: applicantLevel || null, cardProcessorPublicToken: cpt || null });
  }
  if (issues.length) {
    const listed = issues.slice(0, LISTED_IN_MESSAGE).map((i) => `row ${i.row}${i.field ? ` ${i.field}` : ''} ${i.message}`);
    const more = issues.length > LISTED_IN_MESSAGE ? `; and ${issues.length - LISTED_IN_MESSAGE} more` : '';
    throw new UploadRejected('invalid', `CSV validation failed: ${listed.join('; ')}${more}.`, issues.slice(0, MAX_DETAILS));
  }
  return rows;
}
