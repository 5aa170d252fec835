import { describe, expect, it } from 'vitest';
import { RejectedInventoryError } from '../../../shared/errors.ts';
import { parseInventory } from '../../../shared/wire/inventory.ts';
import {
  repoUrlHasUserinfo,
  stripRepoUrlUserinfo,
} from '../../../shared/wire/repo-url.ts';
import { generateInventory } from '../../fixtures/generate.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests edit raw JSON at will, as a faulty agent could
function message(): Record<string, any> {
  return JSON.parse(JSON.stringify(generateInventory({ size: 'small' })));
}

function reasonOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(RejectedInventoryError);
    return (err as RejectedInventoryError).reason;
  }
  throw new Error('expected the inventory to be refused');
}

const application = () => ({
  namespace: 'argocd',
  name: 'shop-api',
  uid: '8d1c3f0e-55aa-4d5e-9a51-0c7b8c1a2b3c',
  labels: {},
  created_at: '2026-10-01T10:00:00Z',
  project: 'default',
  destination: {
    server: 'https://kubernetes.default.svc',
    namespace: 'shop',
  },
  source: {
    repo_url: 'https://github.com/acme/deploy.git',
    path: 'shop/api',
    target_revision: 'main',
  },
  sync_status: 'Synced',
  health_status: 'Healthy',
  revision: '9f2c1e7a4b',
  operation: {
    phase: 'Succeeded',
    started_at: '2026-10-01T10:58:00Z',
    finished_at: '2026-10-01T10:59:00Z',
    initiated_by: 'automated',
  },
  resources: [
    { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'api' },
  ],
});

describe('parseInventory (v1.1 additions)', () => {
  it('still accepts a v1 message without pod usage or Argo CD applications', () => {
    // Prepare
    const input = message();
    for (const pod of input.pods) delete pod.usage;

    // Act
    const inventory = parseInventory(input);

    // Assess
    expect(inventory.argocd_applications).toBeUndefined();
    expect(inventory.pods?.every((pod) => pod.usage === null)).toBe(true);
  });

  it('reads an ingress without default_backend, as an older agent sends it, as having none', () => {
    // Prepare
    const input = message();
    input.ingresses[0].default_backend = { service: 'web', port: 'http' };
    input.ingresses[1].default_backend = null;
    delete input.ingresses[2].default_backend;

    // Act
    const ingresses = parseInventory(input).ingresses;

    // Assess
    expect(ingresses?.map((i) => i.default_backend)).toEqual([
      { service: 'web', port: 'http' },
      null,
      null,
    ]);
  });

  it('refuses a default backend port that is neither a number nor a name', () => {
    // Prepare
    const input = message();
    input.ingresses[0].default_backend = { service: 'web', port: 1.5 };

    // Act
    const reason = reasonOf(() => parseInventory(input));

    // Assess
    expect(reason).toContain('ingresses[0].default_backend.port');
  });

  it('keeps a pod usage as sent and a null one as no metrics', () => {
    // Prepare
    const input = message();
    input.pods[0].usage = { cpu_millicores: 120, memory_bytes: 64 << 20 };
    input.pods[1].usage = null;

    // Act
    const inventory = parseInventory(input);

    // Assess
    expect(inventory.pods?.[0]?.usage).toEqual({
      cpu_millicores: 120,
      memory_bytes: 64 << 20,
    });
    expect(inventory.pods?.[1]?.usage).toBeNull();
  });

  it('refuses a fractional pod usage, naming the field', () => {
    // Prepare
    const input = message();
    input.pods[2].usage = { cpu_millicores: 1.5, memory_bytes: 1 };

    // Act
    const reason = reasonOf(() => parseInventory(input));

    // Assess
    expect(reason).toContain('pods[2].usage.cpu_millicores');
  });

  it('reads Argo CD applications, defaulting what was left out', () => {
    // Prepare
    const input = message();
    const bare = { namespace: 'argocd', name: 'bare' };
    input.argocd_applications = [application(), bare];

    // Act
    const apps = parseInventory(input).argocd_applications;

    // Assess
    expect(apps?.[0]?.source.repo_url).toBe(
      'https://github.com/acme/deploy.git',
    );
    expect(apps?.[0]?.destination).toEqual({
      server: 'https://kubernetes.default.svc',
      name: null,
      namespace: 'shop',
    });
    expect(apps?.[0]?.operation?.initiated_by).toBe('automated');
    expect(apps?.[1]).toMatchObject({
      operation: null,
      resources: [],
      source: { repo_url: null, path: null },
      sync_status: null,
    });
  });

  it('keeps a missing or null argocd_applications undefined: not collected', () => {
    // Prepare
    const input = message();
    input.argocd_applications = null;

    // Act
    const inventory = parseInventory(input);

    // Assess
    expect(inventory.argocd_applications).toBeUndefined();
  });

  it('drops Helm values, parameters and annotations an agent should not have sent', () => {
    // Prepare
    const input = message();
    const app = application() as Record<string, unknown>;
    app.source = {
      ...(app.source as object),
      helm: { values: 'password: hunter2', parameters: [{ name: 'x' }] },
    };
    app.annotations = { note: 'x' };
    input.argocd_applications = [app];

    // Act
    const stored = JSON.stringify(parseInventory(input).argocd_applications);

    // Assess
    expect(stored).not.toContain('hunter2');
    expect(stored).not.toContain('annotations');
  });

  it.each([
    'https://deploy:ghp_secret@github.com/acme/deploy.git',
    'ssh://git@github.com/acme/deploy.git',
    'git@github.com:acme/deploy.git',
    // What a URL parser reads past: leading space or tab, a newline inside,
    // no slashes after a special scheme.
    ' https://deploy:ghp_secret@github.com/acme/deploy.git',
    '\thttps://deploy:ghp_secret@github.com/acme/deploy.git',
    'https://deploy:ghp_sec\nret@github.com/acme/deploy.git',
    'https:deploy:ghp_secret@github.com/acme/deploy.git',
  ])(
    'refuses a repo_url that still carries userinfo (%j), naming the field',
    (url) => {
      // Prepare
      const input = message();
      const app = application();
      app.source.repo_url = url;
      input.argocd_applications = [application(), app];

      // Act
      const reason = reasonOf(() => parseInventory(input));

      // Assess
      expect(reason).toContain('argocd_applications[1].source.repo_url');
      expect(reason).toContain('credentials');
      expect(reason).not.toContain('ghp_secret');
    },
  );
});

