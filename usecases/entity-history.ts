// An entity's history (GET /entity/{entityId}/history, issue 21): the caller's own entity, not
// sealed, read from the tables that hold its facts (store/entity-history.ts) and told oldest first
// by the rules of domain/entity-history.ts. No decision's outcome is in it (interface 1.4).
import { buildHistory, historyPage, type HistoryPage } from '../domain/entity-history.ts';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import type { Page } from '../domain/pagination.ts';
import { linkNow } from '../store/audit-chainer.ts';
import { entityType } from '../store/entities.ts';
import { historyFacts } from '../store/entity-history.ts';
import type { Caller, UseCaseContext } from './context.ts';

export async function readEntityHistory({ db }: UseCaseContext, caller: Caller, entityId: string, page: Page): Promise<Outcome<HistoryPage>> {
  // `entities` holds the records that are not sealed: another business's entity, a sealed one and an unknown id are alike
  // the stages and features it reads from the audit log: what has committed is linked first
  await linkNow(db, caller.id);
  const facts = (await entityType(db, caller.id, entityId)) ? await historyFacts(db, entityId) : null;
  if (!facts)
    return refuse('entityNotFound', `Entity ${entityId} not found in your business; check the id (GET /entity lists your entities).`, {
      parameter: 'entityId',
    });
  return done(historyPage(buildHistory(facts), page));
}
