// A card number sent by mistake is never kept or echoed whole (issue 38, item 12): the batch file's
// card-token column and a requirement record's echoed value keep the first six and last four digits.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readBatchCsv } from '../../domain/batch-csv.ts';
import { cardTokenAsKept, maskCardNumber, passesLuhn, withoutCardNumbers } from '../../domain/card-number.ts';
import { readRequirementLine } from '../../domain/requirement-lines.ts';

const PAN = '4111111111111111'; // a test Visa number (passes Luhn)

describe('card numbers', () => {
  it('are masked to their first six and last four digits', () => {
    assert.equal(maskCardNumber(PAN), '411111******1111');
    assert.equal(maskCardNumber('4111 1111 1111 1111'), '411111******1111');
    assert.equal(maskCardNumber('5500-0000-0000-0004'), '550000******0004');
  });

  it('pass the Luhn check; a changed digit does not', () => {
    assert.equal(passesLuhn(PAN), true);
    assert.equal(passesLuhn('4111111111111112'), false);
  });

  it('in the card-token column: any 13 to 19 digits are masked, a 9-digit token or other text is kept', () => {
    assert.equal(cardTokenAsKept(PAN), '411111******1111');
    assert.equal(cardTokenAsKept('4111111111111112'), '411111******1112', 'whatever its check digit');
    assert.equal(cardTokenAsKept('1234567890123'), '123456***0123', '13 digits');
    assert.equal(cardTokenAsKept('123456789'), '123456789');
    assert.equal(cardTokenAsKept('12345678901234567890'), '12345678901234567890', '20 digits: not a card number');
    assert.equal(cardTokenAsKept('tok_abc'), 'tok_abc');
  });

  it('in free text: Luhn-valid runs masked, other numbers kept', () => {
    assert.equal(
      withoutCardNumbers(`{"cardProcessorPublicToken":"${PAN}","n":"4111111111111112"}`),
      `{"cardProcessorPublicToken":"411111******1111","n":"4111111111111112"}`,
    );
    assert.equal(withoutCardNumbers('{"phone":"+44 20 7946 0958"}'), '{"phone":"+44 20 7946 0958"}');
  });

  it('a batch file row: stored and failed masked, never whole', async () => {
    const csv = `externalId,shareToken,cardProcessorPublicToken\np-1,tok-1,${PAN}\np-2,tok-2,123456789\n`;
    const read = await readBatchCsv([Buffer.from(csv)], { binSponsored: false });
    assert.ok(read.ok);
    const [pan, token] = read.rows;
    assert.equal(pan!.cardProcessorPublicToken, '411111******1111');
    assert.equal(pan!.failure?.category, 'CARD_PROCESSOR_TOKEN_INVALID');
    assert.match(pan!.failure!.message, /looks like a card number/);
    assert.ok(!JSON.stringify(read).includes(PAN), 'the number appears nowhere in what was read');
    assert.deepEqual([token!.cardProcessorPublicToken, token!.failure], ['123456789', undefined]);
  });

  it('a requirement record that carries one: echoed masked', () => {
    const line = JSON.stringify({ externalId: 'p-1', requirementSlug: 'ukyc-canonical-kyc-data', value: JSON.stringify({ cardProcessorPublicToken: PAN }) });
    const read = readRequirementLine(line, 1, new Date());
    assert.ok(read.failure, 'not valid canonical data');
    assert.ok(!JSON.stringify(read).includes(PAN), JSON.stringify(read));
    assert.ok(read.value!.includes('411111******1111'));
  });
});