describe('stripRepoUrlUserinfo', () => {
  it.each([
    ['https://u:p@github.com/a/b.git', 'https://github.com/a/b.git'],
    ['https://token@host.example/a', 'https://host.example/a'],
    ['ssh://git@github.com/a/b.git', 'ssh://github.com/a/b.git'],
    ['git@github.com:a/b.git', 'github.com:a/b.git'],
    ['https://a@b@host/x?y=1', 'https://host/x?y=1'],
    ['https://github.com/a/b@v1', 'https://github.com/a/b@v1'],
    ['oci://registry.example/charts', 'oci://registry.example/charts'],
    ['https://charts.example', 'https://charts.example'],
    [' https://u:p@github.com/a/b.git\n', 'https://github.com/a/b.git'],
    ['\tgit@github.com:a/b.git', 'github.com:a/b.git'],
    ['https://u:p@git\thub.com/a', 'https://github.com/a'],
  ])('turns %j into %j, which carries no userinfo', (url, stripped) => {
    // Act
    const out = stripRepoUrlUserinfo(url);

    // Assess
    expect(out).toBe(stripped);
    expect(repoUrlHasUserinfo(out as string)).toBe(false);
  });

  it('reports userinfo only in the authority, never in a path', () => {
    expect(repoUrlHasUserinfo('https://x:y@h/p')).toBe(true);
    expect(repoUrlHasUserinfo('https://h/p@v1')).toBe(false);
    expect(repoUrlHasUserinfo('/local/path@x')).toBe(false);
  });

  it('sends nothing for a URL whose userinfo only the URL parser finds', () => {
    // WHATWG reads `https:u:p@h/x` as https://u:p@h/x; git's scp-like form
    // reads no userinfo in it. Fail closed: no repo_url rather than a token.
    expect(stripRepoUrlUserinfo('https:u:ghp_secret@github.com/a')).toBe(
      undefined,
    );
  });
});
