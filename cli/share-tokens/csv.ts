// CSV reading and writing for the kyc-share-token tool.
import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';

import { restoredCell } from '../../domain/csv.ts';

export { csvField, csvLine } from '../../domain/csv.ts';

export type InputRow = { line: number; externalId: string; applicantId: string };
export type BadRow = { line: number; externalId: string; applicantId: string; reason: string };

export class InputError extends Error {}

/** Reads `externalId,applicantId` rows (any column order, BOM allowed) and sorts out the bad ones. */
export async function readInput(file: string): Promise<{ rows: InputRow[]; bad: BadRow[] }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new InputError(`cannot read ${file}: ${(err as Error).message}`);
  }
  let records: string[][];
  try {
    records = parse(text, { bom: true, relax_column_count: true, skip_empty_lines: true, trim: true });
  } catch (err) {
    throw new InputError(`${file} is not valid CSV: ${(err as Error).message}`);
  }
  const header = records[0]?.map((h) => h.trim());
  const ext = header?.indexOf('externalId') ?? -1;
  const app = header?.indexOf('applicantId') ?? -1;
  if (!header || ext < 0 || app < 0) throw new InputError(`${file} needs a header row with the columns externalId and applicantId`);
  const rows: InputRow[] = [];
  const bad: BadRow[] = [];
  const seenExternal = new Map<string, number>();
  const seenApplicant = new Map<string, number>();
  records.slice(1).forEach((r, i) => {
    const line = i + 2;
    const externalId = restoredCell(r[ext] ?? '');
    const applicantId = restoredCell(r[app] ?? '');
    const reject = (reason: string) => bad.push({ line, externalId, applicantId, reason });
    if (!externalId) return reject('missing externalId');
    if (!applicantId) return reject('missing applicantId');
    if (seenExternal.has(externalId)) return reject(`duplicate externalId (first on line ${seenExternal.get(externalId)})`);
    if (seenApplicant.has(applicantId)) return reject(`duplicate applicantId (first on line ${seenApplicant.get(applicantId)})`);
    seenExternal.set(externalId, line);
    seenApplicant.set(applicantId, line);
    rows.push({ line, externalId, applicantId });
  });
  return { rows, bad };
}
