// Verifying one business's audit chain as it is stored (issue 37): read its head, walk its entries
// up to that head, then look once more, in one statement, for entries beyond the head. Entries up
// to a head are fixed once the head has moved past them, so a walk of millions of entries in pages
// reads one consistent chain while the service keeps appending: an intact chain is never reported
// broken because writes went on. Each signed checkpoint (store/audit-checkpoints.ts) must still be in
// the chain (domain/audit-chain.ts).
import { chainChecker, type ChainBreak, type ChainHead, type HeadAttested } from '../domain/audit-chain.ts';
import { chainEnd, chainOf } from './audit-log.ts';
import type { Queryable } from './db.ts';

export type ChainVerdict = {
  businessId: string;
  entries: number;
  head: ChainHead | null;
  /** How many signed checkpoints the chain was held against. */
  checkpoints: number;
  intact: boolean;
  firstBreak?: ChainBreak;
};

export async function verifyChainOf(db: Queryable, businessId: string, attested: readonly HeadAttested[] = []): Promise<ChainVerdict> {
  const { head } = await chainEnd(db, businessId);
  const check = chainChecker(attested);
  let entries = 0;
  let broken: ChainBreak | null = null;
  for await (const e of chainOf(db, businessId, head ? { upTo: head.seq } : {})) {
    entries += 1;
    if ((broken = check.push(e))) break;
  }
  broken ??= check.end(head);
  if (!broken && head) {
    // entries past the head now are linked after we read it (the head moved with them), unless
    // someone wrote entries beyond the head: those the head does not name
    const now = await chainEnd(db, businessId);
    if (now.head && now.lastSeq > now.head.seq)
      broken = { seq: now.head.seq + 1, problem: 'added', detail: `entries reach seq ${now.lastSeq}, beyond the head at ${now.head.seq}` };
  }
  return { businessId, entries, head, checkpoints: attested.length, intact: broken === null, ...(broken ? { firstBreak: broken } : {}) };
}
