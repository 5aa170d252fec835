import { describe, expect, it } from 'vitest';
import { hpaTargets } from '../../../shared/changes/hpa.ts';

describe('hpaTargets', () => {
  const targets = hpaTargets([
    { namespace: 'shop', target: { kind: 'Deployment', name: 'checkout-api' } },
    { namespace: 'shop', target: { kind: 'Rollout', name: 'cart' } },
    { namespace: 'batch', target: null },
  ]);

  it.each<{ namespace: string; kind: string; name: string; managed: boolean }>([
    {
      namespace: 'shop',
      kind: 'Deployment',
      name: 'checkout-api',
      managed: true,
    },
    { namespace: 'shop', kind: 'Rollout', name: 'cart', managed: true },
    {
      namespace: 'other',
      kind: 'Deployment',
      name: 'checkout-api',
      managed: false,
    },
    {
      namespace: 'shop',
      kind: 'StatefulSet',
      name: 'checkout-api',
      managed: false,
    },
    {
      namespace: 'shop',
      kind: 'deployment',
      name: 'checkout-api',
      managed: false,
    },
    { namespace: 'shop', kind: 'Deployment', name: 'cart', managed: false },
    { namespace: 'batch', kind: 'Deployment', name: 'worker', managed: false },
  ])(
    'answers $managed for $kind $namespace/$name',
    ({ namespace, kind, name, managed }) => {
      // Act
      const answer = targets.isHpaManaged(namespace, kind, name);

      // Assess
      expect(answer).toBe(managed);
    },
  );

  it('counts each targeted workload once and skips HPAs without a target', () => {
    // Prepare
    const hpas = [
      { namespace: 'shop', target: { kind: 'Deployment', name: 'api' } },
      { namespace: 'shop', target: { kind: 'Deployment', name: 'api' } },
      { namespace: 'shop', target: null },
    ];

    // Act
    const lookup = hpaTargets(hpas);

    // Assess
    expect(lookup.size).toBe(1);
  });

  it('does not confuse names that join to the same text', () => {
    // Prepare
    const lookup = hpaTargets([
      { namespace: 'a', target: { kind: 'Deployment', name: 'b/c' } },
    ]);

    // Act
    const answer = lookup.isHpaManaged('a/b', 'Deployment', 'c');

    // Assess
    expect(answer).toBe(false);
  });

  it('manages nothing without HPAs', () => {
    // Act
    const lookup = hpaTargets([]);

    // Assess
    expect(lookup.isHpaManaged('shop', 'Deployment', 'api')).toBe(false);
  });
});
