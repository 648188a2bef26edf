// Admin CLI: `npm run vouch -- business create --name NAME [--bin-sponsored]`, `npm run vouch -- key create --business ID`.
// Prints JSON on stdout. Uses DATABASE_URL, else the embedded database under DATA_DIR (the one
// `npm start` serves, when it runs).
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { COMMANDS } from './commands/index.ts';
import { CliText, UsageError } from './command.ts';
import { actAs } from '../store/audit-actor.ts';
import { checkpointPublicKeyOf } from '../domain/audit-checkpoint.ts';
import { evidencePublicKeyOf } from '../domain/evidence.ts';
import { payloadPublicKeyOf } from '../domain/signed-payload.ts';
import { standardWebhookPublicKeyOf } from '../domain/standard-webhooks.ts';
import { publicKeyOf, type SigningKey } from '../domain/webhook-signature.ts';
import { loadProcessConfig, type Config } from '../runtime/config.ts';
import { privateFiles } from '../runtime/process.ts';
import { codecKeysFile, loadCodecKeys, rotateCodecKeys } from '../runtime/codec-keys.ts';
import { registerSearchAttributes } from '../temporal/search-attributes.ts';
import { keyRingFile, loadKeyRing, rotateKeyRing, type RingKind } from '../runtime/signing-keys.ts';
import { connectClient } from '../temporal/connection.ts';
import { migrateAsOwner, openDatabase } from '../runtime/database.ts';
import { createBusiness, findBusiness, insertApiKey, revokeApiKey } from '../store/businesses.ts';

const usage = `usage:
  vouch business create --name NAME [--bin-sponsored]   create a business and its first API key
  vouch key create --business BUSINESS_ID               add an API key to a business
  vouch key revoke --business BUSINESS_ID --key KEY_ID  revoke an API key
  vouch webhook-keys generate                           make the webhook signing key ring (WEBHOOK_SIGNING_KEYS_FILE)
                                                        unless it exists, and print its public keys
  vouch standard-webhook-keys generate                  the same for the Standard Webhooks (webhook-signature) ring (STANDARD_WEBHOOK_KEYS_FILE)
  vouch signed-payload-keys generate                    the same for the signed-payload ring (SIGNED_PAYLOAD_KEYS_FILE)
  vouch evidence-keys generate                          the same for the evidence ring (EVIDENCE_SIGNING_KEYS_FILE): publish these keys
  vouch audit-checkpoint-keys generate                  the same for the audit checkpoints' ring (AUDIT_CHECKPOINT_KEYS_FILE)
  vouch webhook-keys rotate                             add the ring's next generation (valid from 30 days before the last key
                                                        ends, for 13 months); prints it. Also standard-webhook-keys rotate and
                                                        signed-payload-keys rotate, evidence-keys rotate, audit-checkpoint-keys rotate.
                                                        Restart the API and workers afterwards.
                                                        A ring whose next generation is already there is left as it is (--force)
  vouch temporal-setup                                  register the search attributes in TEMPORAL_NAMESPACE (once per cluster)
  vouch db migrate                                      apply the pending migrations as the schema's owner (DATABASE_MIGRATION_URL, else
                                                        DATABASE_URL) and grant the service's role (DATABASE_SERVICE_ROLE, else
                                                        DATABASE_URL's user) its privileges: the deployment's migration job
  vouch payload-keys generate                           make the payload codec key ring (PAYLOAD_CODEC_KEYS_FILE) unless it exists; prints key ids
  vouch payload-keys rotate                             put a new payload key first (it encrypts from now on; old keys still decrypt)
${COMMANDS.map((c) => c.usage).join('\n')}
Every command acts as --as NAME (else VOUCH_OPERATOR, else your login name) in the audit log.
API keys are printed once and stored only as hashes.`;

const ROTATE: Record<string, { kind: RingKind; publish: (k: SigningKey) => unknown }> = {
  'webhook-keys rotate': { kind: 'webhook', publish: publicKeyOf },
  'standard-webhook-keys rotate': { kind: 'standard-webhook', publish: standardWebhookPublicKeyOf },
  'signed-payload-keys rotate': { kind: 'signed-payload', publish: payloadPublicKeyOf },
  'evidence-keys rotate': { kind: 'evidence', publish: evidencePublicKeyOf },
  'audit-checkpoint-keys rotate': { kind: 'audit-checkpoint', publish: checkpointPublicKeyOf },
};

import { UUID } from '../domain/ids.ts';

const OPTIONS = {
  name: { type: 'string' },
  'bin-sponsored': { type: 'boolean', default: false },
  business: { type: 'string' },
  key: { type: 'string' },
  force: { type: 'boolean', default: false },
  as: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function main(argv: string[]): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    // the commands' own options beside these (their names must not clash: test/unit/cli.test.ts)
    options: { ...(Object.assign({}, ...COMMANDS.map((c) => c.options ?? {})) as object), ...OPTIONS },
  });
  const command = positionals.join(' ');
  if (values.help || !command) throw new UsageError(usage);
  const config = loadProcessConfig(); // an operator's command names its environment: keys carry it
  privateFiles(config.dataDir); // key rings and the embedded database it may make are its own
  const who = String(values.as ?? process.env.VOUCH_OPERATOR ?? userInfo().username);
  const extra = COMMANDS.find((c) => command === c.name || command.startsWith(`${c.name} `));
  if (extra) {
    const args = positionals.slice(extra.name.split(' ').length);
    return actAs({ type: extra.actsAs, id: who }, null, () => extra.run({ args, values: values as Record<string, string | boolean | undefined>, config }));
  }
  return actAs({ type: 'admin_cli', id: who }, null, () => administer(command, values, config));
}

