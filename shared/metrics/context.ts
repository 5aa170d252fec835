/**
 * The metrics store the route reads and the series writer the sync uses:
 * one each per process, from the configuration on first use (undefined when
 * it names no store). The local stack and the tests give their own with
 * `setMetricsStore`, as the database pool's `setDb`.
 */
import { getConfig } from '../config.ts';
import { metricsStoreFromConfig } from './from-config.ts';
import type { MetricsStore } from './store.ts';

let current: { store: MetricsStore | undefined } | undefined;

/** The process's store; undefined when none is configured (503). */
export function getMetricsStore(): MetricsStore | undefined {
  current ??= { store: metricsStoreFromConfig(getConfig()) };
  return current.store;
}

/**
 * Uses `store` for every later request, undefined meaning "none" (the
 * route's 503); `reset` goes back to the configuration.
 */
export function setMetricsStore(
  store: MetricsStore | undefined | 'reset',
): void {
  current = store === 'reset' ? undefined : { store };
}
