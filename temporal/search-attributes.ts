// Registers Vouch's search attributes (contract: SEARCH_ATTRIBUTE_KEYS) in the namespace, adding
// only the missing ones: the development server gets them as start flags; a real cluster gets them
// once with `npm run vouch -- temporal-setup` (Temporal Cloud: tcld or the Cloud UI, same names).
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto'; // CommonJS: its namespaces come through the default export

const { IndexedValueType } = proto.temporal.api.enums.v1;
import { SEARCH_ATTRIBUTE_KEYS } from '../contract/run-tags.ts';

/** The `temporal server start-dev` flags that register them. */
export const devServerSearchAttributeFlags = (): string[] => Object.values(SEARCH_ATTRIBUTE_KEYS).flatMap((k) => ['--search-attribute', `${k.name}=Keyword`]);

export async function registerSearchAttributes(client: Client, namespace: string): Promise<{ added: string[]; present: string[] }> {
  const operator = client.connection.operatorService;
  const existing = await operator.listSearchAttributes({ namespace });
  const known = new Set([...Object.keys(existing.customAttributes ?? {}), ...Object.keys(existing.systemAttributes ?? {})]);
  const wanted = Object.values(SEARCH_ATTRIBUTE_KEYS).map((k) => k.name);
  const missing = wanted.filter((name) => !known.has(name));
  if (missing.length > 0) {
    await operator.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((name) => [name, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
    });
  }
  return { added: missing, present: wanted.filter((name) => known.has(name)) };
}
