import { describe, expect, it } from 'vitest';
import {
  buildWorkloadChange,
  MAX_RECORDED_CHANGES,
  type WorkloadChangeInput,
} from '../../../shared/changes/record.ts';
import type { SpecFacts } from '../../../shared/wire/spec-facts.ts';
import { container, facts } from './facts.ts';

const checkoutApi = (overrides: Parameters<typeof container>[1] = {}) =>
  container('checkout-api', {
    image: 'registry.example.com/shop/checkout-api:2.40.3',
    limits: { cpu: '1', memory: '1Gi' },
    env_names: ['DB_HOST'],
    volume_refs: ['secret:checkout-tls'],
    ...overrides,
  });

const input = (
  before: SpecFacts,
  after: SpecFacts,
  hpaManaged = false,
): WorkloadChangeInput => ({
  clusterId: '5f0c7a8e-2b1d-4c3e-9f6a-7b8c9d0e1f2a',
  clusterName: 'k8s-prod-01',
  kind: 'Deployment',
  namespace: 'shop',
  name: 'checkout-api',
  before,
  after,
  hpaManaged,
});

describe('buildWorkloadChange', () => {
  it('records nothing when no fact changed', () => {
    // Prepare
    const before = facts({ containers: [checkoutApi()] });

    // Act
    const record = buildWorkloadChange(input(before, structuredClone(before)));

    // Assess
    expect(record).toBeUndefined();
  });

  it('writes the spec example for an image bump with three more changes', () => {
    // Prepare
    const before = facts({ containers: [checkoutApi()] });
    const after = facts({
      containers: [
        checkoutApi({
          image: 'registry.example.com/shop/checkout-api:2.41.0',
          limits: { cpu: '1', memory: '768Mi' },
          env_names: ['DB_HOST', 'FEATURE_FLAGS'],
          volume_refs: ['configmap:checkout-flags', 'secret:checkout-tls'],
        }),
      ],
    });

    // Act
    const record = buildWorkloadChange(input(before, after));

    // Assess
    expect(record).toEqual({
      eventType: 'workload_changed',
      summary:
        'Deployment shop/checkout-api: image checkout-api 2.40.3 → 2.41.0; memory limit 1Gi → 768Mi; +2 more',
      details: {
        cluster_id: '5f0c7a8e-2b1d-4c3e-9f6a-7b8c9d0e1f2a',
        cluster: 'k8s-prod-01',
        kind: 'Deployment',
        namespace: 'shop',
        name: 'checkout-api',
        change_count: 4,
        truncated: false,
        changes: [
          {
            field: 'containers.checkout-api.image',
            before: 'registry.example.com/shop/checkout-api:2.40.3',
            after: 'registry.example.com/shop/checkout-api:2.41.0',
          },
          {
            field: 'containers.checkout-api.limits.memory',
            before: '1Gi',
            after: '768Mi',
          },
          {
            field: 'containers.checkout-api.env',
            before: null,
            after: 'FEATURE_FLAGS',
          },
          {
            field: 'containers.checkout-api.volumes',
            before: null,
            after: 'configmap:checkout-flags',
          },
        ],
      },
    });
  });

  it('writes the timeline example for a one-container image bump', () => {
    // Prepare
    const before = facts({
      containers: [container('api', { image: 'api:2.40.3' })],
    });
    const after = facts({
      containers: [container('api', { image: 'api:2.41.0' })],
    });

    // Act
    const record = buildWorkloadChange({
      ...input(before, after),
      name: 'api',
    });

    // Assess
    expect(record?.summary).toBe(
      'Deployment shop/api: image api 2.40.3 → 2.41.0',
    );
    expect(record?.details.changes).toEqual([
      {
        field: 'containers.api.image',
        before: 'api:2.40.3',
        after: 'api:2.41.0',
      },
    ]);
  });

  it('records a manual replicas-only change as workload_scaled', () => {
    // Prepare
    const before = facts({ replicas: 3, containers: [checkoutApi()] });
    const after = facts({ replicas: 0, containers: [checkoutApi()] });

    // Act
    const record = buildWorkloadChange(input(before, after));

    // Assess
    expect(record?.eventType).toBe('workload_scaled');
    expect(record?.summary).toBe('Deployment shop/checkout-api scaled 3 → 0');
    expect(record?.details).toMatchObject({
      change_count: 1,
      truncated: false,
      changes: [{ field: 'replicas', before: '3', after: '0' }],
    });
  });

  it.each<{
    rule: string;
    hpaManaged: boolean;
    image: string;
    expected:
      | { eventType: string; summary: string; fields: string[] }
      | undefined;
  }>([
    {
      rule: 'writes no record for a replicas-only change of an HPA-managed workload',
      hpaManaged: true,
      image: 'registry.example.com/shop/checkout-api:2.40.3',
      expected: undefined,
    },
    {
      rule: 'records everything but replicas of a mixed change under an HPA',
      hpaManaged: true,
      image: 'registry.example.com/shop/checkout-api:2.41.0',
      expected: {
        eventType: 'workload_changed',
        summary:
          'Deployment shop/checkout-api: image checkout-api 2.40.3 → 2.41.0',
        fields: ['containers.checkout-api.image'],
      },
    },
    {
      rule: 'records replicas of a mixed change without an HPA as workload_changed',
      hpaManaged: false,
      image: 'registry.example.com/shop/checkout-api:2.41.0',
      expected: {
        eventType: 'workload_changed',
        summary:
          'Deployment shop/checkout-api: replicas 3 → 8; image checkout-api 2.40.3 → 2.41.0',
        fields: ['replicas', 'containers.checkout-api.image'],
      },
    },
  ])('$rule', ({ hpaManaged, image, expected }) => {
    // Prepare
    const before = facts({ replicas: 3, containers: [checkoutApi()] });
    const after = facts({ replicas: 8, containers: [checkoutApi({ image })] });

    // Act
    const record = buildWorkloadChange(input(before, after, hpaManaged));

    // Assess
    if (expected === undefined) {
      expect(record).toBeUndefined();
      return;
    }
    expect(record?.eventType).toBe(expected.eventType);
    expect(record?.summary).toBe(expected.summary);
    expect(record?.details.changes.map((c) => c.field)).toEqual(
      expected.fields,
    );
  });

  it('names the container in phrases when the workload has several', () => {
    // Prepare
    const sidecar = container('proxy', { image: 'envoy:v1.27' });
    const before = facts({ containers: [checkoutApi(), sidecar] });
    const after = facts({
      containers: [
        checkoutApi({ limits: { cpu: '1', memory: '768Mi' } }),
        container('proxy', { image: 'envoy:v1.28' }),
      ],
    });

    // Act
    const record = buildWorkloadChange(input(before, after));

    // Assess
    expect(record?.summary).toBe(
      'Deployment shop/checkout-api: memory limit (checkout-api) 1Gi → 768Mi; image (proxy) envoy v1.27 → v1.28',
    );
  });

  it('names an added container with its short image', () => {
    // Prepare
    const before = facts({ containers: [checkoutApi()] });
    const after = facts({
      containers: [checkoutApi(), container('sidecar', { image: 'img:1' })],
    });

    // Act
    const record = buildWorkloadChange(input(before, after));

    // Assess
    expect(record?.eventType).toBe('workload_changed');
    expect(record?.summary).toBe(
      'Deployment shop/checkout-api: container sidecar added (img:1)',
    );
  });

  it.each<{ count: number; kept: number; truncated: boolean }>([
    { count: 1, kept: 1, truncated: false },
    { count: MAX_RECORDED_CHANGES - 1, kept: 49, truncated: false },
    { count: MAX_RECORDED_CHANGES, kept: 50, truncated: false },
    { count: MAX_RECORDED_CHANGES + 1, kept: 50, truncated: true },
    { count: 120, kept: 50, truncated: true },
  ])(
    'keeps $kept of $count changes with the real count',
    ({ count, kept, truncated }) => {
      // Prepare
      const names = Array.from(
        { length: count },
        (_, i) => `VAR_${String(i).padStart(3, '0')}`,
      );
      const before = facts({ containers: [checkoutApi({ env_names: [] })] });
      const after = facts({ containers: [checkoutApi({ env_names: names })] });

      // Act
      const record = buildWorkloadChange(input(before, after));

      // Assess
      expect(record?.details.change_count).toBe(count);
      expect(record?.details.truncated).toBe(truncated);
      expect(record?.details.changes).toHaveLength(kept);
      expect(record?.details.changes.at(-1)?.after).toBe(names[kept - 1]);
      const more = count > 3 ? `; +${count - 2} more` : '';
      expect(record?.summary.endsWith(more)).toBe(true);
    },
  );

  it('cuts a summary of long names at 300 characters', () => {
    // Prepare
    const names = ['A', 'B', 'C'].map((letter) => letter.repeat(130));
    const before = facts({ containers: [checkoutApi({ env_names: [] })] });
    const after = facts({ containers: [checkoutApi({ env_names: names })] });

    // Act
    const record = buildWorkloadChange(input(before, after));

    // Assess
    const summary = record?.summary ?? '';
    expect(Array.from(summary)).toHaveLength(300);
    expect(summary).toBe(
      `Deployment shop/checkout-api: env +${'A'.repeat(130)}; env +${'B'.repeat(127)}…`,
    );
  });

  it('records an init container reorder but not a main container reorder', () => {
    // Prepare
    const before = facts({
      containers: [
        container('api'),
        container('proxy'),
        container('wait', { init: true }),
        container('migrate', { init: true }),
      ],
    });
    const after = facts({
      containers: [
        container('proxy'),
        container('api'),
        container('migrate', { init: true }),
        container('wait', { init: true }),
      ],
    });

    // Act
    const record = buildWorkloadChange(input(before, after));

    // Assess
    expect(record?.eventType).toBe('workload_changed');
    expect(record?.summary).toBe(
      'Deployment shop/checkout-api: init containers reordered',
    );
    expect(record?.details.changes).toEqual([
      {
        field: 'init_containers.order',
        before: 'wait,migrate',
        after: 'migrate,wait',
      },
    ]);
  });
});
