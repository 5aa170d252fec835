import { describe, expect, it } from 'vitest';
import type { FactChange } from '../../../shared/changes/diff.ts';
import {
  changedSummary,
  cutSummary,
  describeChange,
  type PhraseContext,
  SUMMARY_MAX_CHARS,
  scaledSummary,
} from '../../../shared/changes/summary.ts';

const single: PhraseContext = { nameMainContainers: false };
const several: PhraseContext = { nameMainContainers: true };
const checkout = {
  kind: 'Deployment',
  namespace: 'shop',
  name: 'checkout-api',
};
const sha = (digit: string) => `sha256:${digit.repeat(64)}`;

const change = (
  field: string,
  before: string | null,
  after: string | null,
): FactChange => ({ field, before, after });

describe('describeChange', () => {
  it.each<{ change: FactChange; context: PhraseContext; phrase: string }>([
    {
      change: change('replicas', '3', '5'),
      context: single,
      phrase: 'replicas 3 → 5',
    },
    {
      change: change('replicas', null, '2'),
      context: single,
      phrase: 'replicas unset → 2',
    },
    {
      change: change('strategy.type', 'RollingUpdate', 'Recreate'),
      context: single,
      phrase: 'strategy RollingUpdate → Recreate',
    },
    {
      change: change('strategy.max_surge', '25%', '1'),
      context: single,
      phrase: 'max surge 25% → 1',
    },
    {
      change: change('strategy.max_unavailable', '25%', null),
      context: single,
      phrase: 'max unavailable 25% → unset',
    },
    {
      change: change('containers.sidecar', null, 'envoy:v1.28'),
      context: several,
      phrase: 'container sidecar added (envoy:v1.28)',
    },
    {
      change: change(
        'containers.sidecar',
        'docker.io/envoyproxy/envoy:v1.27',
        null,
      ),
      context: several,
      phrase: 'container sidecar removed (envoy:v1.27)',
    },
    {
      change: change('containers.sidecar', null, `envoy@${sha('a')}`),
      context: several,
      phrase: 'container sidecar added (envoy@sha256:aaaaaaaaaaaa)',
    },
    {
      change: change(
        'containers.checkout-api.image',
        'registry.example.com/shop/checkout-api:2.40.3',
        'registry.example.com/shop/checkout-api:2.41.0',
      ),
      context: single,
      phrase: 'image checkout-api 2.40.3 → 2.41.0',
    },
    {
      change: change(
        'containers.api.image',
        'localhost:5000/api:1',
        'localhost:5000/api:2',
      ),
      context: single,
      phrase: 'image api 1 → 2',
    },
    {
      change: change(
        'containers.api.image',
        'registry-a.example.com/shop/api:1',
        'registry-b.example.com/shop/api:1',
      ),
      context: single,
      phrase:
        'image registry-a.example.com/shop/api:1 → registry-b.example.com/shop/api:1',
    },
    {
      change: change(
        'containers.api.image',
        `api:1@${sha('a')}`,
        `api:1@${sha('b')}`,
      ),
      context: single,
      phrase: 'image api 1@sha256:aaaaaaaaaaaa → 1@sha256:bbbbbbbbbbbb',
    },
    {
      change: change('containers.api.image', `api@${sha('a')}`, 'api:2'),
      context: single,
      phrase: 'image api sha256:aaaaaaaaaaaa → 2',
    },
    {
      change: change('containers.api.image', 'api', 'api:2'),
      context: single,
      phrase: 'image api untagged → 2',
    },
    {
      change: change(
        'containers.api.image',
        `api@sha256:${'a'.repeat(12)}1${'0'.repeat(51)}`,
        `api@sha256:${'a'.repeat(12)}2${'0'.repeat(51)}`,
      ),
      context: single,
      phrase: `image api@sha256:${'a'.repeat(12)}1${'0'.repeat(51)} → api@sha256:${'a'.repeat(12)}2${'0'.repeat(51)}`,
    },
    {
      change: change('containers.api.image', 'api:1', 'api:2'),
      context: several,
      phrase: 'image api 1 → 2',
    },
    {
      change: change('containers.proxy.image', 'envoy:1', 'envoy:2'),
      context: several,
      phrase: 'image (proxy) envoy 1 → 2',
    },
    {
      change: change('containers.proxy.image', 'envoy:1', 'envoy:2'),
      context: single,
      phrase: 'image envoy 1 → 2',
    },
    {
      change: change('containers.api.requests.cpu', '250m', '500m'),
      context: single,
      phrase: 'cpu request 250m → 500m',
    },
    {
      change: change('containers.api.requests.memory', null, '512Mi'),
      context: single,
      phrase: 'memory request unset → 512Mi',
    },
    {
      change: change('containers.api.limits.cpu', '1', null),
      context: single,
      phrase: 'cpu limit 1 → unset',
    },
    {
      change: change('containers.api.limits.memory', '1Gi', '768Mi'),
      context: single,
      phrase: 'memory limit 1Gi → 768Mi',
    },
    {
      change: change('containers.api.limits.memory', '1Gi', '768Mi'),
      context: several,
      phrase: 'memory limit (api) 1Gi → 768Mi',
    },
    {
      change: change('containers.api.env', null, 'FOO'),
      context: single,
      phrase: 'env +FOO',
    },
    {
      change: change('containers.api.env', 'BAR', null),
      context: several,
      phrase: 'env (api) -BAR',
    },
    {
      change: change('containers.api.env_from', null, 'configmap:x'),
      context: single,
      phrase: 'envFrom +configmap:x',
    },
    {
      change: change('containers.api.env_from', 'secret:y', null),
      context: single,
      phrase: 'envFrom -secret:y',
    },
    {
      change: change(
        'containers.api.env_from',
        'configmap:app#OLD_',
        'configmap:app#NEW_',
      ),
      context: single,
      phrase: 'envFrom configmap:app#OLD_ → configmap:app#NEW_',
    },
    {
      change: change('containers.api.volumes', null, 'secret:y'),
      context: single,
      phrase: 'volume +secret:y',
    },
    {
      change: change('containers.api.volumes', 'pvc:data', null),
      context: several,
      phrase: 'volume (api) -pvc:data',
    },
    {
      change: change('init_containers.migrate', null, 'migrate:1'),
      context: single,
      phrase: 'init container migrate added (migrate:1)',
    },
    {
      change: change('init_containers.migrate', 'migrate:1', null),
      context: single,
      phrase: 'init container migrate removed (migrate:1)',
    },
    {
      change: change('init_containers.migrate.image', 'migrate:1', 'migrate:2'),
      context: single,
      phrase: 'image (init) migrate 1 → 2',
    },
    {
      change: change(
        'init_containers.wait.image',
        'busybox:1.36',
        'busybox:1.37',
      ),
      context: single,
      phrase: 'image (init wait) busybox 1.36 → 1.37',
    },
    {
      change: change('init_containers.migrate.limits.memory', '64Mi', '128Mi'),
      context: single,
      phrase: 'memory limit (init migrate) 64Mi → 128Mi',
    },
    {
      change: change('init_containers.migrate.requests.cpu', null, '100m'),
      context: single,
      phrase: 'cpu request (init migrate) unset → 100m',
    },
    {
      change: change('init_containers.migrate.env', null, 'FOO'),
      context: single,
      phrase: 'env (init migrate) +FOO',
    },
    {
      change: change('init_containers.migrate.env_from', 'secret:db', null),
      context: single,
      phrase: 'envFrom (init migrate) -secret:db',
    },
    {
      change: change('init_containers.migrate.volumes', null, 'secret:db-ca'),
      context: single,
      phrase: 'volume (init migrate) +secret:db-ca',
    },
    {
      change: change('init_containers.order', 'a,b', 'b,a'),
      context: single,
      phrase: 'init containers reordered',
    },
    {
      change: change('something.new', 'x', null),
      context: single,
      phrase: 'something.new x → unset',
    },
  ])('words $change.field as "$phrase"', ({ change, context, phrase }) => {
    // Act
    const text = describeChange(change, context);

    // Assess
    expect(text).toBe(phrase);
  });
});

