// The file of a batch of requirement submissions: JSON Lines (one JSON object per line), UTF-8, at
// most 5,000 records and 10 MB (the batch import's limits). A record is
//   {"entityId" | "externalId": …, "memberId"?: …, "requirementSlug": …, "value": …}
// with `value` exactly as the single endpoint takes it (the canonical KYC data as a JSON string, a
// boolean, a number, a string or a JSON object per the catalog). Records are numbered by their line.
//
// The file is refused only as a whole file can be wrong: too large or too many records (0701010100);
// not UTF-8, a line too long to be a record, or no record at all (0701010200). A line that is not a
// record of ours, or whose value breaks its requirement's rules, fails alone (a category, a message
// and the field's path) while the others go on. What needs the database (the entity, the member,
// the type, a card token held elsewhere) is checked by the upload next, record by record.
//
// The file is read as it arrives, line by line, and the event loop is given back every couple of
// milliseconds: one file never holds the process for longer than that at a time.
import { withoutCardNumbers } from './card-number.ts';
import { z } from 'zod';
import { MAX_FILE_BYTES, MAX_ROWS, UploadRejected } from './batch-csv.ts';
import { externalIdSchema } from './entity.ts';
import { type RecordFailure, type RequirementRecordCategory } from './requirement-batch.ts';
import { findRequirement } from './feature-catalog.ts';
import { requirementSlugProblem, requirementValueIssue } from './requirement-rules.ts';
import { CANONICAL_KYC_SLUG, checkCanonicalKyc } from './universal-kyc.ts';

export { MAX_FILE_BYTES, MAX_ROWS as MAX_RECORDS };

/** A line longer than this (a 64 KB canonical payload, escaped, fits) is not a record of ours: the file is refused. */
export const MAX_LINE_BYTES = 256 * 1024;
const YIELD_AFTER_MS = 2;

/** One record as read: what it names, its value as JSON text, and why it fails already if it does. */
export type RequirementLine = {
  rowNumber: number;
  entityId: string | null;
  externalId: string | null;
  memberId: string | null;
  requirementSlug: string | null;
  /** The value as JSON text (null when the line had none, or was not a record). */
  value: string | null;
  /** The canonical KYC data's card processor token, when the record carries one (checked against other entities at upload). */
  cardProcessorPublicToken: string | null;
  failure?: RecordFailure;
};

export type RequirementLinesRead = { ok: true; records: RequirementLine[] } | { ok: false; rejected: UploadRejected };

const recordShape = z
  .object({
    entityId: z.uuid({ message: 'must be a UUID' }).optional(),
    externalId: externalIdSchema.optional(),
    memberId: z.uuid({ message: 'must be a UUID' }).optional(),
    requirementSlug: z.string({ message: 'is required: a string' }).min(1, 'must not be empty').max(100, 'is at most 100 characters'),
    value: z.unknown(),
  })
  .strict();

const fail = (category: RequirementRecordCategory, message: string, path = ''): RecordFailure => ({ category, message, path });
const pathOf = (parts: readonly PropertyKey[]) =>
  parts.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)), '');
const text = (v: unknown, max = 300) => (typeof v === 'string' ? v.slice(0, max) : null);

