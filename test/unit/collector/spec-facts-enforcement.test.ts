/**
 * The spec's three enforcement tests for workload spec facts: names, never
 * values (spec: "Workload Spec Facts").
 */
import { describe, expect, it } from 'vitest';
import { buildInventory } from '../../../shared/collector/collect.ts';
import type { K8sObject } from '../../../shared/collector/k8s.ts';
import { workloadSpecFacts } from '../../../shared/collector/spec-facts.ts';
import { specFactsSchema } from '../../../shared/wire/spec-facts.ts';
import { readRealFixture } from '../../helpers/real-fixtures.ts';

const OPTIONS = {
  agentId: '6a1f0c3e-2b7d-4e59-8c1a-3d5e7f9b0a24',
  agentVersion: 'v0.9.0',
  timestamp: '2026-10-01T12:00:00Z',
  clusterName: 'enforcement',
};

/** Every field path of a zod object schema, arrays as `[]`. */
function fieldPaths(schema: K8sObject, prefix = ''): string[] {
  let s = schema;
  for (;;) {
    const def = s?._zod?.def;
    if (
      def?.type === 'optional' ||
      def?.type === 'nullable' ||
      def?.type === 'default'
    )
      s = def.innerType;
    else if (def?.type === 'pipe') s = def.out;
    else break;
  }
  const def = s._zod.def;
  if (def.type === 'array') return fieldPaths(def.element, `${prefix}[]`);
  if (def.type !== 'object') return [prefix];
  return Object.entries(def.shape).flatMap(([k, v]) =>
    fieldPaths(v, prefix ? `${prefix}.${k}` : k),
  );
}

/** A Deployment that exercises every source of facts, and every value that must not leave. */
function deployment(): K8sObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      namespace: 'shop',
      name: 'api',
      annotations: { 'example.com/note': 'annotation-value' },
      labels: { app: 'api' },
      managedFields: [
        { manager: 'kubectl', fieldsV1: { 'f:managed-field-value': {} } },
      ],
    },
    spec: {
      replicas: 3,
      strategy: {
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 },
      },
      template: {
        metadata: {
          annotations: { 'template-note': 'template-annotation-value' },
          labels: { app: 'api' },
        },
        spec: {
          initContainers: [
            {
              name: 'migrate',
              image: 'migrate:1',
              command: ['command-value'],
              args: ['args-value'],
            },
          ],
          containers: [
            {
              name: 'web',
              image: 'web:2',
              command: ['/bin/web'],
              args: ['--password=arg-secret-value'],
              resources: {
                requests: { cpu: 0.5, memory: '0.5Gi' },
                limits: { cpu: '1', memory: '1Gi' },
              },
              env: [
                { name: 'LITERAL', value: 'env-literal-value' },
                {
                  name: 'FROM_SECRET',
                  valueFrom: {
                    secretKeyRef: { name: 'db', key: 'secret-key-selector' },
                  },
                },
                {
                  name: 'FROM_CM',
                  valueFrom: {
                    configMapKeyRef: { name: 'cfg', key: 'cm-key-selector' },
                  },
                },
                {
                  name: 'FROM_FIELD',
                  valueFrom: { fieldRef: { fieldPath: 'field-path-value' } },
                },
                { name: 'LITERAL', value: 'duplicate-value' },
              ],
              envFrom: [
                { configMapRef: { name: 'app-config' }, prefix: 'APP_' },
                { secretRef: { name: 'app-secrets' } },
              ],
              volumeMounts: [
                { name: 'secret-vol', mountPath: '/mount-path-value' },
                { name: 'projected', mountPath: '/p' },
                { name: 'csi', mountPath: '/c' },
                { name: 'data', mountPath: '/d' },
                { name: 'scratch', mountPath: '/s' },
              ],
            },
            { name: 'sidecar', image: 'side:1' },
          ],
          volumes: [
            {
              name: 'secret-vol',
              secret: {
                secretName: 'tls',
                items: [{ key: 'volume-item-key', path: 'volume-item-path' }],
              },
            },
            {
              name: 'projected',
              projected: {
                sources: [
                  {
                    configMap: {
                      name: 'proj-cm',
                      items: [{ key: 'proj-item', path: 'x' }],
                    },
                  },
                  { secret: { name: 'proj-secret' } },
                ],
              },
            },
            {
              name: 'csi',
              csi: {
                driver: 'csi-driver-value',
                volumeAttributes: { attr: 'csi-attribute-value' },
                nodePublishSecretRef: { name: 'csi-creds' },
              },
            },
            {
              name: 'data',
              persistentVolumeClaim: { claimName: 'data-claim' },
            },
            { name: 'scratch', emptyDir: {} },
          ],
        },
      },
    },
  };
}