describe('changedSummary', () => {
  it.each<{ count: number; expected: string }>([
    { count: 1, expected: 'Deployment shop/checkout-api: env +V0' },
    {
      count: 2,
      expected: 'Deployment shop/checkout-api: env +V0; env +V1',
    },
    {
      count: 3,
      expected: 'Deployment shop/checkout-api: env +V0; env +V1; env +V2',
    },
    {
      count: 4,
      expected: 'Deployment shop/checkout-api: env +V0; env +V1; +2 more',
    },
    {
      count: 60,
      expected: 'Deployment shop/checkout-api: env +V0; env +V1; +58 more',
    },
  ])(
    'lists $count changes in at most three parts, +N more included',
    ({ count, expected }) => {
      // Prepare
      const changes = Array.from({ length: count }, (_, i) =>
        change('containers.checkout-api.env', null, `V${i}`),
      );

      // Act
      const summary = changedSummary(checkout, changes, single);

      // Assess
      expect(summary).toBe(expected);
    },
  );

  it('cuts a long summary at 300 characters', () => {
    // Prepare
    const changes = ['A', 'B', 'C'].map((letter) =>
      change('containers.checkout-api.env', null, letter.repeat(150)),
    );

    // Act
    const summary = changedSummary(checkout, changes, single);

    // Assess
    expect(Array.from(summary)).toHaveLength(SUMMARY_MAX_CHARS);
    expect(summary.startsWith('Deployment shop/checkout-api: env +AAA')).toBe(
      true,
    );
    expect(summary.endsWith('B…')).toBe(true);
  });
});

