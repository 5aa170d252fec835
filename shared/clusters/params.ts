/**
 * The query parameters of the three cluster lists (all clusters, a client's,
 * an environment's): filters, `include=capacity` and paging (default 20 per
 * page, larger than 100 clamped to 100). Every error, an unknown parameter
 * included, is 400 bad_request.
 */

import { uuidField } from '../http/fields.ts';
import {
  type Paging,
  type PagingRule,
  pagingFields,
  pagingOf,
} from '../http/paging.ts';
import type { RouteQuery } from '../http/query.ts';
import { searchText } from '../http/search.ts';
import { CLUSTER_STATUSES } from '../patterns.ts';
import * as z from '../zod.ts';
import type { ClusterListFilter } from './repo.ts';

export const CLUSTERS_PAGING: PagingRule = {
  defaultPerPage: 20,
  maxPerPage: 100,
};

export interface ClusterListQuery {
  filter: ClusterListFilter;
  includeCapacity: boolean;
  paging: Paging;
}

const clusterListSchema = z.pipe(
  z.object({
    client_id: z.optional(uuidField('client_id')),
    environment_id: z.optional(uuidField('environment_id')),
    status: z.optional(
      z.enum(CLUSTER_STATUSES, {
        error: `status must be one of ${CLUSTER_STATUSES.join(', ')}`,
      }),
    ),
    search: z.optional(searchText('search')),
    include: z.optional(
      z.literal('capacity', { error: 'include accepts only capacity' }),
    ),
    ...pagingFields(CLUSTERS_PAGING),
  }),
  z.transform(
    (query): ClusterListQuery => ({
      filter: {
        clientId: query.client_id,
        environmentId: query.environment_id,
        status: query.status,
        search: query.search,
      },
      includeCapacity: query.include === 'capacity',
      paging: pagingOf(query, CLUSTERS_PAGING),
    }),
  ),
);

/** The route table's query of the cluster lists. */
export const clusterListQuery = {
  schema: clusterListSchema,
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;
