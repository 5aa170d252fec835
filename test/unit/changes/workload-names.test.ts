import { describe, expect, it } from 'vitest';
import {
  ownedNamePatterns,
  type WorkloadKind,
  workloadOwns,
} from '../../../shared/events/workload-match.ts';

const eventConcernsWorkload = (
  e: { objectKind: string; objectName: string },
  name: string,
  kinds: readonly WorkloadKind[],
) => workloadOwns(kinds, name, { kind: e.objectKind, name: e.objectName });

const podNamePattern = (name: string, kinds: readonly WorkloadKind[]) =>
  ownedNamePatterns(kinds, name).pod;
const replicaSetNamePattern = (name: string, kinds: readonly WorkloadKind[]) =>
  ownedNamePatterns(kinds, name).replicaSet;

const matches = (pattern: string, name: string) =>
  new RegExp(pattern).test(name);

describe('the names a workload generates', () => {
  it.each([
    ['Deployment', 'api-7d9f8c5b4-x2x9k', true],
    ['Deployment', 'api-gateway-7d9f8c5b4-x2x9k', false],
    ['Deployment', 'api-migrate-x2x9k', false],
    ['Deployment', 'api-7d9f8c5b4-x2x9', false],
    ['Deployment', 'api-7d9f8c5b4-aeiou', false],
    ['Rollout', 'api-5f6b8d-bbbbb', true],
    ['StatefulSet', 'api-0', true],
    ['StatefulSet', 'api-12', true],
    ['StatefulSet', 'api-x', false],
    ['DaemonSet', 'api-x7k2p', true],
    ['DaemonSet', 'api-v2', false],
    ['DaemonSet', 'api-gateway', false],
  ] as const)('%s api: pod %s matches: %s', (kind, pod, expected) => {
    // Act
    const pattern = podNamePattern('api', [kind]);

    // Assess
    expect(matches(pattern, pod)).toBe(expected);
  });

  it('escapes the dots of a subdomain name, so one never stands for any character', () => {
    // Act
    const pattern = podNamePattern('api.v1', ['StatefulSet']);

    // Assess
    expect(matches(pattern, 'api.v1-0')).toBe(true);
    expect(matches(pattern, 'apixv1-0')).toBe(false);
  });

  it('keeps the documented residual: DaemonSet api-db pods look like Deployment api pods', () => {
    // Assess
    expect(matches(podNamePattern('api', ['Deployment']), 'api-db-x7k2p')).toBe(
      true,
    );
  });

  it('matches ReplicaSets only for Deployments and Rollouts', () => {
    // Assess
    expect(replicaSetNamePattern('api', ['StatefulSet'])).toBeNull();
    const pattern = replicaSetNamePattern('api', ['Deployment']) ?? '';
    expect(matches(pattern, 'api-7d9f8c5b4')).toBe(true);
    expect(matches(pattern, 'api-gateway')).toBe(false);
  });

  it('takes an event of the workload itself only for an allowed kind', () => {
    // Assess
    const name = { objectKind: 'Deployment', objectName: 'api' };
    expect(eventConcernsWorkload(name, 'api', ['Deployment'])).toBe(true);
    expect(eventConcernsWorkload(name, 'api', ['StatefulSet'])).toBe(false);
    expect(
      eventConcernsWorkload(
        { objectKind: 'Pod', objectName: 'api-gateway-7d9f8c5b4-x2x9k' },
        'api',
        ['Deployment'],
      ),
    ).toBe(false);
    expect(
      eventConcernsWorkload(
        { objectKind: 'HorizontalPodAutoscaler', objectName: 'api' },
        'api',
        ['Deployment'],
      ),
    ).toBe(false);
  });
});