describe('scaledSummary', () => {
  it.each<{ before: string | null; after: string | null; expected: string }>([
    {
      before: '3',
      after: '0',
      expected: 'Deployment shop/checkout-api scaled 3 → 0',
    },
    {
      before: '1',
      after: '10',
      expected: 'Deployment shop/checkout-api scaled 1 → 10',
    },
    {
      before: null,
      after: '2',
      expected: 'Deployment shop/checkout-api scaled unset → 2',
    },
  ])('reads "$expected"', ({ before, after, expected }) => {
    // Act
    const summary = scaledSummary(checkout, change('replicas', before, after));

    // Assess
    expect(summary).toBe(expected);
  });
});

describe('cutSummary', () => {
  it.each<{ rule: string; text: string; expected: string }>([
    {
      rule: 'keeps a summary of exactly 300 characters',
      text: 'x'.repeat(300),
      expected: 'x'.repeat(300),
    },
    {
      rule: 'cuts 301 characters to 299 and an ellipsis',
      text: 'x'.repeat(301),
      expected: `${'x'.repeat(299)}…`,
    },
    {
      rule: 'counts characters, not UTF-16 units',
      text: '→'.repeat(300),
      expected: '→'.repeat(300),
    },
    {
      rule: 'never splits a character made of a surrogate pair',
      text: `${'x'.repeat(298)}${'🚀'.repeat(3)}`,
      expected: `${'x'.repeat(298)}🚀…`,
    },
    {
      rule: 'drops spaces before the ellipsis',
      text: `${'x'.repeat(297)}  ${'y'.repeat(10)}`,
      expected: `${'x'.repeat(297)}…`,
    },
  ])('$rule', ({ text, expected }) => {
    // Act
    const cut = cutSummary(text);

    // Assess
    expect(cut).toBe(expected);
    expect(Array.from(cut).length).toBeLessThanOrEqual(SUMMARY_MAX_CHARS);
  });
});
