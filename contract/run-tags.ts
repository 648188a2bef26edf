// What an operator filters runs by: the search attributes every workflow carries, and VouchStatus.

/**
 * Search attributes on every workflow (all Keyword), registered by the development server at start
 * and on a real cluster by `npm run vouch -- temporal-setup` (docs/operations.md, "Operating Vouch"): so
 * `BusinessId='…' AND VouchStatus='failed'` finds runs in the CLI and the UI. Ids only: never a
 * name, a date of birth or a token.
 */
export const SEARCH_ATTRIBUTE_KEYS = {
  businessId: { name: 'BusinessId', type: 'KEYWORD' },
  batchId: { name: 'BatchId', type: 'KEYWORD' },
  entityId: { name: 'EntityId', type: 'KEYWORD' },
  vouchStatus: { name: 'VouchStatus', type: 'KEYWORD' },
} as const satisfies Record<string, { name: string; type: 'KEYWORD' }>; // the SDK's SearchAttributeKey, structurally

/** What a workflow run is about: set when it starts (and carried across continue-as-new). */
export type RunTags = { businessId: string; entityId?: string | undefined; batchId?: string | undefined };

/**
 * Each long workflow's stage in VouchStatus (docs/operations.md, "What each VouchStatus means"):
 *   batch import          pending → in_progress → completed | failed | canceled
 *   sync import           in_progress → completed | failed
 *   person verification   waiting → deciding → approved | rejected (the latest decision; then waiting again for a new review)
 *   sandbox review        in_progress → completed | failed
 *   universal KYC         waiting → settling → approved | rejected | expired (decided at its deadline without a document)
 *   universal KYB         waiting → settling → approved | rejected | superseded
 *   webhook retry         retrying → delivered | failed | canceled
 *   webhook dispatcher    running
 *   retention             sealed → held (a legal hold without end binds it) → purged | completed (gone already)
 */
export const VOUCH_STATUSES = [
  'pending',
  'in_progress',
  'completed',
  'failed',
  'canceled',
  'waiting',
  'deciding',
  'settling',
  'approved',
  'rejected',
  'expired',
  'superseded',
  'retrying',
  'delivered',
  'running',
  'sealed',
  'held',
  'purged',
] as const;
export type VouchStatus = (typeof VOUCH_STATUSES)[number];