async function administer(
  command: string,
  values: {
    name?: string | undefined;
    'bin-sponsored'?: boolean | undefined;
    business?: string | undefined;
    key?: string | undefined;
    force?: boolean | undefined;
  },
  config: Config,
): Promise<unknown> {
  if (command === 'webhook-keys generate') {
    const ring = await loadKeyRing(config, 'webhook', { generateMissing: true, ignoreVariable: true });
    return { file: keyRingFile(config, 'webhook'), keys: ring.map(publicKeyOf) };
  }
  if (command === 'standard-webhook-keys generate') {
    const ring = await loadKeyRing(config, 'standard-webhook', { generateMissing: true, ignoreVariable: true });
    return { file: keyRingFile(config, 'standard-webhook'), keys: ring.map(standardWebhookPublicKeyOf) };
  }
  if (command === 'signed-payload-keys generate') {
    const ring = await loadKeyRing(config, 'signed-payload', { generateMissing: true, ignoreVariable: true });
    return { file: keyRingFile(config, 'signed-payload'), keys: ring.map(payloadPublicKeyOf) };
  }
  if (command === 'evidence-keys generate') {
    const ring = await loadKeyRing(config, 'evidence', { generateMissing: true, ignoreVariable: true });
    return { file: keyRingFile(config, 'evidence'), keys: ring.map(evidencePublicKeyOf) };
  }
  if (command === 'audit-checkpoint-keys generate') {
    const ring = await loadKeyRing(config, 'audit-checkpoint', { generateMissing: true, ignoreVariable: true });
    return { file: keyRingFile(config, 'audit-checkpoint'), keys: ring.map(checkpointPublicKeyOf) };
  }
  const rotated = ROTATE[command];
  if (rotated) {
    const { file, added, pending } = await rotateKeyRing(config, rotated.kind, new Date(), undefined, { force: values.force! });
    if (pending)
      return {
        file,
        added: [],
        note: 'the ring already holds its next generation (not started yet); nothing added (--force adds another)',
        next: pending.map(rotated.publish),
      };
    return { file, added: added.map(rotated.publish) };
  }
  if (command === 'payload-keys generate') {
    const ring = await loadCodecKeys(config, { generateMissing: true }); // makes the file when there is none
    return { file: codecKeysFile(config), keyIds: ring.map((k) => k.id) };
  }
  if (command === 'payload-keys rotate') return rotateCodecKeys(config);
  if (command === 'db migrate') {
    if (!config.database.migrationUrl && !config.database.url)
      throw new UsageError('set DATABASE_MIGRATION_URL (or DATABASE_URL): the embedded database migrates itself');
    return migrateAsOwner(config);
  }
  if (command === 'temporal-setup') {
    const client = await connectClient(config);
    try {
      return { namespace: config.temporal.namespace, ...(await registerSearchAttributes(client, config.temporal.namespace)) };
    } finally {
      await client.connection.close();
    }
  }
  const validate = () => {
    if (command === 'business create') {
      const name = values.name?.trim();
      if (!name || name.length > 200) throw new UsageError('--name is required (1 to 200 characters)');
      return;
    }
    if (command === 'key create' || command === 'key revoke') {
      if (!values.business || !UUID.test(values.business)) throw new UsageError('--business must be a business id (UUID)');
      if (command === 'key revoke' && (!values.key || !UUID.test(values.key))) throw new UsageError('--key must be a key id (UUID)');
      return;
    }
    throw new UsageError(`unknown command "${command}"\n${usage}`);
  };
  validate();
  const database = await openDatabase(config);
  try {
    const db = database.db;
    if (command === 'business create') {
      const { business, apiKey, keyId } = await createBusiness(db, {
        name: values.name!.trim(),
        binSponsored: values['bin-sponsored']!,
        environment: config.environment,
      });
      return { businessId: business.id, name: business.name, binSponsored: business.binSponsored, keyId, apiKey };
    }
    const business = await findBusiness(db, values.business!);
    if (!business) throw new UsageError(`no business ${values.business}`);
    if (command === 'key create') {
      const { apiKey, keyId } = await insertApiKey(db, business.id, config.environment);
      return { businessId: business.id, keyId, apiKey };
    }
    if (!(await revokeApiKey(db, business.id, values.key!))) throw new UsageError(`no active key ${values.key} for business ${business.id}`);
    return { businessId: business.id, keyId: values.key, revoked: true };
  } finally {
    await database.close();
  }
}

try {
  const result = await main(process.argv.slice(2));
  process.stdout.write(result instanceof CliText ? result.text : `${JSON.stringify(result, null, 2)}\n`);
} catch (err) {
  process.stderr.write(`vouch: ${err instanceof UsageError || err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
}
