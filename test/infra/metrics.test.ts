/**
 * The cluster metrics store in the CDK app: an AMP workspace by default, the
 * sync function allowed to remote-write to it and only the metrics:read
 * routes' functions to query it, both signed; or an operator's own store by
 * URL, unsigned and with no AMP grant.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { functionNames } from '../../infra/names.ts';
import { permissionsOf, routes } from '../../shared/http/routes.ts';
import { type SynthesizedApp, synthesizeApp } from './synth.ts';

type Json = Record<string, unknown>;
const names = functionNames('k8s-inventory');

function resourcesOf(template: Template, type: string): [string, Json][] {
  const all = template.toJSON().Resources as Record<string, Json>;
  return Object.entries(all).filter(([, r]) => r.Type === type);
}

/** The environment variables of the function with that physical name. */
function environmentOf(template: Template, functionName: string): Json {
  const found = resourcesOf(template, 'AWS::Lambda::Function').find(
    ([, r]) => (r.Properties as Json).FunctionName === functionName,
  );
  expect(found, functionName).toBeDefined();
  const props = found?.[1].Properties as { Environment: { Variables: Json } };
  return props.Environment.Variables;
}

/** Every IAM action a template's policies grant. */
function actionsIn(template: Template): string[] {
  return resourcesOf(template, 'AWS::IAM::Policy').flatMap(([, r]) => {
    const statements = (
      (r.Properties as Json).PolicyDocument as { Statement: Json[] }
    ).Statement;
    return statements.flatMap((s) => [s.Action].flat() as string[]);
  });
}

const metricsRoutes = routes.filter((route) =>
  permissionsOf(route.access).includes('metrics:read'),
);

describe('metrics store (AMP workspace)', () => {
  let app: SynthesizedApp;

  beforeAll(() => {
    app = synthesizeApp();
  });

  it('creates one AMP workspace in its own stack', () => {
    const metrics = app.inventory.metrics;
    expect(metrics).toBeDefined();
    if (!metrics) return;
    const workspaces = resourcesOf(
      Template.fromStack(metrics),
      'AWS::APS::Workspace',
    );
    expect(workspaces).toHaveLength(1);
  });

  it('lets the sync function remote-write to it, signed, and nothing else of AMP', () => {
    const ingest = app.templates.ingest;
    const env = environmentOf(ingest, names.sync);
    expect(JSON.stringify(env.METRICS_WRITE_URL)).toContain(
      '/api/v1/remote_write',
    );
    expect(env.METRICS_SIGV4_REGION).toEqual({ Ref: 'AWS::Region' });
    expect(env.METRICS_URL).toBeUndefined();
    const aps = actionsIn(ingest).filter((a) => a.startsWith('aps:'));
    expect(aps).toEqual(['aps:RemoteWrite']);
  });

  it('lets only the metrics:read routes query it', () => {
    const api = app.templates.api;
    const aps = actionsIn(api).filter((a) => a.startsWith('aps:'));
    expect(metricsRoutes.map((route) => route.name)).toEqual([
      'get-cluster-metrics',
    ]);
    expect(aps).toEqual(metricsRoutes.map(() => 'aps:QueryMetrics'));
    for (const route of routes) {
      const env = environmentOf(api, names.api(route));
      if (metricsRoutes.includes(route)) {
        expect(JSON.stringify(env.METRICS_URL), route.name).toContain(
          '/workspaces/',
        );
        expect(env.METRICS_SIGV4_REGION).toEqual({ Ref: 'AWS::Region' });
      } else {
        expect(env.METRICS_URL, route.name).toBeUndefined();
      }
    }
  });
});

describe('metrics store (an operator-run store by URL)', () => {
  it('writes and queries that store unsigned, with no AMP workspace or grant', () => {
    // Act
    const app = synthesizeApp({
      metricsUrl: 'https://metrics.example.internal/select/0/prometheus',
    });
    // Assess
    expect(app.inventory.metrics).toBeUndefined();
    const sync = environmentOf(app.templates.ingest, names.sync);
    expect(sync.METRICS_WRITE_URL).toBe(
      'https://metrics.example.internal/select/0/prometheus/api/v1/write',
    );
    expect(sync.METRICS_SIGV4_REGION).toBeUndefined();
    for (const template of [app.templates.ingest, app.templates.api]) {
      expect(actionsIn(template).filter((a) => a.startsWith('aps:'))).toEqual(
        [],
      );
    }
  });
});
