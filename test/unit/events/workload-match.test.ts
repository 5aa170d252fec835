import { describe, expect, it } from 'vitest';
import {
  type WorkloadKind,
  workloadOwns,
} from '../../../shared/events/workload-match.ts';

/** [workload kind, workload, object kind, object name, owned?, why] */
const table: [WorkloadKind, string, string, string, boolean, string][] = [
  ['Deployment', 'api', 'Deployment', 'api', true, 'the workload itself'],
  ['Deployment', 'api', 'ReplicaSet', 'api-6f7d8b9c4', true, 'its ReplicaSet'],
  ['Deployment', 'api', 'Pod', 'api-6f7d8b9c4-x2k4p', true, 'its pod'],
  ['Deployment', 'api', 'Pod', 'api-5d4b7-zz9q2', true, 'a short hash'],
  [
    'Deployment',
    'api',
    'Pod',
    'api-gateway-6f7d8-x2k4p',
    false,
    "api-gateway's pod",
  ],
  [
    'Deployment',
    'api',
    'ReplicaSet',
    'api-gateway-6f7d8',
    false,
    "api-gateway's ReplicaSet",
  ],
  [
    'Deployment',
    'api',
    'Deployment',
    'api-gateway',
    false,
    'another Deployment',
  ],
  [
    'Deployment',
    'api',
    'Pod',
    'api-v2-x7k2p',
    false,
    "DaemonSet api-v2's pod (v, 2 never in a hash)",
  ],
  [
    'Deployment',
    'api',
    'Pod',
    'api-db-x7k2p',
    true,
    "documented residual: DaemonSet api-db's pod fits the shape",
  ],
  [
    'Deployment',
    'api',
    'ReplicaSet',
    'api-6f7d8b9c4a',
    false,
    'a is not a hash character',
  ],
  [
    'Deployment',
    'api',
    'ReplicaSet',
    'api-44444444444',
    false,
    'a hash has at most ten characters',
  ],
  [
    'Deployment',
    'api',
    'Pod',
    'api-6f7d8-x2k4',
    false,
    'a suffix has five characters',
  ],
  [
    'Deployment',
    'api',
    'Pod',
    'api-6f7d8-x2k4a',
    false,
    'a is not a suffix character',
  ],
  [
    'Deployment',
    'api',
    'HorizontalPodAutoscaler',
    'api',
    false,
    'an HPA named like the workload',
  ],
  [
    'Deployment',
    'api',
    'StatefulSet',
    'api',
    false,
    'another kind of the same name',
  ],
  ['Deployment', 'web.v1', 'Pod', 'web.v1-6f7d8-x2k4p', true, 'a dotted name'],
  [
    'Deployment',
    'web.v1',
    'Pod',
    'webxv1-6f7d8-x2k4p',
    false,
    'the dot is literal',
  ],
  [
    'Rollout',
    'api',
    'ReplicaSet',
    'api-6f7d8b9c4',
    true,
    "a Rollout's ReplicaSet",
  ],
  ['Rollout', 'api', 'Pod', 'api-6f7d8b9c4-x2k4p', true, "a Rollout's pod"],
  ['Rollout', 'api', 'Rollout', 'api', true, 'the Rollout itself'],
  ['StatefulSet', 'db', 'StatefulSet', 'db', true, 'the StatefulSet itself'],
  ['StatefulSet', 'db', 'Pod', 'db-0', true, 'ordinal 0'],
  ['StatefulSet', 'db', 'Pod', 'db-12', true, 'ordinal 12'],
  ['StatefulSet', 'db', 'Pod', 'db-01', false, 'no leading zero'],
  ['StatefulSet', 'db', 'Pod', 'db-backup-0', false, "db-backup's pod"],
  ['StatefulSet', 'db', 'ReplicaSet', 'db-6f7d8', false, 'no ReplicaSets'],
  ['DaemonSet', 'agent', 'DaemonSet', 'agent', true, 'the DaemonSet itself'],
  ['DaemonSet', 'agent', 'Pod', 'agent-x7k2p', true, 'its pod'],
  ['DaemonSet', 'agent', 'Pod', 'agent-x7k2', false, 'a four-character suffix'],
  [
    'DaemonSet',
    'agent',
    'Pod',
    'agent-6f7d8-x2k4p',
    false,
    "a Deployment agent's pod shape",
  ],
  ['DaemonSet', 'agent', 'ReplicaSet', 'agent-6f7d8', false, 'no ReplicaSets'],
];

describe('workloadOwns', () => {
  it.each(table)(
    '%s %s, %s %s: %s (%s)',
    (kind, name, objectKind, objectName, owned) => {
      // Act
      const result = workloadOwns([kind], name, {
        kind: objectKind,
        name: objectName,
      });

      // Assess
      expect(result).toBe(owned);
    },
  );
});
