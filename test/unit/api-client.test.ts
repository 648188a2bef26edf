// The typed API client (client/schema.d.ts) is the one generated from the document the API serves:
// regenerated here and compared, so a change to the API without `npm run api:client` fails, and
// code using the client (the example receiver, e2e tests) is type-checked against the real document.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { it } from 'node:test';
import { CLIENT_SCHEMA, generateClientSchema } from '../../scripts/api-client.ts';

it('has a client generated from the current OpenAPI document', async () => {
  assert.equal(await readFile(CLIENT_SCHEMA, 'utf8'), generateClientSchema(), 'the document changed: run npm run api:client');
});
