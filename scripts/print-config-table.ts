// `npm run docs:config`: prints docs/operations.md's configuration table from the settings of runtime/config.ts;
// `npm run docs:config -- secrets`: its table of the secrets each process holds (runtime/secrets-by-role.ts).
import { SETTINGS, type Setting } from '../runtime/config.ts';
import { API_SECRETS, TEMPORAL_SETUP_SECRETS, workerSecrets, type SecretNeeds } from '../runtime/secrets-by-role.ts';
import { WORKER_ROLE_NAMES } from '../runtime/worker-roles.ts';

/** A setting's default as docs/operations.md shows it: in words if it says so, else its schema's default value, or "unset". */
export function defaultText(s: Setting): string {
  if (s.default !== undefined) return s.default;
  const parsed = s.schema.safeParse(undefined);
  const value = parsed.success && parsed.data !== undefined ? `\`${String(parsed.data)}\`` : 'unset';
  return s.note ? `${value} (${s.note})` : value;
}

/** The table's rows: settings that share a row (`sameRow`) join the one before them. */
export function configTableRows(): { names: string[]; defaults: string[]; meaning: string }[] {
  const rows: { names: string[]; defaults: string[]; meaning: string }[] = [];
  for (const [name, s] of Object.entries(SETTINGS) as [string, Setting][]) {
    const row = s.meaning === undefined ? rows.at(-1) : rows[rows.push({ names: [], defaults: [], meaning: s.meaning }) - 1];
    if (!row) throw new Error(`${name} shares the row of the setting before it, but it is the first setting`);
    row.names.push(name);
    row.defaults.push(defaultText(s));
  }
  return rows;
}

/** docs/operations.md's configuration table; a row's defaults are said once when they are all the same. */
export function configTableMarkdown(): string {
  const lines = configTableRows().map(({ names, defaults, meaning }) => {
    const shown = new Set(defaults).size === 1 ? defaults[0]! : defaults.join(', ');
    return `| ${names.map((n) => `\`${n}\``).join(', ')} | ${shown} | ${meaning} |`;
  });
  return ['| variable | default | meaning |', '| --- | --- | --- |', ...lines].join('\n');
}

/** docs/operations.md's table of the secrets each process holds (runtime/secrets-by-role.ts). */
export function secretsTableMarkdown(): string {
  const rows: [string, SecretNeeds][] = [
    ['API (`node api/server.ts`)', API_SECRETS],
    ...WORKER_ROLE_NAMES.map((r): [string, SecretNeeds] => [`worker, role \`${r}\` (\`WORKER_ROLES\`)`, workerSecrets([r])]),
    ['`vouch temporal-setup`', TEMPORAL_SETUP_SECRETS],
  ];
  const names = (list: readonly string[]) => list.map((n) => `\`${n}\``).join(', ') || '—';
  return [
    '| process | needs | may have (it starts without them) |',
    '| --- | --- | --- |',
    ...rows.map(([who, needs]) => `| ${who} | ${names(needs.required)} | ${names(needs.optional)} |`),
  ].join('\n');
}

if (import.meta.main) process.stdout.write(`${process.argv[2] === 'secrets' ? secretsTableMarkdown() : configTableMarkdown()}\n`);
