/**
 * The agent as configured by the one config schema (shared/config.ts), for
 * functions/agent/main.ts. The kube-context is `@kubernetes/client-node`'s
 * default: KUBECONFIG (or ~/.kube/config) and its current context, or the
 * pod's service account when running in a cluster.
 */
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { type Config, ConfigError } from '../config.ts';
import { natsTargetOf } from '../nats-login.ts';
import type { AgentOptions } from './agent.ts';
import { type ResolvedAgentId, resolveAgentId } from './agent-id.ts';

export interface AgentConfigOverrides {
  kubeConfig?: KubeConfig;
  /** Where NATS is when NATS_URL is unset (the local stack's own server). */
  natsUrlFallback?: string | undefined;
}

/** Builds the agent's options; fails listing every variable it needs and lacks. */
export async function agentOptionsFromConfig(
  config: Config,
  overrides: AgentConfigOverrides = {},
): Promise<AgentOptions & { agentIdSource: ResolvedAgentId['source'] }> {
  const nats =
    natsTargetOf(config) ??
    (overrides.natsUrlFallback
      ? { url: overrides.natsUrlFallback }
      : undefined);
  const missing = [
    ...(nats ? [] : ['NATS_URL']),
    ...(['PROXIMA_CLIENT', 'PROXIMA_ENVIRONMENT'] as const).filter(
      (name) => !config[name],
    ),
  ];
  if (missing.length > 0) {
    throw new ConfigError(
      `invalid configuration:\n${missing.map((name) => `${name}: required by the agent`).join('\n')}`,
    );
  }
  let kubeConfig = overrides.kubeConfig;
  if (kubeConfig === undefined) {
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromDefault();
  }
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) {
    throw new ConfigError(
      'invalid configuration:\nKUBECONFIG: no current context (set KUBECONFIG, or run inside a pod)',
    );
  }
  const resolved = await resolveAgentId({
    agentId: config.PROXIMA_AGENT_ID,
    file: config.PROXIMA_AGENT_ID_FILE ?? join(config.DATA_DIR, 'agent-id'),
  });
  return {
    kubeConfig,
    nats: nats!,
    client: config.PROXIMA_CLIENT!,
    environment: config.PROXIMA_ENVIRONMENT!,
    agentId: resolved.agentId,
    agentIdSource: resolved.source,
    clusterName: config.PROXIMA_CLUSTER_NAME ?? cluster.name,
    intervalMs: config.PROXIMA_K8S_SYNC_INTERVAL,
    excludeNamespaces: config.PROXIMA_K8S_EXCLUDE_NAMESPACES,
    podLimit: config.PROXIMA_K8S_POD_LIMIT,
    pageSize: config.PROXIMA_K8S_PAGE_SIZE,
    healthPort: config.AGENT_HEALTH_PORT,
  };
}
