// The output CSV, written so that a crash or Ctrl-C at any moment loses nothing and a rerun doubles
// nothing: one complete line per write, appended; on resume, a torn last line is cut off and every
// externalId already present is skipped.
import { open, readFile, stat, truncate, type FileHandle } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { csvLine } from './csv.ts';

export const OUTPUT_HEADER = ['externalId', 'shareToken'];

export type Resumed = { done: Set<string>; oldestAgeMs: number | null };

/** Reads what an earlier run wrote (repairing a torn last line) and returns the externalIds done. */
export async function resumeOutput(file: string, now = Date.now()): Promise<Resumed> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return { done: new Set(), oldestAgeMs: null };
  }
  if (text && !text.endsWith('\n')) {
    const keep = text.lastIndexOf('\n') + 1;
    await truncate(file, Buffer.byteLength(text.slice(0, keep)));
    text = text.slice(0, keep);
  }
  const records: string[][] = text ? parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true }) : [];
  const done = new Set(
    records
      .slice(1)
      .filter((r) => r[0] && r[1])
      .map((r) => r[0]!),
  );
  const { mtimeMs } = await stat(file);
  return { done, oldestAgeMs: done.size ? now - mtimeMs : null };
}

export class AppendCsv {
  private readonly handle: FileHandle;

  private constructor(handle: FileHandle) {
    this.handle = handle;
  }

  /**
   * Opens for appending; writes the header when the file is new or empty. Share tokens are
   * credentials until used: the file is readable by its owner only (600), also when it existed.
   */
  static async open(file: string, header: string[], { truncateFirst = false } = {}): Promise<AppendCsv> {
    const handle = await open(file, truncateFirst ? 'w' : 'a', 0o600);
    await handle.chmod(0o600);
    if ((await handle.stat()).size === 0) await handle.write(csvLine(header));
    return new AppendCsv(handle);
  }

  async write(fields: string[]): Promise<void> {
    await this.handle.write(csvLine(fields));
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}
