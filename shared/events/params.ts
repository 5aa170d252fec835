/**
 * The events timeline route's parameters, as received (strings), all
 * optional; their cross rules and defaults are timeline.ts's timelineQuery.
 * An unknown parameter is 400 bad_request.
 */

import {
  integerField,
  namespaceField,
  nanoTimeField,
  objectNameField,
  oneOfField,
  patternField,
} from '../http/fields.ts';
import type { RouteQuery } from '../http/query.ts';
import * as z from '../zod.ts';
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
  namespace: z.optional(namespaceField()),
  involved_kind: z.optional(oneOfField('involved_kind', INVOLVED_KINDS)),
  involved_name: z.optional(objectNameField('involved_name')),
  workload: z.optional(objectNameField('workload')),
  workload_kind: z.optional(oneOfField('workload_kind', WORKLOAD_KINDS)),
  type: z.optional(oneOfField('type', ['Normal', 'Warning'] as const)),
  reason: z.optional(
    patternField('reason', /^[A-Za-z]{1,64}$/, '1-64 letters'),
  ),
  from: z.optional(nanoTimeField('from')),
  to: z.optional(nanoTimeField('to')),
  limit: z.optional(integerField('limit', 1, 1000)),
});

export type TimelineParameters = z.output<typeof timelineParameters>;

/** The route table's query entry. */
export const timelineRouteQuery = {
  schema: timelineParameters,
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;
