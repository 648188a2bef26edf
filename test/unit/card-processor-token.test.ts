// A card processor token belongs to one entity of a business: one rule, one category, for every
// place that checks it before assigning a token (shared records, universal KYC and its decision).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IMPORT_ERROR_CATEGORIES } from '../../domain/import-errors.ts';
import { cardProcessorTokenTaken } from '../../domain/share-fields.ts';

const PERSON = '3f1d7c2e-8a4b-4c5d-9e6f-7a8b9c0d1e2f';
const OTHER = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

describe('card processor token uniqueness', () => {
  it('is free when no entity holds the token, or the entity it is for already does', () => {
    assert.equal(cardProcessorTokenTaken(PERSON, null), null);
    assert.equal(cardProcessorTokenTaken(PERSON, PERSON), null);
  });

  it('is taken when another entity of the business holds it: CARD_PROCESSOR_TOKEN_INVALID, naming the holder', () => {
    const taken = cardProcessorTokenTaken(PERSON, OTHER);
    assert.deepEqual(taken, { category: 'CARD_PROCESSOR_TOKEN_INVALID', holder: OTHER });
    assert.equal(IMPORT_ERROR_CATEGORIES[taken!.category].retryable, false);
  });
});
