/**
 * The query parameters of the three cluster lists (all clusters, a client's,
 * an environment's): filters, `include=capacity` and paging (default 20 per
 * page, larger than 100 clamped to 100). Every error, an unknown parameter
 * included, is 400 bad_request.
 */
import * as z from 'zod';
import { uuidField } from '../http/fields.ts';
import { type Paging, pagingFields, pagingOf } from '../http/paging.ts';
import type { RouteQuery } from '../http/query.ts';
import { searchText } from '../http/search.ts';
import { CLUSTER_STATUSES } from '../patterns.ts';
import type { ClusterListFilter } from './repo.ts';

export const CLUSTERS_DEFAULT_PER_PAGE = 20;
export const CLUSTERS_MAX_PER_PAGE = 100;

export interface ClusterListQuery {
  filter: ClusterListFilter;
  includeCapacity: boolean;
  paging: Paging;
}

const clusterListSchema = z
  .object({
    client_id: uuidField('client_id').optional(),
    environment_id: uuidField('environment_id').optional(),
    status: z
      .enum(CLUSTER_STATUSES, {
        error: `status must be one of ${CLUSTER_STATUSES.join(', ')}`,
      })
      .optional(),
    search: searchText('search').optional(),
    include: z
      .literal('capacity', { error: 'include accepts only capacity' })
      .optional(),
    ...pagingFields(CLUSTERS_MAX_PER_PAGE),
  })
  .transform(
    (query): ClusterListQuery => ({
      filter: {
        clientId: query.client_id,
        environmentId: query.environment_id,
        status: query.status,
        search: query.search,
      },
      includeCapacity: query.include === 'capacity',
      paging: pagingOf(query, CLUSTERS_DEFAULT_PER_PAGE),
    }),
  );

/** The route table's query of the cluster lists. */
export const clusterListQuery = {
  schema: clusterListSchema,
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;
