/**
 * The query parameters of the three cluster lists (all clusters, a client's,
 * an environment's): filters, `include=capacity` and paging (default 20 per
 * page, larger than 100 clamped to 100). Unknown parameters are ignored.
 */
import { z } from 'zod';
import { isUuid } from '../http/ids.ts';
import { type Paging, pagingFields, pagingOf } from '../http/paging.ts';
import { parseQuery } from '../http/query.ts';
import { searchText } from '../http/search.ts';
import { CLUSTER_STATUSES, type ClusterListFilter } from './repo.ts';

export const CLUSTERS_DEFAULT_PER_PAGE = 20;
export const CLUSTERS_MAX_PER_PAGE = 100;

const uuid = (name: string) =>
  z.string().refine(isUuid, `${name} must be a UUID`);

const clusterListSchema = z.object({
  client_id: uuid('client_id').optional(),
  environment_id: uuid('environment_id').optional(),
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
});

export interface ClusterListQuery {
  filter: ClusterListFilter;
  includeCapacity: boolean;
  paging: Paging;
}

export function parseClusterListQuery(
  rawQueryString: string | undefined,
): ClusterListQuery {
  const query = parseQuery(rawQueryString, clusterListSchema);
  return {
    filter: {
      clientId: query.client_id,
      environmentId: query.environment_id,
      status: query.status,
      search: query.search,
    },
    includeCapacity: query.include === 'capacity',
    paging: pagingOf(query, CLUSTERS_DEFAULT_PER_PAGE),
  };
}
