// A command of the admin CLI (cli/vouch.ts) that lives in its own file under cli/commands/: its
// words, its usage lines, its options, and who it acts as in the audit log — the admin CLI for
// administration, an operator for what an operator does about a person's record (trace, evidence,
// holds). The person at the keyboard is named by --as, else VOUCH_OPERATOR, else the login name.
import { hostname, userInfo } from 'node:os';
import type { ParseArgsOptionsConfig } from 'node:util';
import { clip } from '../domain/audit-bounds.ts';
import type { Config } from '../runtime/config.ts';
import { openDatabase } from '../runtime/database.ts';
import type { Db } from '../store/db.ts';

export class UsageError extends Error {}

export type CommandInput = {
  /** The words after the command's own (`vouch trace <id>`: the id). */
  args: string[];
  values: Record<string, string | boolean | undefined>;
  config: Config;
};

export type CliCommand = {
  /** Its words: `audit verify`, `trace`. */
  name: string;
  usage: string;
  options?: ParseArgsOptionsConfig;
  actsAs: 'admin_cli' | 'operator';
  run(input: CommandInput): Promise<unknown>;
};

/** What a command prints as it is, for people (`trace --text`); anything else a command returns is printed as JSON. */
export class CliText {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** Runs fn on the service's database (DATABASE_URL, else the embedded one) and closes it after. */
export async function withDatabase<T>(config: Config, fn: (db: Db) => Promise<T>): Promise<T> {
  const database = await openDatabase(config);
  try {
    return await fn(database.db);
  } finally {
    await database.close();
  }
}

/**
 * Who sits at the keyboard as the host knows them: the login name and the host, recorded beside
 * the name an operator gives (--as), which the CLI cannot check (issue 37).
 */
export function operatorSeat(): { login: string; host: string } {
  let login: string;
  try {
    login = userInfo().username;
  } catch {
    login = 'unknown';
  }
  return { login: clip(login, 64), host: clip(hostname(), 64) };
}
