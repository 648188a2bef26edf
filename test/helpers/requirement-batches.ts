// Helpers for batches of requirement submissions: a JSON Lines file of records, its upload, and
// polling the batch until it finishes.
import type { Reply, Stack } from './stack.ts';
import { canonicalPayload } from './ukyc.ts';
import { eventually } from './eventually.ts';

/** A JSON Lines file: one record (object, or a line as it is) per line. */
export const jsonLines = (records: unknown[]) => records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';

/** Canonical KYC data of each person, one record each. */
export const canonicalRecords = (entityIds: readonly string[]) =>
  entityIds.map((entityId) => ({ entityId, requirementSlug: 'ukyc-canonical-kyc-data', value: JSON.stringify(canonicalPayload()) }));

export function uploadRecords(stack: Stack, key: string, body: string | Buffer, idempotencyKey = `key-${Math.random().toString(36).slice(2)}`): Promise<Reply> {
  const form = new FormData();
  form.append('file', new Blob([body]), 'records.jsonl');
  return stack.request('POST', '/entity/requirement/batch', { key, form, headers: { 'Idempotency-Key': idempotencyKey } });
}

export async function waitForRequirementBatch(stack: Stack, key: string, batchId: string, timeoutMs = 120_000): Promise<any> {
  let last = '';
  return eventually(
    `batch ${batchId} finished`,
    async () => {
      const res = await stack.request('GET', `/entity/requirement/batch/${batchId}`, { key });
      if (res.status !== 200) throw new Error(`GET batch: ${res.status} ${res.text}`);
      last = `${res.body.status} (${res.body.processedRecords} processed)`;
      return ['completed', 'failed', 'canceled'].includes(res.body.status) && res.body;
    },
    { timeoutMs, everyMs: 250, state: () => last },
  );
}
