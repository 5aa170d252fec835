/** GET /api/v1/clusters/{clusterID}/network-policies */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listNetworkPoliciesRoute } from '../../shared/http/routes.ts';
import { listNetworkPolicies } from '../../shared/inventory/route.ts';

export const handler = apiHandler(
  listNetworkPoliciesRoute,
  listNetworkPolicies,
);
