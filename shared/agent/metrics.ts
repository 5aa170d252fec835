/**
 * The agent's Prometheus metrics (prom-client), served on its /metrics.
 * The agent runs in the cluster, not in AWS, so these are scraped rather
 * than written as EMF like the backend's. One registry per agent, so two
 * agents in one process (tests) never share counts.
 */
import { Counter, Gauge, Registry } from 'prom-client';

export type TooLargeOutcome = 'spec_facts_dropped' | 'inventory_dropped';

export interface AgentMetrics {
  registry: Registry;
  /** The spec's oversized rule: one count per oversized inventory, by what was done. */
  inventoryTooLarge: Counter<'outcome'>;
  /** Encoded (gzipped) size of the last full inventory, facts included. */
  inventoryPayloadBytes: Gauge;
  inventoriesPublished: Counter;
  collectionFailures: Counter;
  /** An optional kind left out of a cycle's inventory, by kind and reason. */
  kindsNotCollected: Counter<'kind' | 'reason'>;
  lastPublishedSeconds: Gauge;
}

export function createAgentMetrics(): AgentMetrics {
  const registry = new Registry();
  const registers = [registry];
  return {
    registry,
    inventoryTooLarge: new Counter({
      name: 'proxima_collector_inventory_too_large_total',
      help: 'Inventories over the NATS server max_payload, by outcome (spec_facts_dropped: published without spec facts; inventory_dropped: not published)',
      labelNames: ['outcome'],
      registers,
    }),
    inventoryPayloadBytes: new Gauge({
      name: 'proxima_collector_inventory_payload_bytes',
      help: 'Encoded size of the last full inventory (gzipped JSON with spec facts), in bytes',
      registers,
    }),
    inventoriesPublished: new Counter({
      name: 'proxima_collector_inventories_published_total',
      help: 'Inventories the stream acknowledged',
      registers,
    }),
    collectionFailures: new Counter({
      name: 'proxima_collector_failures_total',
      help: 'Sync cycles that published nothing (listing or publishing failed)',
      registers,
    }),
    kindsNotCollected: new Counter({
      name: 'proxima_collector_kinds_not_collected_total',
      help: 'Optional kinds left out of a cycle (their array not sent, not pruned), by kind (resource.group/version) and reason (not_installed, unavailable, forbidden); one count per kind per cycle',
      labelNames: ['kind', 'reason'],
      registers,
    }),
    lastPublishedSeconds: new Gauge({
      name: 'proxima_collector_last_published_timestamp_seconds',
      help: 'When the stream last acknowledged an inventory (Unix time)',
      registers,
    }),
  };
}
