import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { describe, expect, it } from 'vitest';
import { clusterRoleRules } from '../../shared/agent/resources.ts';
import { AGENT_VERSION } from '../../shared/agent/version.ts';
import { configSchema } from '../../shared/config.ts';

const DIR = join(import.meta.dirname, '../../infra/agent');

/** The Kubernetes API schema of each kind the manifests hold. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1 Namespace': Namespace,
  'v1 ServiceAccount': ServiceAccount,
  'rbac.authorization.k8s.io/v1 ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1 ClusterRoleBinding': ClusterRoleBinding,
  'apps/v1 Deployment': Deployment,
  'networking.k8s.io/v1 NetworkPolicy': NetworkPolicy,
};

// biome-ignore lint/suspicious/noExplicitAny: manifests read as YAML.
type Manifest = any;

const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
  .sort();

function load(file: string): Manifest[] {
  return yaml
    .loadAll(readFileSync(join(DIR, file), 'utf8'))
    .filter((d) => d !== null && d !== undefined);
}

const all = files.flatMap((f) => load(f).map((doc) => ({ file: f, doc })));
const one = (kind: string): Manifest => {
  const found = all.filter((m) => m.doc.kind === kind);
  expect(found).toHaveLength(1);
  return found[0]?.doc;
};

describe('infra/agent manifests', () => {
  it.each(all.map((m) => [m.file, m.doc.kind, m.doc]))(
    '%s (%s) is valid against the Kubernetes API schema',
    (_file, _kind, doc) => {
      // Prepare
      const Model = MODELS[`${doc.apiVersion} ${doc.kind}`];

      // Act
      const validate = () => new Model!(doc as never).validate();

      // Assess
      expect(
        Model,
        `no schema for ${doc.apiVersion} ${doc.kind}`,
      ).toBeDefined();
      expect(validate).not.toThrow();
    },
  );

  it('has a kustomization naming every manifest', () => {
    // Act
    const kustomization = yaml.load(
      readFileSync(join(DIR, 'kustomization.yaml'), 'utf8'),
    ) as { resources: string[] };

    // Assess
    expect([...kustomization.resources].sort()).toEqual(files);
  });

  it('grants exactly what the agent reads: get, list and watch on its kinds, get on pods/log', () => {
    // Prepare
    const role = one('ClusterRole');

    // Act
    const rules = role.rules.map((r: Manifest) => ({
      apiGroups: r.apiGroups,
      resources: r.resources,
      verbs: r.verbs,
    }));

    // Assess
    expect(rules).toEqual(clusterRoleRules());
  });

  it('never grants secrets, configmaps, a wildcard or a write verb', () => {
    // Prepare
    const role = one('ClusterRole');
    const writeVerbs = [
      'create',
      'update',
      'patch',
      'delete',
      'deletecollection',
      '*',
    ];

    // Act
    const resources = role.rules.flatMap((r: Manifest) => r.resources);
    const verbs = role.rules.flatMap((r: Manifest) => r.verbs);
    const groups = role.rules.flatMap((r: Manifest) => r.apiGroups);

    // Assess
    for (const forbidden of ['secrets', 'configmaps', '*']) {
      expect(resources).not.toContain(forbidden);
    }
    for (const verb of writeVerbs) expect(verbs).not.toContain(verb);
    expect(groups).not.toContain('*');
    expect(
      role.rules.every((r: Manifest) => r.nonResourceURLs === undefined),
    ).toBe(true);
  });

  it('binds the role to the service account the Deployment runs as', () => {
    // Prepare
    const binding = one('ClusterRoleBinding');
    const deployment = one('Deployment');
    const account = one('ServiceAccount');

    // Assess
    expect(binding.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: one('ClusterRole').metadata.name,
    });
    expect(binding.subjects).toEqual([
      {
        kind: 'ServiceAccount',
        name: account.metadata.name,
        namespace: account.metadata.namespace,
      },
    ]);
    expect(deployment.spec.template.spec.serviceAccountName).toBe(
      account.metadata.name,
    );
  });

  it('runs one agent of this version, never two at once, locked down', () => {
    // Prepare
    const deployment = one('Deployment');
    const [container] = deployment.spec.template.spec.containers;

    // Assess
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy.type).toBe('Recreate');
    expect(container.image).toMatch(new RegExp(`:${AGENT_VERSION}$`));
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    // Every variable the manifest sets is one the config schema knows.
    for (const { name } of container.env) {
      expect(Object.keys(configSchema().shape)).toContain(name);
    }
  });

  it('lets the agent reach only DNS, the API server and NATS', () => {
    // Prepare
    const policy = one('NetworkPolicy');
    const deployment = one('Deployment');

    // Act
    const ports = policy.spec.egress.flatMap((rule: Manifest) =>
      rule.ports.map((p: Manifest) => `${p.protocol}/${p.port}`),
    );

    // Assess
    expect(policy.spec.podSelector.matchLabels).toEqual(
      deployment.spec.template.metadata.labels,
    );
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(ports.sort()).toEqual(
      ['TCP/443', 'TCP/6443', 'TCP/4222', 'UDP/53', 'TCP/53'].sort(),
    );
    expect(
      policy.spec.egress.every((rule: Manifest) => rule.ports.length > 0),
    ).toBe(true);
    // DNS goes to the kube-dns pods, or to NodeLocal DNSCache's address.
    const dns = policy.spec.egress.find((rule: Manifest) =>
      rule.ports.some((p: Manifest) => p.port === 53),
    );
    expect(dns.to).toContainEqual({ ipBlock: { cidr: '169.254.20.10/32' } });
    expect(dns.to).toContainEqual(
      expect.objectContaining({
        podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
      }),
    );
  });
});