/** The rules of one line that need nothing but the line: its form, the slug, and the value by its requirement's rules. */
export function readRequirementLine(line: string, rowNumber: number, now: Date): RequirementLine {
  const empty: RequirementLine = {
    rowNumber,
    entityId: null,
    externalId: null,
    memberId: null,
    requirementSlug: null,
    value: null,
    cardProcessorPublicToken: null,
  };
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (err) {
    return {
      ...empty,
      failure: fail('INVALID_RECORD', `Line ${rowNumber} is not valid JSON (${(err as Error).message.slice(0, 120)}); each line is one JSON object.`),
    };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return { ...empty, failure: fail('INVALID_RECORD', `Line ${rowNumber} is not a JSON object; each line is one record {entityId, requirementSlug, value}.`) };
  const raw = json as Record<string, unknown>;
  const echoed: RequirementLine = {
    ...empty,
    entityId: text(raw.entityId),
    externalId: text(raw.externalId),
    memberId: text(raw.memberId),
    requirementSlug: text(raw.requirementSlug, 100),
    // echoed as sent, but never a card number (one sent by mistake is masked: domain/card-number.ts)
    value: 'value' in raw ? withoutCardNumbers(JSON.stringify(raw.value)) : null,
  };
  const shape = recordShape.safeParse(raw);
  if (!shape.success) {
    const issue = shape.error.issues[0]!;
    const path = issue.code === 'unrecognized_keys' ? issue.keys[0]! : pathOf(issue.path);
    const message =
      issue.code === 'unrecognized_keys'
        ? `has an unknown field ${path}; the fields are entityId, externalId, memberId, requirementSlug, value`
        : issue.message;
    return { ...echoed, failure: fail('INVALID_RECORD', `${path || 'the record'} ${message}.`, path) };
  }
  const r = shape.data;
  if ((r.entityId === undefined) === (r.externalId === undefined))
    return {
      ...echoed,
      failure: fail('INVALID_RECORD', 'Name the entity with entityId or with externalId (one of them).', r.entityId ? 'externalId' : 'entityId'),
    };
  if (!('value' in raw) || r.value === undefined) return { ...echoed, failure: fail('INVALID_RECORD', 'value is required.', 'value') };
  // the requirement itself first (unknown, a file, not taken in a batch); its fit to the entity's type is checked once the entity is known
  const requirement = findRequirement(r.requirementSlug);
  const slugProblem = requirementSlugProblem(r.requirementSlug, requirement?.associatedEntity ?? 'INDIVIDUAL', 'requirement-batch');
  if (slugProblem) return { ...echoed, failure: fail('REQUIREMENT_NOT_ACCEPTED', `${slugProblem}.`, 'requirementSlug') };
  const issue = requirementValueIssue(r.requirementSlug, r.value);
  if (issue) {
    const path = pathOf(['value', ...issue.path]);
    return { ...echoed, failure: fail('INVALID_VALUE', `${path} ${issue.message}.`, path) };
  }
  if (r.requirementSlug !== CANONICAL_KYC_SLUG) return echoed;
  // the canonical KYC data: every rule of 2.7, as POST /entity/{entityId}/requirement checks it
  const check = checkCanonicalKyc(r.value as string, now);
  if (!check.ok) return { ...echoed, failure: fail('INVALID_VALUE', check.message, `value.${check.parameter}`) };
  return { ...echoed, cardProcessorPublicToken: check.payload.cardProcessorPublicToken ?? null };
}

/**
 * Reads the file from its chunks as they arrive and stops at the first reason to refuse it, leaving
 * the rest unread. The caller limits the size (MAX_FILE_BYTES) as the bytes come in.
 */
export async function readRequirementLines(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, now = new Date()): Promise<RequirementLinesRead> {
  const records: RequirementLine[] = [];
  // each line decoded whole; a leading byte-order mark is dropped by the decoder
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  let carry: Buffer[] = [];
  let carried = 0;
  let lineNumber = 0;
  let since = performance.now();
  const refused = (kind: 'tooLarge' | 'invalid', message: string): RequirementLinesRead => ({ ok: false, rejected: new UploadRejected(kind, message) });

  const take = (bytes: Buffer): RequirementLinesRead | null => {
    lineNumber++;
    let line: string;
    try {
      line = utf8.decode(bytes);
    } catch {
      return refused('invalid', `Line ${lineNumber} is not valid UTF-8 text; save the file as UTF-8 and upload it again.`);
    }
    if (line.trim() === '') return null; // blank lines are allowed (a last newline, spacing)
    if (records.length === MAX_ROWS)
      return refused(
        'tooLarge',
        `The file has more than ${MAX_ROWS} records; at most ${MAX_ROWS} are allowed. Split it into files of at most ${MAX_ROWS} records.`,
      );
    records.push(readRequirementLine(line, lineNumber, now));
    return null;
  };
  const tooLong = () =>
    refused(
      'invalid',
      `Line ${lineNumber + 1} is longer than ${MAX_LINE_BYTES / 1024} KB, more than any record; each line is one record, ending with a newline.`,
    );

  for await (const chunk of chunks) {
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let at = 0;
    for (let nl = buf.indexOf(0x0a, at); nl !== -1; nl = buf.indexOf(0x0a, at)) {
      const piece = buf.subarray(at, nl);
      if (!carried && (piece.length === 0 || (piece.length === 1 && piece[0] === 0x0d))) {
        // an empty line costs nothing more than its count: a file of ten million newlines is read in a moment
        lineNumber++;
        at = nl + 1;
        if ((lineNumber & 4095) === 0 && performance.now() - since >= YIELD_AFTER_MS) {
          await new Promise((r) => setImmediate(r));
          since = performance.now();
        }
        continue;
      }
      if (carried + piece.length > MAX_LINE_BYTES) return tooLong();
      const bytes = carried ? Buffer.concat([...carry, piece]) : piece;
      carry = [];
      carried = 0;
      const out = take(bytes[bytes.length - 1] === 0x0d ? bytes.subarray(0, -1) : bytes);
      if (out) return out;
      at = nl + 1;
      if (performance.now() - since >= YIELD_AFTER_MS) {
        await new Promise((r) => setImmediate(r)); // the others' requests get their turn
        since = performance.now();
      }
    }
    if (at < buf.length) {
      if (carried + buf.length - at > MAX_LINE_BYTES) return tooLong();
      carry.push(Buffer.from(buf.subarray(at))); // a copy: the chunk's memory may be reused
      carried += buf.length - at;
    }
  }
  if (carried) {
    const out = take(Buffer.concat(carry));
    if (out) return out;
  }
  if (records.length === 0) return refused('invalid', 'The file holds no records; each line is one JSON object {entityId, requirementSlug, value}.');
  return { ok: true, records };
}
