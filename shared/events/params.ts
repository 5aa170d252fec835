/**
 * The events timeline route's parameters, as received (strings), all
 * optional; their cross rules and defaults are timeline.ts's timelineQuery.
 * An unknown parameter is 400 bad_request.
 */
import * as z from 'zod';
import {
  integerField,
  namespaceField,
  nanoTimeField,
  objectNameField,
  oneOfField,
  patternField,
} from '../http/fields.ts';
import type { RouteQuery } from '../http/query.ts';
import { WORKLOAD_KINDS } from './workload-match.ts';

export const INVOLVED_KINDS = [
  'Pod',
  'Deployment',
  'ReplicaSet',
  'StatefulSet',
  'DaemonSet',
  'Rollout',
  'Job',
  'CronJob',
  'Node',
  'Service',
  'Endpoints',
  'Ingress',
  'HorizontalPodAutoscaler',
  'PersistentVolumeClaim',
  'PersistentVolume',
  'Namespace',
  'NetworkPolicy',
  'PodDisruptionBudget',
] as const;

/** The route's parameters as received (strings); all optional. */
export const timelineParameters = z.object({
  namespace: namespaceField().optional(),
  involved_kind: oneOfField('involved_kind', INVOLVED_KINDS).optional(),
  involved_name: objectNameField('involved_name').optional(),
  workload: objectNameField('workload').optional(),
  workload_kind: oneOfField('workload_kind', WORKLOAD_KINDS).optional(),
  type: oneOfField('type', ['Normal', 'Warning'] as const).optional(),
  reason: patternField('reason', /^[A-Za-z]{1,64}$/, '1-64 letters').optional(),
  from: nanoTimeField('from').optional(),
  to: nanoTimeField('to').optional(),
  limit: integerField('limit', 1, 1000).optional(),
});

export type TimelineParameters = z.output<typeof timelineParameters>;

/** The route table's query entry. */
export const timelineRouteQuery = {
  schema: timelineParameters,
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;
