// GET /entity/{entityId}/history: what happened to one of your entities, oldest first (issue 21).
import { historyPageSchema, historyQuery } from '../../domain/entity-history.ts';
import { entityIdParams } from '../../domain/entity.ts';
import type { UseCaseContext } from '../../usecases/context.ts';
import { readEntityHistory } from '../../usecases/entity-history.ts';
import { route } from '../route.ts';

export function entityHistoryRoutes(context: UseCaseContext) {
  return [
    route({
      method: 'get',
      path: '/entity/:entityId/history',
      operationId: 'readEntityHistory',
      summary: "An entity's history, oldest first",
      description:
        'What happened to the entity: created; requirements and files submitted or retired; members declared; each ' +
        "verification's stages and where it came from (batch and row, sync request, hosted-SDK review, universal KYC or " +
        'KYB submission); features enabled or removed; each event about it and its delivery to each of your subscriptions ' +
        '(delivered, failing, failed; attempts; the last status code). Ids only. A decision’s outcome is not here: only ' +
        'the webhook carries it; a DECIDED stage names the event that did, which POST /events/{eventId}/redeliver sends again.',
      tag: 'Record',
      versioned: true,
      params: entityIdParams,
      query: historyQuery,
      responses: { 200: { description: 'A page of the history', schema: historyPageSchema } },
      errors: ['invalidRequest', 'entityNotFound', 'acceptVersionMissing', 'acceptVersionUnsupported'],
      handler: ({ params, query, business }) => readEntityHistory(context, business, params.entityId, query),
    }),
  ];
}
