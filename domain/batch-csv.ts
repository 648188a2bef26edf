// The batch upload's CSV rules (interface 2.4, 7 and 8), in one place: encoding, header, row count and
// every per-row rule. Rows are numbered as a spreadsheet shows them: the header is row 1.
//
// A file is refused only for the reasons of the interface's section 7: too large or too many rows
// (0701010100); not valid UTF-8 CSV, no header, a required column or field missing, or a repeated
// cardProcessorPublicToken (0701010200). Anything else is a problem of its record, which fails
// alone with a category of its own while the valid records go on (3.2): an applicantLevel that
// cannot be a level name, a repeated externalId or shareToken, a value too long to be one.
// Columns the interface does not name (or a repeated one, after its first) are ignored and listed.
//
// The file is read as it arrives and parsing stops at the first reason to refuse it: a 2 MB file of
// a million one-column lines is refused at its 5,001st record, not after all of them are parsed.
// The parser is fed small slices and the event loop is given back every couple of milliseconds (a
// record whose column count differs from the header's costs csv-parse an Error object, some 15 µs),
// so one file never holds the process for more than that at a time and at most ~5,000 records'
// worth in all; the memory kept is the rows' fields (at most 5,000 of them, each under
// MAX_RECORD_CHARS).
import { cardTokenAsKept } from './card-number.ts';
import { parse } from 'csv-parse';
import { restoredCell } from './csv.ts';
import { MAX_EXTERNAL_ID } from './entity.ts';
import type { ImportErrorCategory } from './import-errors.ts';
import { CARD_PROCESSOR_TOKEN, CARD_PROCESSOR_TOKEN_RULE, CONTROL_CHARACTER_RULE, MAX_SHARE_TOKEN, NO_CONTROL_CHARACTERS } from './share-fields.ts';

export const MAX_FILE_BYTES = 10 * 1024 * 1024;
export const MAX_ROWS = 5000;
/** A record (one line of the file, all its fields) longer than this is not a row of ours: the file is refused as invalid CSV. */
export const MAX_RECORD_CHARS = 64 * 1024;
export const REQUIRED_COLUMNS = ['externalId', 'shareToken'] as const;
export const OPTIONAL_COLUMNS = ['applicantLevel', 'cardProcessorPublicToken'] as const;
const LEVEL_NAME = /^[A-Za-z0-9 _.-]{1,100}$/;
const LISTED_IN_MESSAGE = 20;
const MAX_DETAILS = 500;
/** Bytes handed to the parser at a time, and how long it may run before the event loop gets a turn. */
const SLICE_BYTES = 512;
const YIELD_AFTER_MS = 2;

