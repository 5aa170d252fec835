/**
 * The tenant-isolation world: two clients, three environments, one cluster
 * in each, and a caller per (scenario, role) with exactly the grant the
 * scenario names.
 *
 *   acme   / production  → cluster `target`  (the cluster every route asks for)
 *   acme   / staging     → cluster `sibling` (same client, another environment)
 *   globex / production  → cluster `foreign` (another client)
 */
import { ROLES, type Role } from '../../shared/auth/roles.ts';
import type { Db } from '../../shared/db/pool.ts';
import {
  insertChild,
  insertClient,
  insertCluster,
  insertEnvironment,
  insertEvent,
  insertGrant,
  insertHost,
  insertNamespace,
  insertNode,
  insertPod,
  insertWorkload,
} from './api-fixtures.ts';

export interface WorldCluster {
  id: string;
  clientId: string;
  environmentId: string;
  nodeId: string;
  workloadId: string;
  podId: string;
  /** A CMDB host of the cluster's environment. */
  hostId: string;
}

export interface World {
  target: WorldCluster;
  sibling: WorldCluster;
  foreign: WorldCluster;
}

/** Scenarios whose caller holds a grant (the others need no rows). */
export const GRANT_SCENARIOS = [
  'other client',
  'sibling environment',
  'this environment',
  'client-wide',
] as const;

export type GrantScenario = (typeof GRANT_SCENARIOS)[number];

export function callerEmail(scenario: string, role: Role | 'none'): string {
  return `${scenario.replaceAll(' ', '-')}.${role}@example.test`;
}

async function populate(
  db: Db,
  clientId: string,
  environmentId: string,
  name: string,
): Promise<WorldCluster> {
  const id = await insertCluster(db, {
    clientId,
    environmentId,
    name,
    status: 'healthy',
  });
  const nodeId = await insertNode(db, id, {
    name: `${name}-node-1`,
    status: 'Ready',
    allocatable_cpu_millicores: 4000,
    allocatable_memory_bytes: 8 * 1024 ** 3,
    allocatable_pods: 110,
  });
  const namespaceId = await insertNamespace(db, id, 'shop');
  const workloadId = await insertWorkload(db, id, {
    namespace_id: namespaceId,
    kind: 'Deployment',
    namespace: 'shop',
    name: 'web',
    replicas_desired: 1,
    replicas_ready: 1,
  });
  const podId = await insertPod(db, id, {
    namespace_id: namespaceId,
    node_id: nodeId,
    workload_id: workloadId,
    namespace: 'shop',
    name: 'web-7d9f8b6c5d-x2k4p',
    phase: 'Running',
    node_name: `${name}-node-1`,
    workload_kind: 'Deployment',
    workload_name: 'web',
    restart_count: 0,
    containers: [{ name: 'web', state: 'running' }],
  });
  await insertEvent(db, id, {
    namespace_id: namespaceId,
    namespace: 'shop',
    name: `web.${name}`,
    type: 'Normal',
    reason: 'Pulled',
    last_seen: new Date(),
  });
  for (const table of [
    'k8s_services',
    'k8s_ingresses',
    'k8s_pvcs',
    'k8s_hpas',
    'k8s_network_policies',
    'k8s_resource_quotas',
    'k8s_endpoint_slices',
  ] as const) {
    await insertChild(db, table, id, {
      namespace_id: namespaceId,
      namespace: 'shop',
      name: 'web',
    });
  }
  await insertChild(db, 'k8s_jobs', id, {
    namespace_id: namespaceId,
    kind: 'Job',
    namespace: 'shop',
    name: 'migrate',
  });
  const hostId = await insertHost(db, {
    clientId,
    environmentId,
    hostname: `${name}-node-1`,
  });
  return { id, clientId, environmentId, nodeId, workloadId, podId, hostId };
}

/** The value of each route path parameter that names the cluster's rows. */
export function pathValuesOf(cluster: WorldCluster): Record<string, string> {
  return {
    clusterID: cluster.id,
    nodeID: cluster.nodeId,
    workloadID: cluster.workloadId,
    hostID: cluster.hostId,
    id: cluster.clientId,
    envID: cluster.environmentId,
    query: 'cpu_by_node',
  };
}

export async function buildWorld(db: Db): Promise<World> {
  const acme = await insertClient(db, 'acme');
  const acmeProduction = await insertEnvironment(db, acme, 'production');
  const acmeStaging = await insertEnvironment(db, acme, 'staging');
  const globex = await insertClient(db, 'globex');
  const globexProduction = await insertEnvironment(db, globex, 'production');

  const world: World = {
    target: await populate(db, acme, acmeProduction, 'acme-prod'),
    sibling: await populate(db, acme, acmeStaging, 'acme-staging'),
    foreign: await populate(db, globex, globexProduction, 'globex-prod'),
  };

  const grantOf: Record<
    GrantScenario,
    { clientId: string; environmentId: string | null }
  > = {
    'other client': { clientId: globex, environmentId: null },
    'sibling environment': { clientId: acme, environmentId: acmeStaging },
    'this environment': { clientId: acme, environmentId: acmeProduction },
    'client-wide': { clientId: acme, environmentId: null },
  };
  for (const scenario of GRANT_SCENARIOS) {
    for (const role of ROLES) {
      await insertGrant(db, {
        email: callerEmail(scenario, role),
        role,
        ...grantOf[scenario],
      });
    }
  }
  return world;
}
