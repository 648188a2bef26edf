// Evidence bundles (issue 21, item 4), end to end on one stack: a person decided by universal KYC,
// exported by the admin CLI run as a child process, checked by `vouch evidence verify` and by
// openssl alone; one changed byte of bundle.json, or of a bundled file, fails both; an unknown
// entity exits 2; a sealed entity is still exported; the export is in the audit log with the
// operator as actor; bytes in the file store that no longer match their SHA-256 are not bundled.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DECISION_RULES } from '../../domain/digests.ts';
import { OPENSSL_CHECK, OPENSSL_FILES_CHECK } from '../../domain/evidence.ts';
import { generateKeyRing } from '../../runtime/signing-keys.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startStack, type Stack } from '../helpers/stack.ts';
import { documentsForm, FILES } from '../helpers/ukyc.ts';
import { decidedPerson as decidedPersonIn, eventually, subscribe } from '../helpers/world.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** What a KYB submission needs of the business (domain/kyb-manifest.ts). */
const REQUIRED_KYB = ['ukyb-certificate-of-incorporation', 'ukyb-proof-of-address', 'ukyb-register-of-shareholders'];
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

type Run = { code: number; stdout: string; stderr: string };
const run = (file: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}) =>
  new Promise<Run>((resolve) =>
    execFile(file, args, { cwd: options.cwd ?? root, env: options.env ?? process.env }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );

describe('evidence bundles', () => {
  let stack: Stack;
  let receiver: Receiver;
  let key: string;
  let businessId: string;
  let person: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let publicKeyPem: string;
  const vouch = (...args: string[]) => run(process.execPath, ['cli/vouch.ts', ...args, '--as', 'officer-jane'], { env });
  const openssl = (bundle: string) => run('sh', ['-c', OPENSSL_CHECK], { cwd: bundle });
  /** A copy of a bundle, to change. */
  const copyOf = (bundle: string) => {
    const copy = path.join(dir, `copy-${randomUUID()}`);
    cpSync(bundle, copy, { recursive: true });
    writeFileSync(path.join(copy, 'evidence-key.pem'), publicKeyPem);
    return copy;
  };
  const flipByte = (file: string, at: number) => {
    const bytes = readFileSync(file);
    bytes[at] = bytes[at]! ^ 0x01;
    writeFileSync(file, bytes);
  };

  const decidedPerson = () => decidedPersonIn(stack, key, { externalId: `evidence-${randomUUID()}` });

  /** Waits until the entity has `n` decisions kept. */
  const decisionsKept = async (entityId: string, n: number) => {
    await eventually(`${n} decisions kept`, async () => (await stack.db.query('SELECT 1 FROM record_decisions WHERE entity_id = $1', [entityId])).length >= n, {
      everyMs: 100,
    });
  };
  const review = async (entityId: string, body: object, memberId?: string) => {
    const res = await stack.request('POST', `/sandbox/entity/${entityId}/kyc/complete${memberId ? `?memberId=${memberId}` : ''}`, { key, json: body });
    assert.equal(res.status, 202, res.text);
  };

  const exported = async (entityId: string, ...extra: string[]) => {
    const out = path.join(dir, `bundle-${randomUUID()}`);
    const r = await vouch('evidence', 'export', '--entity', entityId, '--out', out, ...extra);
    return { r, out, output: r.stdout ? JSON.parse(r.stdout) : {} };
  };

  before(async () => {
    stack = await startStack({ workers: true, providerCallbacks: true, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true' } });
    receiver = await startReceiver();
    ({ apiKey: key, businessId } = await stack.newBusiness({ name: 'Evidence' }));
    await subscribe(stack, key, receiver.url, ['account_status_change', 'kyb_status_change']);
    dir = mkdtempSync(path.join(tmpdir(), 'vouch-evidence-'));
    env = {
      ...process.env,
      DATABASE_URL: stack.config.database.url,
      DATA_DIR: path.join(dir, 'data'),
      FILE_STORE_DIR: stack.config.files.dir,
      VOUCH_ENVIRONMENT: 'sandbox',
      EVIDENCE_SIGNING_KEYS: '',
      EVIDENCE_SIGNING_KEYS_FILE: '',
    };
    const keys = await vouch('evidence-keys', 'generate');
    assert.equal(keys.code, 0, keys.stderr);
    const ring = JSON.parse(keys.stdout);
    assert.equal(ring.file, path.join(dir, 'data', 'evidence-signing-keys.json'));
    assert.equal((statSync(ring.file).mode & 0o777).toString(8), '600');
    assert.ok(!keys.stdout.includes('PRIVATE'), 'no private key printed');
    publicKeyPem = ring.keys[0].publicKeyPem;
    person = await decidedPerson();
  });
  after(async () => {
    await receiver.close();
    await stack.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exports a decided person: verified data, the decision with its provenance, files with SHA-256, audit entries; private files', async () => {
    const { r, out, output } = await exported(person);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readdirSync(out).sort(), ['bundle.json', 'bundle.sig']);
    assert.equal((statSync(out).mode & 0o777).toString(8), '700');
    for (const f of ['bundle.json', 'bundle.sig']) assert.equal((statSync(path.join(out, f)).mode & 0o777).toString(8), '600', f);
    assert.equal(statSync(path.join(out, 'bundle.sig')).size, 64);
    assert.equal(output.bundleSha256, sha256(readFileSync(path.join(out, 'bundle.json'))));
    // personal data goes into the bundle, never to the terminal
    for (const s of ['Zoë', 'PA1234567', 'Grafton']) assert.ok(!r.stdout.includes(s) && !r.stderr.includes(s), s);
    const bundle = JSON.parse(readFileSync(path.join(out, 'bundle.json'), 'utf8'));
    assert.equal(bundle.format, 'vouch-evidence/2');
    assert.equal(bundle.signedWith.keyId, output.keyId);
    assert.deepEqual(bundle.exportedBy, { type: 'operator', id: 'officer-jane' });
    assert.deepEqual([bundle.entity.id, bundle.entity.businessId, bundle.entity.sealedAt], [person, businessId, null]);
    assert.deepEqual([bundle.verifiedPersons[0].person.firstName, bundle.verifiedPersons[0].person.idDocument.number], ['Zoë', 'PA1234567']);
    const [decision] = bundle.decisions.kyc;
    assert.deepEqual([decision.decision, decision.source, decision.rejectLabels], ['APPROVED', 'universal-kyc', []]);
    assert.equal(decision.sourceRef, bundle.decisions.universalKyc[0].id);
    assert.ok(bundle.events.some((e: any) => e.eventType === 'account_status_change' && e.payload.data?.status === 'APPROVED'));
    assert.deepEqual(
      bundle.files.map((f: any) => [f.fileName, f.sha256, f.size, f.bytes]),
      [['passport.pdf', sha256(FILES.pdf), FILES.pdf.length, null]],
    );
    assert.ok(!JSON.stringify(bundle).includes('storageKey'), 'the file store key stays inside');
    assert.ok(bundle.audit.chainHead.seq >= 1);
    for (const part of Object.keys(bundle).filter((k) => !['format', 'manifest', 'exportedAt', 'exportedBy', 'signedWith', 'withFiles'].includes(k)))
      assert.ok(bundle.manifest.parts[part], `the manifest says what ${part} is`);
    assert.match(bundle.manifest.signature, /openssl pkeyutl -verify/);
  });

  it('keeps every decision: reviewed RED, then GREEN, the bundle holds both, each tied to its own entry with its rules and data', async () => {
    const res = await stack.request('POST', '/entity', { key, json: { externalId: `evidence-${randomUUID()}`, type: 'INDIVIDUAL' } });
    assert.equal(res.status, 201, res.text);
    const p = res.body.id as string;
    await review(p, { reviewAnswer: 'RED', rejectLabels: ['BAD_PROOF_OF_IDENTITY'], reviewRejectType: 'RETRY', moderationComment: 'Blurred' });
    await decisionsKept(p, 1);
    await review(p, { reviewAnswer: 'GREEN' });
    await decisionsKept(p, 2);
    const { r, out } = await exported(p);
    assert.equal(r.code, 0, r.stderr);
    const bundle = JSON.parse(readFileSync(path.join(out, 'bundle.json'), 'utf8'));
    assert.deepEqual(
      bundle.decisions.kyc.map((d: any) => [d.decision, d.rejectLabels, d.rules]),
      [
        ['REJECTED', ['BAD_PROOF_OF_IDENTITY'], DECISION_RULES['hosted-sdk']],
        ['APPROVED', [], DECISION_RULES['hosted-sdk']],
      ],
      'the RED decision is kept beside the GREEN one that followed it',
    );
    for (const d of bundle.decisions.kyc) {
      assert.ok(d.basis.personDataId, 'each names the person data it rested on');
      assert.ok(bundle.verifiedPersons.some((v: any) => v.id === d.basis.personDataId));
    }
    const verified = JSON.parse((await vouch('evidence', 'verify', out)).stdout);
    assert.deepEqual([verified.valid, verified.checked.decisionsTiedToAudit], [true, 2], JSON.stringify(verified.failures));
    assert.ok(verified.checked.digestsChecked >= 2, 'its externalId and data, by their keyed digests, under the key the bundle carries');
    // the earlier decision can no longer be told otherwise: its labels changed in the bundle fail the check
    const changed = copyOf(out);
    const text = readFileSync(path.join(changed, 'bundle.json'), 'utf8');
    writeFileSync(path.join(changed, 'bundle.json'), text.replace('"BAD_PROOF_OF_IDENTITY"', '"FORGERY"'));
    const untied = JSON.parse((await vouch('evidence', 'verify', changed)).stdout);
    assert.ok(
      untied.failures.some((f: any) => f.part === 'decision' && f.detail.startsWith(`KYC decision ${bundle.decisions.kyc[0].id}`)),
      JSON.stringify(untied.failures),
    );
  });

  it("a business's bundle carries its owners' decisions and the data they rested on, tied to the KYB decision", async () => {
    const res = await stack.request('POST', '/entity', { key, json: { externalId: `evidence-firm-${randomUUID()}`, type: 'BUSINESS' } });
    assert.equal(res.status, 201, res.text);
    const firm = res.body.id as string;
    const created = await stack.request('POST', '/ukyb', {
      key,
      json: {
        entityId: firm,
        business: {
          legalName: 'Evidence Trading Ltd',
          registrationNumber: '12345678',
          country: 'GBR',
          incorporationDate: '2015-06-01',
          address: { country: 'GBR', postCode: 'EC1A 1BB', street: 'King Street', town: 'London' },
        },
        ubos: [{ externalId: `owner-${randomUUID()}`, firstName: 'Ada', lastName: 'Owner', dob: '1980-12-10', nationality: 'GBR', ownershipPercentage: 40 }],
      },
    });
    assert.equal(created.status, 201, created.text);
    const owner = created.body.ubos[0].entityId as string;
    const documents = (fields: Record<string, string>) =>
      stack.request('POST', '/ukyb/documents', { key, form: documentsForm(fields, [{ bytes: FILES.pdf, name: 'doc.pdf' }]) });
    for (const slug of REQUIRED_KYB) assert.equal((await documents({ entityId: firm, requirementSlug: slug })).status, 201);
    assert.equal((await documents({ entityId: firm, memberId: owner, documentType: 'PASSPORT' })).status, 201);
    const submitted = await stack.request('POST', '/ukyb/submit', { key, json: { entityId: firm } });
    assert.equal(submitted.status, 202, submitted.text);
    await review(firm, { reviewAnswer: 'GREEN' }, owner);
    await decisionsKept(firm, 1);
    const { r, out } = await exported(firm);
    assert.equal(r.code, 0, r.stderr);
    const bundle = JSON.parse(readFileSync(path.join(out, 'bundle.json'), 'utf8'));
    const [kyb] = bundle.decisions.kyb;
    assert.equal(kyb.decision, 'APPROVED');
    const [o] = bundle.owners;
    assert.equal(o.entityId, owner);
    assert.deepEqual(
      kyb.basis.owners.map((x: any) => x.decisionId),
      o.decisions.map((d: any) => d.id),
      "the KYB decision names the owner's decision, which the bundle carries",
    );
    assert.ok(
      o.verifiedPersons.some((v: any) => v.id === o.decisions[0].basis.personDataId),
      'with the data it rested on',
    );
    assert.ok(kyb.basis.documents.length >= REQUIRED_KYB.length + 1, "the business's and the owner's documents by SHA-256");
    const verified = JSON.parse((await vouch('evidence', 'verify', out)).stdout);
    assert.deepEqual([verified.valid, verified.checked.decisionsTiedToAudit], [true, 2], JSON.stringify(verified.failures));
  });

  it('verifies with vouch evidence verify and with openssl; one changed byte of bundle.json fails both', async () => {
    const { r, out } = await exported(person);
    assert.equal(r.code, 0, r.stderr);
    const good = copyOf(out);
    const verified = await vouch('evidence', 'verify', good);
    assert.equal(verified.code, 0, verified.stdout + verified.stderr);
    assert.deepEqual([JSON.parse(verified.stdout).valid, JSON.parse(verified.stdout).failures], [true, []]);
    const ok = await openssl(good);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /Signature Verified Successfully/);

    const changed = copyOf(out);
    const bytes = readFileSync(path.join(changed, 'bundle.json'), 'utf8');
    flipByte(path.join(changed, 'bundle.json'), bytes.indexOf('APPROVED')); // APPROVED → @PPROVED
    const refused = await vouch('evidence', 'verify', changed);
    assert.equal(refused.code, 1, refused.stderr);
    const answer = JSON.parse(refused.stdout);
    assert.equal(answer.valid, false);
    assert.ok(
      answer.failures.some((f: any) => f.part === 'signature' && /changed since it was signed/.test(f.detail)),
      refused.stdout,
    );
    const bad = await openssl(changed);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stdout + bad.stderr, /Signature Verification Failure/);

    // the same signature checked against a ring without its key
    const other = await run(process.execPath, ['cli/vouch.ts', 'evidence', 'verify', good], {
      env: { ...env, EVIDENCE_SIGNING_KEYS: JSON.stringify(generateKeyRing('evidence', 'sandbox')) },
    });
    assert.equal(other.code, 1);
    assert.match(JSON.parse(other.stdout).failures[0].detail, /is not in the evidence ring/);
  });

  it('--with-files: the bytes, checked against their SHA-256; one changed byte of a file fails vouch verify and the openssl digest', async () => {
    const { r, out, output } = await exported(person, '--with-files');
    assert.equal(r.code, 0, r.stderr);
    const bundle = JSON.parse(readFileSync(path.join(out, 'bundle.json'), 'utf8'));
    const [file] = bundle.files;
    assert.equal(file.bytes, `files/${file.id}`);
    assert.deepEqual(readFileSync(path.join(out, file.bytes)), FILES.pdf);
    assert.equal((statSync(path.join(out, file.bytes)).mode & 0o777).toString(8), '600');
    assert.equal(output.filesIncluded, 1);
    const filesCheck = (bundleDir: string) => run('sh', ['-c', OPENSSL_FILES_CHECK], { cwd: bundleDir });
    const good = copyOf(out);
    assert.equal((await vouch('evidence', 'verify', good)).code, 0);
    assert.equal((await openssl(good)).code, 0);
    assert.deepEqual(await filesCheck(good), { code: 0, stdout: `ok ${file.bytes}\n`, stderr: '' });

    const changed = copyOf(out);
    flipByte(path.join(changed, file.bytes), 3);
    const refused = await vouch('evidence', 'verify', changed);
    assert.equal(refused.code, 1);
    assert.deepEqual(
      JSON.parse(refused.stdout).failures.map((f: any) => f.part),
      ['file'],
    );
    assert.match(JSON.parse(refused.stdout).failures[0].detail, new RegExp(`files/${file.id}: SHA-256`));
    // openssl: bundle.json still verifies, and the file's digest no longer matches the SHA-256 it records
    assert.equal((await openssl(changed)).code, 0);
    assert.deepEqual(await filesCheck(changed), { code: 1, stdout: `CHANGED ${file.bytes}\n`, stderr: '' });
  });

  it('checks the audit entries: the first export is in the second bundle, hashed and in order; a changed entry is named', async () => {
    const first = await exported(person);
    assert.equal(first.r.code, 0, first.r.stderr);
    const [logged] = await stack.db.query(
      "SELECT actor_type, actor_id, details, entity_id FROM audit_log WHERE action = 'evidence.exported' AND details LIKE $1",
      [`%${first.output.bundleSha256}%`],
    );
    assert.ok(logged, 'evidence.exported recorded');
    assert.deepEqual([logged.actor_type, logged.actor_id, logged.entity_id], ['operator', 'officer-jane', person]);
    assert.equal(JSON.parse(String(logged.details)).bundleSha256, first.output.bundleSha256);

    const second = await exported(person);
    const bundleFile = path.join(second.out, 'bundle.json');
    const bundle = JSON.parse(readFileSync(bundleFile, 'utf8'));
    const entry = bundle.audit.entries.find((e: any) => e.action === 'evidence.exported' && e.details.bundleSha256 === first.output.bundleSha256);
    assert.ok(entry, "the first export is among the second bundle's audit entries");
    const ok = JSON.parse((await vouch('evidence', 'verify', second.out)).stdout);
    assert.equal(ok.valid, true);
    assert.equal(ok.checked.auditEntries, bundle.audit.entries.length);

    const changed = copyOf(second.out);
    const text = readFileSync(path.join(changed, 'bundle.json'), 'utf8');
    writeFileSync(path.join(changed, 'bundle.json'), text.replace(`"${entry.details.bundleSha256}"`, `"${'0'.repeat(64)}"`));
    const refused = await vouch('evidence', 'verify', changed);
    assert.equal(refused.code, 1);
    const parts = JSON.parse(refused.stdout).failures.map((f: any) => `${f.part}: ${f.detail}`);
    assert.ok(
      parts.some((p: string) => p.startsWith('signature:')),
      parts.join('\n'),
    );
    assert.ok(parts.includes(`audit: audit entry seq ${entry.seq} (evidence.exported): its fields no longer match its hash`), parts.join('\n'));
    assert.notEqual((await openssl(changed)).code, 0);

    // the decision as the bundle states it is the one its decision.recorded entry names (by its nonce)
    assert.equal(ok.checked.decisionsTiedToAudit, 1);
    const [decision] = bundle.decisions.kyc;
    const otherDecision = copyOf(second.out);
    writeFileSync(path.join(otherDecision, 'bundle.json'), text.replace(decision.decisionNonce, 'f'.repeat(64)));
    const untied = JSON.parse((await vouch('evidence', 'verify', otherDecision)).stdout);
    assert.ok(
      untied.failures.some((f: any) => f.part === 'decision' && f.detail.startsWith(`KYC decision ${decision.id}`)),
      JSON.stringify(untied.failures),
    );
  });

  it('an unknown entity, or no entity id, exits 2 and writes nothing', async () => {
    const unknown = await exported(randomUUID());
    assert.equal(unknown.r.code, 2, unknown.r.stderr);
    assert.match(unknown.r.stderr, /no entity/);
    assert.throws(() => statSync(unknown.out), /ENOENT/);
    assert.equal((await vouch('evidence', 'export', '--entity', 'not-an-id')).code, 2);
    assert.equal((await vouch('evidence', 'export')).code, 2);
  });

  it('exports a sealed entity (deleted under a retention policy): gone from the API, still in evidence', async () => {
    const sealed = await decidedPerson();
    const policy = await vouch('retention', 'set', '--business', businessId, '--years', '5');
    assert.equal(policy.code, 0, policy.stderr);
    assert.equal((await stack.request('DELETE', `/entity/${sealed}`, { key })).status, 204);
    assert.equal((await stack.request('GET', `/entity/${sealed}`, { key })).status, 404);
    const { r, out } = await exported(sealed);
    assert.equal(r.code, 0, r.stderr);
    const bundle = JSON.parse(readFileSync(path.join(out, 'bundle.json'), 'utf8'));
    assert.ok(bundle.entity.sealedAt && bundle.entity.purgeAfter, 'sealed, with its purge date');
    assert.equal(bundle.business.retentionYears, 5);
    assert.equal(bundle.decisions.kyc[0].decision, 'APPROVED');
    assert.equal((await vouch('evidence', 'verify', out)).code, 0);
  });

  it('--with-files: bytes in the file store that no longer match their SHA-256 are not bundled; the bundle says so, exit 1', async () => {
    const victim = await decidedPerson();
    const [row] = await stack.db.query('SELECT id, storage_key FROM files WHERE entity_id = $1', [victim]);
    writeFileSync(path.join(stack.config.files.dir, ...String(row!.storage_key).split('/')), Buffer.from('not the passport'));
    const { r, out, output } = await exported(victim, '--with-files');
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(
      output.fileProblems.map((p: any) => p.fileId),
      [row!.id],
    );
    const bundle = JSON.parse(readFileSync(path.join(out, 'bundle.json'), 'utf8'));
    assert.equal(bundle.files[0].bytes, null);
    assert.match(bundle.files[0].bytesProblem, /not the recorded one/);
    assert.deepEqual(readdirSync(path.join(out, 'files')), []);
    assert.equal((await vouch('evidence', 'verify', out)).code, 0, 'what the bundle says is signed and true');
  });
});
