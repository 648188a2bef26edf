// The service's database role (issue 37). On PostgreSQL the migrations run as the schema's owner
// (DATABASE_MIGRATION_URL) and the API and workers as a role of their own (DATABASE_URL), which may
// read and write the product's rows but may only append to the record: no UPDATE, DELETE or
// TRUNCATE of audit entries, checkpoints or decisions, and — not owning any table — no ALTER, no
// trigger switched off, no DDL. So the service's own credentials cannot rewrite the record; what
// they still can (link entries and move a head forward, append) the chain and its signed
// checkpoints show. Granted again after every migration, so new tables follow the rule.
import type { Queryable } from './db.ts';

/**
 * Tables the service may only read and append to (and what more each needs): the log's linking
 * moves an entry out of audit_pending and the head forward.
 */
const APPEND_ONLY: Record<string, string[]> = {
  audit_log: ['SELECT', 'INSERT'],
  audit_pending: ['SELECT', 'INSERT', 'DELETE'],
  audit_heads: ['SELECT', 'INSERT', 'UPDATE'],
  audit_checkpoints: ['SELECT', 'INSERT'],
  record_decisions: ['SELECT', 'INSERT'],
  record_kyc_persons: ['SELECT', 'INSERT'],
  record_kyb_profile_versions: ['SELECT', 'INSERT'],
  entity_digest_keys: ['SELECT', 'INSERT'],
  schema_migrations: ['SELECT'],
};

/**
 * Grants the service role what it may do in the current schema; run by the schema's owner after
 * migrating, in one transaction (a running service never sees its grants half made).
 */
export async function grantServiceRole(db: Queryable, role: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(role)) throw new Error(`not a role name: ${role}`);
  const [{ schema } = { schema: 'public' }] = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
  const s = `"${schema.replaceAll('"', '""')}"`;
  await db.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${s} FROM ${role}`);
  await db.query(`GRANT USAGE ON SCHEMA ${s} TO ${role}`);
  // PostgreSQL before 15 lets everyone create in `public`: the service's role makes no table of its own
  await db.query(`REVOKE CREATE ON SCHEMA ${s} FROM PUBLIC`);
  await db.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${role}`);
  await db.query(`GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${s} TO ${role}`);
  for (const [table, allowed] of Object.entries(APPEND_ONLY)) {
    await db.query(`REVOKE ALL ON ${s}.${table} FROM ${role}`);
    await db.query(`GRANT ${allowed.join(', ')} ON ${s}.${table} TO ${role}`);
  }
}
