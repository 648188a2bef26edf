// Every rule of the canonical KYC payload (interface 2.7), each with a passing and a failing case,
// and the failing field's path; the decision's reading of the payload; the sandbox's test person.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decide } from '../../domain/reliance.ts';
import { checkCanonicalKyc, identityOfCanonical, incompleteSubmission, storedCanonicalKyc } from '../../domain/universal-kyc.ts';
import { canonicalPayload } from '../helpers/ukyc.ts';

const NOW = new Date();
const day = (offsetDays: number) => new Date(NOW.getTime() + offsetDays * 86_400_000).toISOString().slice(0, 10);
const yearsAgo = (years: number, extraDays = 0) => {
  const d = new Date(NOW);
  d.setUTCFullYear(d.getUTCFullYear() - years);
  return new Date(d.getTime() + extraDays * 86_400_000).toISOString().slice(0, 10);
};
const check = (change: (p: any) => void) => checkCanonicalKyc(JSON.stringify(canonicalPayload(change)), NOW);

/** [rule, a change that passes, a change that fails, the failing parameter] */
const RULES: [string, (p: any) => void, (p: any) => void, string][] = [
  ['externalUserId required', (p) => (p.externalUserId = 'u'), (p) => delete p.externalUserId, 'externalUserId'],
  ['externalUserId max 255', (p) => (p.externalUserId = 'u'.repeat(255)), (p) => (p.externalUserId = 'u'.repeat(256)), 'externalUserId'],
  ['externalUserId not whitespace', (p) => (p.externalUserId = ' u '), (p) => (p.externalUserId = '   '), 'externalUserId'],
  [
    'cardProcessorPublicToken optional, 9 digits',
    (p) => (p.cardProcessorPublicToken = '123456789'),
    (p) => (p.cardProcessorPublicToken = '12345'),
    'cardProcessorPublicToken',
  ],
  ['provider.name one of three', (p) => (p.provider.name = 'veriff'), (p) => (p.provider.name = 'acme'), 'provider.name'],
  ['provider.name required', (p) => (p.provider.name = 'sumsub'), (p) => delete p.provider.name, 'provider.name'],
  ['provider.status values', (p) => (p.provider.status = 'WARNING'), (p) => (p.provider.status = 'GREEN'), 'provider.status'],
  ['provider.status required', (p) => (p.provider.status = 'NOT_EXECUTED'), (p) => delete p.provider.status, 'provider.status'],
  ['provider.data array of objects', (p) => (p.provider.data = []), (p) => (p.provider.data = 'none'), 'provider.data'],
  ['provider.data items are objects', (p) => (p.provider.data = [{}]), (p) => (p.provider.data = [1]), 'provider.data[0]'],
  ['identity.firstName Latin', (p) => (p.identity.firstName = 'Łukasz'), (p) => (p.identity.firstName = '李'), 'identity.firstName'],
  ['identity.firstName required', (p) => (p.identity.firstName = 'A'), (p) => delete p.identity.firstName, 'identity.firstName'],
  ['identity.firstName max 100', (p) => (p.identity.firstName = 'a'.repeat(100)), (p) => (p.identity.firstName = 'a'.repeat(101)), 'identity.firstName'],
  ['identity.firstName not whitespace', (p) => (p.identity.firstName = 'Jo Ann'), (p) => (p.identity.firstName = ' '), 'identity.firstName'],
  ['identity.middleName Latin, optional', (p) => delete p.identity.middleName, (p) => (p.identity.middleName = 'Αλέξης'), 'identity.middleName'],
  ['identity.lastName Latin, optional', (p) => delete p.identity.lastName, (p) => (p.identity.lastName = 'Smith1'), 'identity.lastName'],
  ['identity.lastName max 100', (p) => (p.identity.lastName = 'b'.repeat(100)), (p) => (p.identity.lastName = 'b'.repeat(101)), 'identity.lastName'],
  ['identity.fullName required', (p) => (p.identity.fullName = 'Ana Silva'), (p) => delete p.identity.fullName, 'identity.fullName'],
  ['identity.fullName Latin only', (p) => (p.identity.fullName = 'Zoë Ångström-Núñez'), (p) => (p.identity.fullName = 'Анна Петрова'), 'identity.fullName'],
  ['identity.fullName max 200', (p) => (p.identity.fullName = 'c'.repeat(200)), (p) => (p.identity.fullName = 'c'.repeat(201)), 'identity.fullName'],
  ['identity.dob a calendar date', (p) => (p.identity.dob = '1992-02-29'), (p) => (p.identity.dob = '1993-02-29'), 'identity.dob'],
  ['identity.dob format', (p) => (p.identity.dob = '1990-01-31'), (p) => (p.identity.dob = '31/01/1990'), 'identity.dob'],
  ['identity.dob aged 18 or more', (p) => (p.identity.dob = yearsAgo(18)), (p) => (p.identity.dob = yearsAgo(18, 1)), 'identity.dob'],
  ['identity.dob aged 150 or less', (p) => (p.identity.dob = yearsAgo(150, 1)), (p) => (p.identity.dob = yearsAgo(151)), 'identity.dob'],
  ['identity.nationality alpha-3', (p) => (p.identity.nationality = 'DEU'), (p) => (p.identity.nationality = 'DE'), 'identity.nationality'],
  ['identity.nationality required', (p) => (p.identity.nationality = 'FRA'), (p) => delete p.identity.nationality, 'identity.nationality'],
  ['identity.nationality a real country', (p) => (p.identity.nationality = 'PRT'), (p) => (p.identity.nationality = 'ABC'), 'identity.nationality'],
  ['document at least one', (p) => (p.document = [p.document[0]]), (p) => (p.document = []), 'document'],
  ['document required', (p) => (p.document = [p.document[0]]), (p) => delete p.document, 'document'],
  ['document[].type values', (p) => (p.document[0].type = 'RESIDENCE_PERMIT'), (p) => (p.document[0].type = 'VISA'), 'document[0].type'],
  ['document[].number max 50', (p) => (p.document[0].number = 'N'.repeat(50)), (p) => (p.document[0].number = 'N'.repeat(51)), 'document[0].number'],
  ['document[].number not whitespace', (p) => (p.document[0].number = 'X 1'), (p) => (p.document[0].number = '  '), 'document[0].number'],
  ['document[].country alpha-3', (p) => (p.document[0].country = 'FRA'), (p) => (p.document[0].country = 'fra'), 'document[0].country'],
  [
    'document[].issuingDate not in the future',
    (p) => (p.document[0].issuingDate = day(0)),
    (p) => (p.document[0].issuingDate = day(2)),
    'document[0].issuingDate',
  ],
  ['document[].issuingDate required', (p) => (p.document[0].issuingDate = day(-1)), (p) => delete p.document[0].issuingDate, 'document[0].issuingDate'],
  [
    'document[].expiryDate optional, not expired',
    (p) => delete p.document[0].expiryDate,
    (p) => (p.document[0].expiryDate = day(-2)),
    'document[0].expiryDate',
  ],
  [
    'document[].expiryDate after issuingDate',
    (p) => ((p.document[0].issuingDate = day(-10)), (p.document[0].expiryDate = day(10))),
    (p) => ((p.document[0].issuingDate = day(0)), (p.document[0].expiryDate = day(0))),
    'document[0].expiryDate',
  ],
  ['document[1] checked too', (p) => p.document.push({ ...p.document[0] }), (p) => p.document.push({ ...p.document[0], country: 'XX' }), 'document[1].country'],
  ['address.country required', (p) => (p.address.country = 'DEU'), (p) => delete p.address.country, 'address.country'],
  ['address.postCode required', (p) => (p.address.postCode = 'SW1A 1AA'), (p) => delete p.address.postCode, 'address.postCode'],
  ['address.country alpha-3', (p) => (p.address.country = 'GBR'), (p) => (p.address.country = 'UK'), 'address.country'],
  ['address.postCode max 20', (p) => (p.address.postCode = '1'.repeat(20)), (p) => (p.address.postCode = '1'.repeat(21)), 'address.postCode'],
  ['address.street required', (p) => (p.address.street = 'Main'), (p) => delete p.address.street, 'address.street'],
  ['address.street max 200', (p) => (p.address.street = 's'.repeat(200)), (p) => (p.address.street = 's'.repeat(201)), 'address.street'],
  ['address.town max 100', (p) => (p.address.town = 't'.repeat(100)), (p) => (p.address.town = 't'.repeat(101)), 'address.town'],
  ['address.subStreet max 200', (p) => (p.address.subStreet = 's'.repeat(200)), (p) => (p.address.subStreet = 's'.repeat(201)), 'address.subStreet'],
  ['address.state max 100', (p) => (p.address.state = 's'.repeat(100)), (p) => (p.address.state = 's'.repeat(101)), 'address.state'],
  [
    'address.buildingName max 100',
    (p) => (p.address.buildingName = 'b'.repeat(100)),
    (p) => (p.address.buildingName = 'b'.repeat(101)),
    'address.buildingName',
  ],
  ['address.flatNumber max 20', (p) => (p.address.flatNumber = '1'.repeat(20)), (p) => (p.address.flatNumber = '1'.repeat(21)), 'address.flatNumber'],
  [
    'address.buildingNumber max 20',
    (p) => (p.address.buildingNumber = '1'.repeat(20)),
    (p) => (p.address.buildingNumber = '1'.repeat(21)),
    'address.buildingNumber',
  ],
  [
    'address.formattedAddress max 500',
    (p) => (p.address.formattedAddress = 'f'.repeat(500)),
    (p) => (p.address.formattedAddress = 'f'.repeat(501)),
    'address.formattedAddress',
  ],
  ['liveness.result required', (p) => (p.liveness.result = 'APPROVED'), (p) => delete p.liveness.result, 'liveness.result'],
  ['liveness.result values', (p) => (p.liveness.result = 'WARNING'), (p) => (p.liveness.result = 'PASSED'), 'liveness.result'],
  [
    'liveness.checkedAt required unless NOT_EXECUTED',
    (p) => (p.liveness = { result: 'NOT_EXECUTED' }),
    (p) => (p.liveness = { result: 'WARNING' }),
    'liveness.checkedAt',
  ],
  [
    'liveness.checkedAt ISO 8601',
    (p) => (p.liveness.checkedAt = '2026-01-02T03:04:05+01:00'),
    (p) => (p.liveness.checkedAt = 'yesterday'),
    'liveness.checkedAt',
  ],
  ['no unknown fields', (p) => p, (p) => (p.identity.email = 'a@b.c'), 'identity.email'],
];

