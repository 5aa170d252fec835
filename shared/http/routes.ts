/**
 * The route table: every API endpoint, listed once. The local server mounts
 * it, CDK builds one Lambda and one API Gateway route per entry from it, and
 * the tenant-isolation test walks it.
 *
 * `name` is the entry file `functions/api/<name>.ts` and the function's id.
 * `permissions` is the route gate (RequireAnyPermissionInAnyScope): the caller
 * must hold one of them in some scope; handlers then check the cluster's own
 * client and environment.
 */
import type { Permission } from '../auth/permissions.ts';
import type { RateLimitFamily } from './rate-limit.ts';

export interface RouteDefinition {
  name: string;
  method: 'GET';
  /** API Gateway path syntax: `{param}`. */
  path: string;
  permissions: readonly Permission[];
  /** The per-user budget this route counts against (rate-limit.ts). */
  rateLimit?: RateLimitFamily;
}

const assets = ['assets:read'] as const;
const cluster = '/api/v1/clusters/{clusterID}';

export const routes: readonly RouteDefinition[] = [
  {
    name: 'list-clusters',
    method: 'GET',
    path: '/api/v1/clusters',
    permissions: assets,
  },
  {
    name: 'list-client-clusters',
    method: 'GET',
    path: '/api/v1/clients/{id}/clusters',
    permissions: assets,
  },
  {
    name: 'list-environment-clusters',
    method: 'GET',
    path: '/api/v1/environments/{envID}/clusters',
    permissions: assets,
  },
  { name: 'get-cluster', method: 'GET', path: cluster, permissions: assets },
  {
    name: 'get-cluster-summary',
    method: 'GET',
    path: `${cluster}/summary`,
    permissions: assets,
  },
  {
    name: 'list-nodes',
    method: 'GET',
    path: `${cluster}/nodes`,
    permissions: assets,
  },
  {
    name: 'list-node-capacity',
    method: 'GET',
    path: `${cluster}/nodes/capacity`,
    permissions: assets,
  },
  {
    name: 'get-node',
    method: 'GET',
    path: `${cluster}/nodes/{nodeID}`,
    permissions: assets,
  },
  {
    name: 'list-node-pods',
    method: 'GET',
    path: `${cluster}/nodes/{nodeID}/pods`,
    permissions: assets,
  },
  {
    name: 'list-namespaces',
    method: 'GET',
    path: `${cluster}/namespaces`,
    permissions: assets,
  },
  {
    name: 'list-namespace-usage',
    method: 'GET',
    path: `${cluster}/namespaces/usage`,
    permissions: assets,
  },
  {
    name: 'list-workloads',
    method: 'GET',
    path: `${cluster}/workloads`,
    permissions: assets,
  },
  {
    name: 'get-workload',
    method: 'GET',
    path: `${cluster}/workloads/{workloadID}`,
    permissions: assets,
  },
  {
    name: 'list-workload-pods',
    method: 'GET',
    path: `${cluster}/workloads/{workloadID}/pods`,
    permissions: assets,
  },
  {
    name: 'list-pods',
    method: 'GET',
    path: `${cluster}/pods`,
    permissions: assets,
  },
  {
    name: 'list-services',
    method: 'GET',
    path: `${cluster}/services`,
    permissions: assets,
  },
  {
    name: 'list-ingresses',
    method: 'GET',
    path: `${cluster}/ingresses`,
    permissions: assets,
  },
  {
    name: 'list-pvcs',
    method: 'GET',
    path: `${cluster}/pvcs`,
    permissions: assets,
  },
  {
    name: 'list-events',
    method: 'GET',
    path: `${cluster}/events`,
    permissions: assets,
  },
  {
    name: 'list-jobs',
    method: 'GET',
    path: `${cluster}/jobs`,
    permissions: assets,
  },
  {
    name: 'list-hpas',
    method: 'GET',
    path: `${cluster}/hpas`,
    permissions: assets,
  },
  {
    name: 'list-network-policies',
    method: 'GET',
    path: `${cluster}/network-policies`,
    permissions: assets,
  },
  {
    name: 'list-resource-quotas',
    method: 'GET',
    path: `${cluster}/resource-quotas`,
    permissions: assets,
  },
  {
    name: 'list-endpoint-slices',
    method: 'GET',
    path: `${cluster}/endpoint-slices`,
    permissions: assets,
  },
  {
    name: 'list-changes',
    method: 'GET',
    path: '/api/v1/changes',
    permissions: ['changes:read'],
  },
];