export type BatchRow = {
  rowNumber: number;
  externalId: string;
  shareToken: string;
  applicantLevel: string | null;
  cardProcessorPublicToken: string | null;
  /** Why the record fails before it is processed (stored failed, not retryable), if it does. */
  failure?: { category: ImportErrorCategory; message: string };
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

/** A file that is accepted: its rows, and the header's columns that were ignored (unknown, or a repeat). */
export type BatchCsvRead = { ok: true; rows: BatchRow[]; ignoredColumns: string[] } | { ok: false; rejected: UploadRejected };

type Parsed = { record: string[]; info: { lines: number } };

const KNOWN_COLUMNS: ReadonlySet<string> = new Set([...REQUIRED_COLUMNS, ...OPTIONAL_COLUMNS]);
/** Ignored columns listed in the answer, at most (each name cut to 100 characters). */
const LISTED_IGNORED = 20;

/**
 * Checks the header row: each known column's position (its first occurrence), and the columns
 * ignored (unknown ones, and later repeats of a known one, with their position); or why the file
 * is refused (no header, a required column missing).
 */
function readHeader(header: string[]): { col: Record<string, number>; ignored: string[] } | UploadRejected {
  if (header.every((h) => h === ''))
    return new UploadRejected(
      'invalid',
      'The file has no header row. Its first line must name the columns: externalId,shareToken (and applicantLevel, cardProcessorPublicToken if used).',
    );
  const missing = REQUIRED_COLUMNS.filter((c) => !header.includes(c));
  if (missing.length) {
    return new UploadRejected(
      'invalid',
      `The header lacks the required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}` +
        `; the first line must name the columns (${[...KNOWN_COLUMNS].join(', ')}).`,
    );
  }
  const col: Record<string, number> = {};
  const ignored: string[] = [];
  header.forEach((h, i) => {
    if (KNOWN_COLUMNS.has(h) && col[h] === undefined) col[h] = i;
    else if (ignored.length < LISTED_IGNORED) ignored.push(`${h.slice(0, 100)} (column ${i + 1})`);
  });
  return { col, ignored };
}

/** The rows of one file, checked record by record; the first refusal ends the reading. */
class RowReader {
  private col: Record<string, number> | null = null;
  private width = 0;
  ignoredColumns: string[] = [];
  readonly rows: BatchRow[] = [];
  /** The first MAX_DETAILS issues, and how many there are in all. */
  readonly issues: RowIssue[] = [];
  private issueCount = 0;
  private readonly seen = { externalId: new Map<string, number>(), shareToken: new Map<string, number>(), cardProcessorPublicToken: new Map<string, number>() };
  refused: UploadRejected | null = null;

  private readonly options: { binSponsored: boolean };

  constructor(options: { binSponsored: boolean }) {
    this.options = options;
  }

  take({ record, info }: Parsed): void {
    if (this.refused) return;
    if (!this.col) {
      const header = readHeader(record);
      if (header instanceof UploadRejected) this.refused = header;
      else [this.col, this.ignoredColumns, this.width] = [header.col, header.ignored, record.length];
      return;
    }
    if (this.rows.length === MAX_ROWS) {
      this.refused = new UploadRejected(
        'tooLarge',
        `The file has more than ${MAX_ROWS} records; at most ${MAX_ROWS} are allowed. Split it into files of at most ${MAX_ROWS} records.`,
      );
      return;
    }
    const row = info.lines;
    const issue = (field: string, message: string) => {
      if (this.issueCount++ < MAX_DETAILS) this.issues.push({ row, field, message });
    };
    /** The record's own problem: it fails alone (the first problem found is its reason). */
    let failure: BatchRow['failure'];
    const fails = (category: ImportErrorCategory, message: string) => (failure ??= { category, message });
    if (record.length > this.width) issue('', `has ${record.length} values but the header has ${this.width} columns`);
    const col = this.col;
    const value = (name: string) => restoredCell(col[name] === undefined ? '' : (record[col[name]!] ?? ''));
    const externalId = value('externalId');
    const shareToken = value('shareToken');
    const applicantLevel = value('applicantLevel');
    const cpt = cardTokenAsKept(value('cardProcessorPublicToken')); // a card number sent by mistake is never kept whole
    // the file's own rules (section 7): required fields, text a CSV of ours can hold, a repeated card token
    if (!externalId) issue('externalId', 'is required');
    if (!shareToken) issue('shareToken', 'is required');
    if (!cpt && this.options.binSponsored) issue('cardProcessorPublicToken', 'is required for BIN-sponsored programs');
    for (const [field, v] of [
      ['externalId', externalId],
      ['shareToken', shareToken],
    ] as const) {
      if (!NO_CONTROL_CHARACTERS.test(v)) issue(field, CONTROL_CHARACTER_RULE);
    }
    if (cpt) {
      const first = this.seen.cardProcessorPublicToken.get(cpt);
      if (first !== undefined) issue('cardProcessorPublicToken', `repeats the value of row ${first} (a card processor token may appear once in a file)`);
      else this.seen.cardProcessorPublicToken.set(cpt, row);
    }
    // the record's own (it fails alone, 3.2)
    if (externalId.length > MAX_EXTERNAL_ID)
      fails(
        'ENTITY_NOT_FOUND',
        `The externalId is longer than ${MAX_EXTERNAL_ID} characters, so no entity has it. Correct ` +
          `it to an existing entity's externalId and upload the record in a new file.`,
      );
    if (shareToken.length > MAX_SHARE_TOKEN)
      fails('TOKEN_EXPIRED_OR_INVALID', `The shareToken is longer than ${MAX_SHARE_TOKEN} characters: not a share token. Generate a new one and share again.`);
    if (applicantLevel && !LEVEL_NAME.test(applicantLevel)) {
      fails(
        'APPLICANT_LEVEL_NOT_CONFIGURED',
        'The applicantLevel cannot be a level name (1 to 100 letters, digits, spaces, dots, dashes or underscores); leave it empty for the default level.',
      );
    }
    if (cpt && !CARD_PROCESSOR_TOKEN.test(cpt))
      fails(
        'CARD_PROCESSOR_TOKEN_INVALID',
        cpt.includes('*')
          ? `The cardProcessorPublicToken ${CARD_PROCESSOR_TOKEN_RULE}; this one looks like a card number, which we never keep ` +
              "(it is masked here): send the card processor's token instead."
          : `The cardProcessorPublicToken ${CARD_PROCESSOR_TOKEN_RULE}.`,
      );
    for (const field of ['externalId', 'shareToken'] as const) {
      const v = field === 'externalId' ? externalId : shareToken;
      if (!v) continue;
      const first = this.seen[field].get(v);
      if (first === undefined) this.seen[field].set(v, row);
      else if (field === 'externalId')
        fails(
          'DUPLICATE_EXTERNAL_ID',
          `Row ${first} of this file has the same externalId; one record per entity in a file. Upload this one in a later file if it is meant.`,
        );
      else
        fails(
          'TOKEN_ALREADY_USED',
          `Row ${first} of this file has the same shareToken, and a share token is used once. Generate a new share token for this person.`,
        );
    }
    this.rows.push({
      rowNumber: row,
      externalId,
      shareToken,
      applicantLevel: applicantLevel || null,
      cardProcessorPublicToken: cpt || null,
      ...(failure ? { failure } : {}),
    });
  }

  validationFailed(): UploadRejected {
    const { issues } = this;
    const listed = issues.slice(0, LISTED_IN_MESSAGE).map((i) => `row ${i.row}${i.field ? ` ${i.field}` : ''} ${i.message}`);
    const more = this.issueCount > LISTED_IN_MESSAGE ? `; and ${this.issueCount - LISTED_IN_MESSAGE} more` : '';
    return new UploadRejected(
      'invalid',
      `CSV validation failed: ${listed.join('; ')}${more}. Correct these rows (details lists them) and upload the file again.`,
      issues,
    );
  }

  finish(): BatchCsvRead {
    if (this.refused) return { ok: false, rejected: this.refused };
    if (!this.col)
      return {
        ok: false,
        rejected: new UploadRejected(
          'invalid',
          'The file has no header row. Its first line must name the columns: externalId,shareToken (and applicantLevel, cardProcessorPublicToken if used).',
        ),
      };
    if (this.rows.length === 0 && this.issueCount === 0)
      return { ok: false, rejected: new UploadRejected('invalid', 'The file has a header but no records; add at least one record below the header.') };
    if (this.issueCount) return { ok: false, rejected: this.validationFailed() };
    return { ok: true, rows: this.rows, ignoredColumns: this.ignoredColumns };
  }
}

/**
 * Reads the file from its chunks as they arrive (a request's body, say) and stops at the first
 * reason to refuse it, leaving the rest unread. The caller limits the size (MAX_FILE_BYTES) as the
 * bytes come in.
 */
export async function readBatchCsv(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: { binSponsored: boolean }): Promise<BatchCsvRead> {
  const reader = new RowReader(options);
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const parser = parse({ bom: true, relax_column_count: true, skip_empty_lines: true, trim: true, info: true, max_record_size: MAX_RECORD_CHARS });
  let parseError: Error | null = null;
  parser.on('data', (r: Parsed) => reader.take(r));
  parser.on('error', (err: Error) => (parseError ??= err));
  const ended = new Promise<void>((resolve) => parser.once('close', resolve).once('end', resolve));
  const refuse = (rejected: UploadRejected): BatchCsvRead => {
    parser.destroy();
    return { ok: false, rejected };
  };
  const invalidCsv = (err: Error) =>
    refuse(
      new UploadRejected(
        'invalid',
        `The file is not valid CSV: ${err.message.slice(0, 300)}; check the quoting and that each record is under 64 KB, then upload again`,
      ),
    );
  const notUtf8 = () => refuse(new UploadRejected('invalid', 'The file is not valid UTF-8 text; save it as UTF-8 (for example "CSV UTF-8") and upload again.'));
  let since = performance.now();
  /**
   * One slice: checked as UTF-8, then parsed. Slices are cut at the same offsets of the file however
   * its bytes arrived, so the same file is always refused for the same reason.
   */
  const feed = async (slice: Uint8Array): Promise<BatchCsvRead | null> => {
    try {
      utf8.decode(slice, { stream: true });
    } catch {
      return notUtf8();
    }
    parser.write(slice);
    if (parseError) return invalidCsv(parseError);
    if (reader.refused) return refuse(reader.refused);
    if (performance.now() - since >= YIELD_AFTER_MS) {
      await new Promise((r) => setImmediate(r)); // the others' requests get their turn
      since = performance.now();
    }
    return null;
  };
  const pending = Buffer.alloc(SLICE_BYTES);
  let held = 0;
  for await (const chunk of chunks) {
    let at = 0;
    if (held > 0) {
      const take = Math.min(SLICE_BYTES - held, chunk.length);
      pending.set(chunk.subarray(0, take), held);
      held += take;
      at = take;
      if (held < SLICE_BYTES) continue;
      held = 0;
      const out = await feed(Buffer.from(pending)); // a copy: the parser may keep what it is given
      if (out) return out;
    }
    for (; at + SLICE_BYTES <= chunk.length; at += SLICE_BYTES) {
      const out = await feed(chunk.subarray(at, at + SLICE_BYTES));
      if (out) return out;
    }
    pending.set(chunk.subarray(at), 0);
    held = chunk.length - at;
  }
  if (held > 0) {
    const out = await feed(Buffer.from(pending.subarray(0, held)));
    if (out) return out;
  }
  try {
    utf8.decode();
  } catch {
    return notUtf8(); // the file ends inside a character
  }
  parser.end();
  await ended;
  if (parseError) return invalidCsv(parseError);
  return reader.finish();
}

/** The rules over a whole file in memory (tests, tools). */
export function parseBatchCsv(bytes: Uint8Array, options: { binSponsored: boolean }): Promise<BatchCsvRead> {
  if (bytes.length > MAX_FILE_BYTES)
    return Promise.resolve({ ok: false, rejected: new UploadRejected('tooLarge', `The file is larger than ${MAX_FILE_BYTES / 1024 / 1024} MB.`) });
  return readBatchCsv([bytes], options);
}