describe('canonical KYC payload (2.7)', () => {
  for (const [rule, passing, failing, parameter] of RULES) {
    it(rule, () => {
      const ok = check(passing);
      assert.equal(ok.ok, true, JSON.stringify(ok));
      const bad = check(failing);
      assert.equal(bad.ok, false, 'the failing case is refused');
      if (!bad.ok) {
        assert.equal(bad.parameter, parameter, bad.message);
        assert.ok(bad.message.startsWith(`${parameter}: `), bad.message);
      }
    });
  }

  it('refuses a value that is not a JSON object, naming value', () => {
    for (const value of ['', 'nope', '[]', '"text"', 'null']) {
      const r = checkCanonicalKyc(value, NOW);
      assert.equal(r.ok, false);
      if (!r.ok) assert.equal(r.parameter, 'value');
    }
  });

  it('reads lastName from fullName when it is missing, and decides like token sharing', () => {
    const r = check((p) => delete p.identity.lastName);
    assert.ok(r.ok);
    const identity = identityOfCanonical(r.payload);
    assert.equal(identity.person.lastName, "O'Neill-Brown");
    assert.deepEqual(decide(identity, NOW), { status: 'APPROVED' });
    const single = check((p) => ((p.identity.fullName = 'Zoë'), delete p.identity.lastName));
    assert.ok(single.ok);
    assert.deepEqual((decide(identityOfCanonical(single.payload), NOW) as any).rejectLabels, ['MISSING_NAME']);
  });

  it('names the deadline in the incomplete decision', () => {
    assert.match(incompleteSubmission(7 * 86_400).moderationComment, /within 7 days/);
    assert.match(incompleteSubmission(90).moderationComment, /within 90 seconds/);
  });
});

