/**
 * Builders for spec-fact sets in the changes tests: a one-container
 * Deployment-like set, overridden per case.
 */
import type {
  ContainerFacts,
  SpecFacts,
} from '../../../shared/wire/spec-facts.ts';

export function container(
  name: string,
  overrides: Partial<ContainerFacts> = {},
): ContainerFacts {
  return {
    name,
    image: `registry.example.com/shop/${name}:1.0.0`,
    env_names: [],
    env_from: [],
    volume_refs: [],
    ...overrides,
  };
}

export function initContainer(
  name: string,
  overrides: Partial<ContainerFacts> = {},
): ContainerFacts {
  return container(name, { init: true, ...overrides });
}

export function facts(overrides: Partial<SpecFacts> = {}): SpecFacts {
  return {
    replicas: 3,
    strategy: {
      type: 'RollingUpdate',
      max_surge: '25%',
      max_unavailable: '25%',
    },
    containers: [container('api')],
    facts_version: 1,
    ...overrides,
  };
}
