// Finding a person's data anywhere we keep things: values unlikely anywhere by chance, and a search
// of every text-like column of every table and of every file under the given directories. What the
// deletion and retention tests use to prove that what is gone is gone.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Queryable } from '../../store/db.ts';
import { FILES } from './ukyc.ts';

/** Letters only (universal KYC names are Latin), unlikely anywhere by chance. */
export const uniqueName = () =>
  `Zq${randomBytes(6)
    .toString('hex')
    .replace(/\d/g, (d) => 'ghijklmnop'[Number(d)]!)}`;
export const uniqueNumber = () => `DN${randomBytes(5).toString('hex').toUpperCase()}`;
/** A PDF whose bytes carry the person's name and number, as a scanned document would. */
export const pdfOf = (...text: string[]) => Buffer.concat([FILES.pdf, Buffer.from(`% ${text.join(' ')}\n`)]);

/** Every place a value could hide: each text-like column of each table, and every file under `dirs`. */
export async function whereFound(db: Queryable, dirs: readonly string[], needle: string): Promise<string[]> {
  const columns = await db.query<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
      WHERE c.table_schema = current_schema() AND c.data_type IN ('text', 'character varying', 'jsonb', 'json', 'ARRAY', 'bytea')`,
  );
  assert.ok(columns.length > 40, 'the search covers the schema');
  const found: string[] = [];
  for (const c of columns) {
    const expr = c.data_type === 'bytea' ? `encode("${c.column_name}", 'escape')` : `"${c.column_name}"::text`;
    const [hit] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM "${c.table_name}" WHERE strpos(${expr}, $1) > 0`, [needle]);
    if (Number(hit!.n) > 0) found.push(`${c.table_name}.${c.column_name}`);
  }
  const walk = async (root: string, dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(root, p);
      // (a request's temporary file may be removed between the listing and the read: it is gone then)
      else if ((await readFile(p).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? Buffer.alloc(0) : Promise.reject(err)))).includes(needle))
        found.push(`file ${path.relative(root, p)}`);
    }
  };
  for (const dir of dirs) await walk(dir, dir);
  return found;
}
