/**
 * A generated inventory of one cluster with next to nothing in it (one
 * namespace, one workload and pod, `nodes` nodes, no other kinds), for tests
 * that follow snapshots through the ingest path rather than their content.
 */

import type { Inventory } from '../../shared/wire/inventory.ts';
import {
  type GenerateOptions,
  generateInventory,
} from '../fixtures/generate.ts';

export function tinyInventory(
  agentId: string,
  at: Date,
  overrides: Partial<GenerateOptions> = {},
): Inventory {
  return generateInventory({
    seed: agentId,
    agentId,
    clusterName: `cluster-${agentId.slice(0, 8)}`,
    timestamp: at.toISOString(),
    nodes: 1,
    namespaces: 1,
    workloadsPerNamespace: 1,
    podsPerWorkload: 1,
    services: 0,
    events: 0,
    ingresses: 0,
    pvcs: 0,
    jobs: 0,
    hpas: 0,
    networkPolicies: 0,
    resourceQuotas: 0,
    endpointSlices: 0,
    specFacts: false,
    ...overrides,
  });
}