describe('stored canonical KYC data', () => {
  it('parses a stored row with the same schema, keeping data that was valid on the day it arrived', () => {
    const stored = JSON.stringify(canonicalPayload());
    const checked = checkCanonicalKyc(stored, NOW);
    assert.ok(checked.ok);
    assert.deepEqual(storedCanonicalKyc(stored), checked.payload);
    // a document that has expired since, or an applicant checked when 18, is the decision's to judge (reliance.ts)
    const since = JSON.stringify(canonicalPayload((p) => ((p.document[0].expiryDate = day(-1)), (p.identity.dob = yearsAgo(18, 1)))));
    assert.equal(checkCanonicalKyc(since, NOW).ok, false);
    assert.equal(storedCanonicalKyc(since).document[0]!.expiryDate, day(-1));
  });

  it('throws on a row that fails the schema, naming the field and not its value', () => {
    assert.throws(() => storedCanonicalKyc(JSON.stringify(canonicalPayload((p) => (p.identity.nationality = 'XX')))), /identity\.nationality: /);
    const cyrillic = JSON.stringify(canonicalPayload((p) => (p.identity.firstName = 'Зоя')));
    assert.throws(
      () => storedCanonicalKyc(cyrillic),
      (err: Error) => err.message.includes('identity.firstName') && !err.message.includes('Зоя'),
    );
    assert.throws(() => storedCanonicalKyc('{}'), /externalUserId: is required/);
  });
});
