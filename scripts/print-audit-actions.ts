// `npm run docs:audit`: prints docs/compliance.md's table of audit actions from domain/audit-actions.ts.
import { AUDIT_ACTIONS } from '../domain/audit-actions.ts';

export function auditActionsMarkdown(): string {
  const rows = Object.entries(AUDIT_ACTIONS).map(([action, meaning]) => `| \`${action}\` | ${meaning} |`);
  return ['| action | what it records |', '| --- | --- |', ...rows].join('\n');
}

if (import.meta.main) process.stdout.write(`${auditActionsMarkdown()}\n`);
