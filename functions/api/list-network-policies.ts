/** GET /api/v1/clusters/{clusterID}/network-policies */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listNetworkPolicies } from '../../shared/inventory/route.ts';

export const handler = apiHandler('list-network-policies', listNetworkPolicies);
