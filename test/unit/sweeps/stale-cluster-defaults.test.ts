/**
 * The spec's Stale Cluster Detection defaults: a cluster silent for more
 * than 15 minutes is marked disconnected, and K8s events are kept 24 hours.
 * Both where the code reads them (the config schema's STALE_CLUSTER_MINUTES
 * and EVENT_RETENTION_HOURS, unset) and where a deploy sets them (the infra
 * parameters staleClusterMinutes and eventRetentionHours, not given).
 */
import { describe, expect, it } from 'vitest';
import { parseParameters } from '../../../infra/parameters.ts';
import { configSchema } from '../../../shared/config.ts';

describe('stale-cluster defaults', () => {
  it('are 15 minutes (STALE_CLUSTER_MINUTES) and 24 hours (EVENT_RETENTION_HOURS) in the config schema', () => {
    // Prepare
    const shape = configSchema().shape;

    // Act: each variable unset.
    const staleMinutes = shape.STALE_CLUSTER_MINUTES.safeParse(undefined);
    const retentionHours = shape.EVENT_RETENTION_HOURS.safeParse(undefined);

    // Assess
    expect(staleMinutes).toEqual({ success: true, data: 15 });
    expect(retentionHours).toEqual({ success: true, data: 24 });
  });

  it('are 15 minutes (staleClusterMinutes) and 24 hours (eventRetentionHours) in the deploy parameters', () => {
    // Act: no parameter given.
    const parameters = parseParameters({});

    // Assess
    expect(parameters.staleClusterMinutes).toBe(15);
    expect(parameters.eventRetentionHours).toBe(24);
  });
});
