import { describe, expect, it } from 'vitest';
import {
  diffSpecFacts,
  type FactChange,
} from '../../../shared/changes/diff.ts';
import type { SpecFacts } from '../../../shared/wire/spec-facts.ts';
import { container, facts, initContainer } from './facts.ts';

const manual = { hpaManaged: false };

describe('diffSpecFacts', () => {
  it('finds nothing between two equal fact sets', () => {
    // Prepare
    const before = facts({
      containers: [
        container('api', {
          requests: { cpu: '250m', memory: '512Mi' },
          limits: { memory: '1Gi' },
          env_names: ['A', 'B'],
          env_from: ['configmap:app#APP_'],
          volume_refs: ['pvc:data'],
        }),
        initContainer('migrate'),
      ],
    });
    const after = structuredClone(before);

    // Act
    const changes = diffSpecFacts(before, after, manual);

    // Assess
    expect(changes).toEqual([]);
  });

  it.each<{
    rule: string;
    before: Partial<SpecFacts>;
    after: Partial<SpecFacts>;
    expected: FactChange[];
  }>([
    {
      rule: 'a replica change',
      before: { replicas: 3 },
      after: { replicas: 5 },
      expected: [{ field: 'replicas', before: '3', after: '5' }],
    },
    {
      rule: 'a scale to zero, kept as 0',
      before: { replicas: 3 },
      after: { replicas: 0 },
      expected: [{ field: 'replicas', before: '3', after: '0' }],
    },
    {
      rule: 'replicas appearing, with a null before',
      before: { replicas: undefined },
      after: { replicas: 2 },
      expected: [{ field: 'replicas', before: null, after: '2' }],
    },
    {
      rule: 'a strategy type change',
      before: { strategy: { type: 'RollingUpdate' } },
      after: { strategy: { type: 'Recreate' } },
      expected: [
        { field: 'strategy.type', before: 'RollingUpdate', after: 'Recreate' },
      ],
    },
    {
      rule: 'max_surge set and max_unavailable unset',
      before: { strategy: { type: 'RollingUpdate', max_unavailable: '25%' } },
      after: { strategy: { type: 'RollingUpdate', max_surge: '1' } },
      expected: [
        { field: 'strategy.max_surge', before: null, after: '1' },
        { field: 'strategy.max_unavailable', before: '25%', after: null },
      ],
    },
    {
      rule: 'a strategy appearing, field by field',
      before: { strategy: undefined },
      after: { strategy: { type: 'OnDelete' } },
      expected: [{ field: 'strategy.type', before: null, after: 'OnDelete' }],
    },
  ])('records $rule', ({ before, after, expected }) => {
    // Prepare
    const from = facts(before);
    const to = facts(after);

    // Act
    const changes = diffSpecFacts(from, to, manual);

    // Assess
    expect(changes).toEqual(expected);
  });

  it.each<{ rule: string; hpaManaged: boolean; expected: FactChange[] }>([
    {
      rule: 'records replicas without an HPA',
      hpaManaged: false,
      expected: [
        { field: 'replicas', before: '3', after: '7' },
        { field: 'containers.api.image', before: 'api:1', after: 'api:2' },
      ],
    },
    {
      rule: 'leaves replicas out when an HPA manages the workload',
      hpaManaged: true,
      expected: [
        { field: 'containers.api.image', before: 'api:1', after: 'api:2' },
      ],
    },
  ])('$rule', ({ hpaManaged, expected }) => {
    // Prepare
    const before = facts({
      containers: [container('api', { image: 'api:1' })],
    });
    const after = facts({
      replicas: 7,
      containers: [container('api', { image: 'api:2' })],
    });

    // Act
    const changes = diffSpecFacts(before, after, { hpaManaged });

    // Assess
    expect(changes).toEqual(expected);
  });

  it.each<{
    fact: string;
    before: Parameters<typeof container>[1];
    after: Parameters<typeof container>[1];
    expected: FactChange[];
  }>([
    {
      fact: 'image',
      before: { image: 'shop/api:1.0.0' },
      after: { image: 'shop/api:1.1.0' },
      expected: [
        {
          field: 'containers.api.image',
          before: 'shop/api:1.0.0',
          after: 'shop/api:1.1.0',
        },
      ],
    },
    {
      fact: 'requests.cpu',
      before: { requests: { cpu: '250m' } },
      after: { requests: { cpu: '500m' } },
      expected: [
        { field: 'containers.api.requests.cpu', before: '250m', after: '500m' },
      ],
    },
    {
      fact: 'requests.memory, set from nothing',
      before: {},
      after: { requests: { memory: '512Mi' } },
      expected: [
        {
          field: 'containers.api.requests.memory',
          before: null,
          after: '512Mi',
        },
      ],
    },
    {
      fact: 'limits.cpu, unset',
      before: { limits: { cpu: '1', memory: '1Gi' } },
      after: { limits: { memory: '1Gi' } },
      expected: [
        { field: 'containers.api.limits.cpu', before: '1', after: null },
      ],
    },
    {
      fact: 'limits.memory',
      before: { limits: { memory: '1Gi' } },
      after: { limits: { memory: '768Mi' } },
      expected: [
        {
          field: 'containers.api.limits.memory',
          before: '1Gi',
          after: '768Mi',
        },
      ],
    },
    {
      fact: 'env, one entry per name added or removed',
      before: { env_names: ['A', 'B', 'D'] },
      after: { env_names: ['B', 'C', 'E'] },
      expected: [
        { field: 'containers.api.env', before: 'A', after: null },
        { field: 'containers.api.env', before: null, after: 'C' },
        { field: 'containers.api.env', before: 'D', after: null },
        { field: 'containers.api.env', before: null, after: 'E' },
      ],
    },
    {
      fact: 'env_from, one entry per ref added or removed',
      before: { env_from: ['configmap:a', 'secret:b'] },
      after: { env_from: ['configmap:a', 'configmap:c'] },
      expected: [
        {
          field: 'containers.api.env_from',
          before: null,
          after: 'configmap:c',
        },
        { field: 'containers.api.env_from', before: 'secret:b', after: null },
      ],
    },
    {
      fact: 'env_from, a prefix change on the same ref as one entry',
      before: { env_from: ['configmap:app#OLD_'] },
      after: { env_from: ['configmap:app#NEW_'] },
      expected: [
        {
          field: 'containers.api.env_from',
          before: 'configmap:app#OLD_',
          after: 'configmap:app#NEW_',
        },
      ],
    },
    {
      fact: 'env_from, a prefix added to a ref as one entry',
      before: { env_from: ['configmap:app'] },
      after: { env_from: ['configmap:app#APP_'] },
      expected: [
        {
          field: 'containers.api.env_from',
          before: 'configmap:app',
          after: 'configmap:app#APP_',
        },
      ],
    },
    {
      fact: 'env_from, a prefix holding # split at the first #',
      before: { env_from: ['secret:app#A#1_'] },
      after: { env_from: ['secret:app#A#2_', 'secret:app-2#A#1_'] },
      expected: [
        {
          field: 'containers.api.env_from',
          before: 'secret:app#A#1_',
          after: 'secret:app#A#2_',
        },
        {
          field: 'containers.api.env_from',
          before: null,
          after: 'secret:app-2#A#1_',
        },
      ],
    },
    {
      fact: 'env_from, the same kind of ref on another object as two entries',
      before: { env_from: ['configmap:app#P_'] },
      after: { env_from: ['configmap:other#P_'] },
      expected: [
        {
          field: 'containers.api.env_from',
          before: 'configmap:app#P_',
          after: null,
        },
        {
          field: 'containers.api.env_from',
          before: null,
          after: 'configmap:other#P_',
        },
      ],
    },
    {
      fact: 'volumes, one entry per ref added or removed',
      before: { volume_refs: ['pvc:data', 'secret:tls'] },
      after: { volume_refs: ['configmap:nginx', 'pvc:data'] },
      expected: [
        {
          field: 'containers.api.volumes',
          before: null,
          after: 'configmap:nginx',
        },
        { field: 'containers.api.volumes', before: 'secret:tls', after: null },
      ],
    },
  ])('records a container $fact', ({ before, after, expected }) => {
    // Prepare
    const from = facts({ containers: [container('api', before)] });
    const to = facts({ containers: [container('api', after)] });

    // Act
    const changes = diffSpecFacts(from, to, manual);

    // Assess
    expect(changes).toEqual(expected);
  });

  it('records the same facts of an init container under init_containers', () => {
    // Prepare
    const before = facts({
      containers: [
        container('api'),
        initContainer('migrate', { image: 'migrate:1', env_names: ['DB'] }),
      ],
    });
    const after = facts({
      containers: [
        container('api'),
        initContainer('migrate', {
          image: 'migrate:2',
          limits: { memory: '128Mi' },
          env_from: ['secret:db'],
          volume_refs: ['secret:db-ca'],
        }),
      ],
    });

    // Act
    const changes = diffSpecFacts(before, after, manual);

    // Assess
    expect(changes).toEqual([
      {
        field: 'init_containers.migrate.image',
        before: 'migrate:1',
        after: 'migrate:2',
      },
      {
        field: 'init_containers.migrate.limits.memory',
        before: null,
        after: '128Mi',
      },
      { field: 'init_containers.migrate.env', before: 'DB', after: null },
      {
        field: 'init_containers.migrate.env_from',
        before: null,
        after: 'secret:db',
      },
      {
        field: 'init_containers.migrate.volumes',
        before: null,
        after: 'secret:db-ca',
      },
    ]);
  });

  it.each<{
    rule: string;
    before: SpecFacts;
    after: SpecFacts;
    expected: FactChange[];
  }>([
    {
      rule: 'a main container added, as one entry with its image after',
      before: facts({ containers: [container('api')] }),
      after: facts({
        containers: [
          container('api'),
          container('sidecar', { image: 'envoy:v1.28', env_names: ['X'] }),
        ],
      }),
      expected: [
        { field: 'containers.sidecar', before: null, after: 'envoy:v1.28' },
      ],
    },
    {
      rule: 'a main container removed, as one entry with its image before',
      before: facts({
        containers: [
          container('api'),
          container('sidecar', { image: 'envoy:v1.27', limits: { cpu: '1' } }),
        ],
      }),
      after: facts({ containers: [container('api')] }),
      expected: [
        { field: 'containers.sidecar', before: 'envoy:v1.27', after: null },
      ],
    },
    {
      rule: 'an init container added',
      before: facts({ containers: [container('api')] }),
      after: facts({
        containers: [
          container('api'),
          initContainer('wait', { image: 'busybox' }),
        ],
      }),
      expected: [
        { field: 'init_containers.wait', before: null, after: 'busybox' },
      ],
    },
    {
      rule: 'a container moved from main to init as a removal and an addition',
      before: facts({
        containers: [container('api'), container('proxy', { image: 'p:1' })],
      }),
      after: facts({
        containers: [
          container('api'),
          initContainer('proxy', { image: 'p:1' }),
        ],
      }),
      expected: [
        { field: 'containers.proxy', before: 'p:1', after: null },
        { field: 'init_containers.proxy', before: null, after: 'p:1' },
      ],
    },
  ])('records $rule', ({ before, after, expected }) => {
    // Act
    const changes = diffSpecFacts(before, after, manual);

    // Assess
    expect(changes).toEqual(expected);
  });

  it.each<{
    rule: string;
    before: string[];
    after: string[];
    expected: FactChange[];
  }>([
    {
      rule: 'records swapped init containers as one order entry',
      before: ['a', 'b'],
      after: ['b', 'a'],
      expected: [
        { field: 'init_containers.order', before: 'a,b', after: 'b,a' },
      ],
    },
    {
      rule: 'lists every init container on each side of an order entry',
      before: ['a', 'b', 'c'],
      after: ['c', 'a', 'd'],
      expected: [
        { field: 'init_containers.b', before: 'b:1', after: null },
        { field: 'init_containers.d', before: null, after: 'd:1' },
        { field: 'init_containers.order', before: 'a,b,c', after: 'c,a,d' },
      ],
    },
    {
      rule: 'does not count an inserted init container as a reorder',
      before: ['a', 'b'],
      after: ['a', 'c', 'b'],
      expected: [{ field: 'init_containers.c', before: null, after: 'c:1' }],
    },
    {
      rule: 'does not count a removed init container as a reorder',
      before: ['a', 'b', 'c'],
      after: ['a', 'c'],
      expected: [{ field: 'init_containers.b', before: 'b:1', after: null }],
    },
  ])('$rule', ({ before, after, expected }) => {
    // Prepare
    const withInits = (names: string[]) =>
      facts({
        containers: [
          container('api'),
          ...names.map((name) => initContainer(name, { image: `${name}:1` })),
        ],
      });

    // Act
    const changes = diffSpecFacts(withInits(before), withInits(after), manual);

    // Assess
    expect(changes).toEqual(expected);
  });

  it('does not count reordered main containers as a change', () => {
    // Prepare
    const before = facts({
      containers: [container('api'), container('sidecar')],
    });
    const after = facts({
      containers: [container('sidecar'), container('api')],
    });

    // Act
    const changes = diffSpecFacts(before, after, manual);

    // Assess
    expect(changes).toEqual([]);
  });

  it('lists replicas, strategy, main containers by name, init containers by name, then init order', () => {
    // Prepare
    const before = facts({
      replicas: 2,
      strategy: { type: 'RollingUpdate', max_surge: '1', max_unavailable: '0' },
      containers: [
        container('web', { image: 'web:1', env_names: ['A'] }),
        container('api', { image: 'api:1', volume_refs: ['pvc:x'] }),
        initContainer('seed', { image: 'seed:1' }),
        initContainer('migrate', { image: 'migrate:1' }),
      ],
    });
    const after = facts({
      replicas: 4,
      strategy: { type: 'Recreate' },
      containers: [
        container('web', { image: 'web:2', env_names: ['B'] }),
        container('api', { image: 'api:2', volume_refs: [] }),
        initContainer('migrate', { image: 'migrate:2' }),
        initContainer('seed', { image: 'seed:2' }),
      ],
    });

    // Act
    const fields = diffSpecFacts(before, after, manual).map((c) => c.field);

    // Assess
    expect(fields).toEqual([
      'replicas',
      'strategy.type',
      'strategy.max_surge',
      'strategy.max_unavailable',
      'containers.api.image',
      'containers.api.volumes',
      'containers.web.image',
      'containers.web.env',
      'containers.web.env',
      'init_containers.migrate.image',
      'init_containers.seed.image',
      'init_containers.order',
    ]);
  });

  it('gives the same result for the same inputs every time', () => {
    // Prepare
    const before = facts({
      containers: [container('api', { env_names: ['Z', 'A', 'M'] })],
    });
    const after = facts({
      containers: [container('api', { env_names: ['N', 'B'] })],
    });

    // Act
    const first = diffSpecFacts(before, after, manual);
    const second = diffSpecFacts(before, after, manual);

    // Assess
    expect(second).toEqual(first);
    expect(first.map((c) => c.before ?? c.after)).toEqual([
      'A',
      'B',
      'M',
      'N',
      'Z',
    ]);
  });
});