describe('spec facts enforcement', () => {
  it('has exactly the frozen allow-list of fields', () => {
    // A new field must be added here on purpose, never by accident.
    expect(fieldPaths(specFactsSchema).sort()).toEqual(
      [
        'replicas',
        'strategy.type',
        'strategy.max_surge',
        'strategy.max_unavailable',
        'containers[].name',
        'containers[].image',
        'containers[].init',
        'containers[].requests.cpu',
        'containers[].requests.memory',
        'containers[].limits.cpu',
        'containers[].limits.memory',
        'containers[].env_names[]',
        'containers[].env_from[]',
        'containers[].volume_refs[]',
        'facts_version',
      ].sort(),
    );
  });

  it('reads the facts the spec lists from the Deployment, and only them', () => {
    expect(workloadSpecFacts(deployment())).toEqual({
      replicas: 3,
      strategy: {
        type: 'RollingUpdate',
        max_surge: '25%',
        max_unavailable: '1',
      },
      containers: [
        {
          name: 'sidecar',
          image: 'side:1',
          env_names: [],
          env_from: [],
          volume_refs: [],
        },
        {
          name: 'web',
          image: 'web:2',
          requests: { cpu: '500m', memory: '512Mi' },
          limits: { cpu: '1', memory: '1Gi' },
          env_names: ['FROM_CM', 'FROM_FIELD', 'FROM_SECRET', 'LITERAL'],
          env_from: ['configmap:app-config#APP_', 'secret:app-secrets'],
          volume_refs: [
            'configmap:proj-cm',
            'pvc:data-claim',
            'secret:csi-creds',
            'secret:proj-secret',
            'secret:tls',
          ],
        },
        {
          name: 'migrate',
          image: 'migrate:1',
          init: true,
          env_names: [],
          env_from: [],
          volume_refs: [],
        },
      ],
      facts_version: 2,
    });
  });

  it('lets no marker written outside the allowed source paths reach the facts', () => {
    // Prepare: every string gets a unique marker; a volume mount keeps its
    // volume's marker so the reference still resolves.
    const ALLOWED = [
      /^spec\.template\.spec\.(containers|initContainers)\[\d+\]\.(name|image)$/,
      /^spec\.template\.spec\.(containers|initContainers)\[\d+\]\.env\[\d+\]\.name$/,
      /^spec\.template\.spec\.(containers|initContainers)\[\d+\]\.envFrom\[\d+\]\.((configMapRef|secretRef)\.name|prefix)$/,
      /^spec\.template\.spec\.volumes\[\d+\]\.(configMap\.name|secret\.secretName|persistentVolumeClaim\.claimName|csi\.nodePublishSecretRef\.name)$/,
      /^spec\.template\.spec\.volumes\[\d+\]\.projected\.sources\[\d+\]\.(configMap|secret)\.name$/,
      /^spec\.strategy\.(type|rollingUpdate\.maxSurge|rollingUpdate\.maxUnavailable)$/,
    ];
    const markers = new Map<string, string>();
    let n = 0;
    const mark = (value: K8sObject, path: string): K8sObject => {
      if (typeof value === 'string') {
        if (/resources\./.test(path)) return value;
        const m = `mk${(n++).toString(36)}x`;
        markers.set(m, path);
        return m;
      }
      if (Array.isArray(value))
        return value.map((v, i) => mark(v, `${path}[${i}]`));
      if (value && typeof value === 'object') {
        return Object.fromEntries(
          Object.entries(value).map(([k, v]) => [
            k,
            mark(v, path ? `${path}.${k}` : k),
          ]),
        );
      }
      return value;
    };
    const marked = mark(deployment(), '');
    const original = deployment();
    for (const c of marked.spec.template.spec.containers) {
      const i = marked.spec.template.spec.containers.indexOf(c);
      for (const [j, mount] of (c.volumeMounts ?? []).entries()) {
        const volumeIndex = original.spec.template.spec.volumes.findIndex(
          (v: K8sObject) =>
            v.name ===
            original.spec.template.spec.containers[i].volumeMounts[j].name,
        );
        mount.name = marked.spec.template.spec.volumes[volumeIndex].name;
      }
    }

    // Act
    const out = JSON.stringify(
      buildInventory({ deployments: [marked] }, OPTIONS).workloads?.[0]
        ?.spec_facts,
    );

    // Assess
    const leaked = [...out.matchAll(/mk[0-9a-z]+x/g)]
      .map(([m]) => markers.get(m) ?? m)
      .filter((path) => !ALLOWED.some((re) => re.test(path)));
    expect(leaked).toEqual([]);
    expect(out).toMatch(/mk[0-9a-z]+x/);
  });

  it('keeps every planted value out of the whole serialized inventory', () => {
    // Prepare: the Deployment above, a real ReplicaSet with every valueFrom
    // kind, and an Argo CD Application with Helm values and parameters.
    const rs = readRealFixture(
      'replicaset-rook-ceph-osd-env-valuefrom-projected.json',
    );
    const asDeployment = {
      ...rs,
      kind: 'Deployment',
      metadata: { ...rs.metadata, namespace: 'rook-ceph' },
    };
    const app = {
      metadata: {
        namespace: 'argocd',
        name: 'shop',
        annotations: { a: 'annotation-value' },
      },
      spec: {
        source: {
          repoURL: 'https://git.example/x.git',
          helm: {
            values: 'helm-values-value',
            valuesObject: { k: 'helm-values-object' },
            parameters: [{ name: 'p', value: 'helm-parameter-value' }],
          },
          plugin: { env: [{ name: 'E', value: 'plugin-env-value' }] },
        },
      },
    };

    // Act
    const text = JSON.stringify(
      buildInventory(
        {
          deployments: [deployment(), asDeployment],
          argocdApplications: [app],
        },
        OPTIONS,
      ),
    );

    // Assess
    for (const planted of [
      'env-literal-value',
      'duplicate-value',
      'secret-key-selector',
      'cm-key-selector',
      'field-path-value',
      'volume-item-key',
      'volume-item-path',
      'proj-item',
      'csi-driver-value',
      'csi-attribute-value',
      'arg-secret-value',
      'args-value',
      'command-value',
      'mount-path-value',
      'template-annotation-value',
      'managed-field-value',
      'helm-values-value',
      'helm-values-object',
      'helm-parameter-value',
      'plugin-env-value',
    ]) {
      expect(text.includes(planted), planted).toBe(false);
    }
    // The rook ReplicaSet's secretKeyRef keys and fieldRef paths stay home too.
    for (const env of rs.spec.template.spec.containers.flatMap(
      (c: K8sObject) => c.env ?? [],
    )) {
      const selector =
        env.valueFrom?.secretKeyRef?.key ?? env.valueFrom?.fieldRef?.fieldPath;
      if (selector && selector.length > 6)
        expect(text.includes(`"${selector}"`), selector).toBe(false);
    }
  });
});
