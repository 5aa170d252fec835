import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../shared/errors.ts';
import { openApiDocument } from '../../../shared/http/openapi.ts';
import { resolvedRoutes, routes } from '../../../shared/http/routes.ts';
import {
  parseMetricsRequest,
  stepForRange,
} from '../../../shared/metrics/params.ts';
import { METRICS_QUERY_NAMES } from '../../../shared/metrics/queries.ts';

const HOUR = 3_600_000;
const END = '2026-05-01T12:00:00Z';
const startBefore = (ms: number) =>
  new Date(Date.parse(END) - ms).toISOString();
const range = (ms: number) => `start=${startBefore(ms)}&end=${END}`;
const WORKLOAD = '&namespace=shop&workload=web&workload_kind=Deployment';

/** The 400's message and param, or undefined when accepted. */
function refusal(query: string, qs: string) {
  try {
    parseMetricsRequest(query, qs);
    return undefined;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { param: error.details?.param, message: error.message };
  }
}

describe('metrics step table', () => {
  it.each([
    [1_000, 60],
    [6 * HOUR, 60],
    [6 * HOUR + 1, 300],
    [24 * HOUR, 300],
    [24 * HOUR + 1, 900],
    [7 * 24 * HOUR, 900],
    [7 * 24 * HOUR + 1, 3600],
    [30 * 24 * HOUR, 3600],
  ])('a range of %i ms steps by %i s', (rangeMs, step) => {
    expect(stepForRange(rangeMs)).toBe(step);
    expect(parseMetricsRequest('cpu_by_node', range(rangeMs)).stepSeconds).toBe(
      step,
    );
  });
});

describe('metrics parameters', () => {
  it('refuses an unknown query name', () => {
    expect(refusal('rate(up[5m])', range(HOUR))).toEqual({
      param: 'query',
      message: 'unknown metrics query',
    });
  });

  it('refuses an unknown and a repeated parameter', () => {
    expect(refusal('cpu_by_node', `${range(HOUR)}&step=1s`)).toEqual({
      param: 'step',
      message: 'unknown query parameter step',
    });
    expect(refusal('cpu_by_node', `${range(HOUR)}&end=${END}`)?.param).toBe(
      'end',
    );
  });

  it('refuses each filter on every query that does not take it', () => {
    const takes: Record<string, readonly string[]> = {
      cpu_by_workload: ['namespace'],
      cpu_by_pod: ['namespace', 'workload', 'workload_kind'],
      memory_by_pod: ['namespace', 'workload', 'workload_kind'],
      restarts_by_workload: ['namespace', 'workload', 'workload_kind'],
      replicas: ['namespace', 'workload', 'workload_kind'],
    };
    const values = {
      namespace: 'shop',
      workload: 'web',
      workload_kind: 'Deployment',
    };
    for (const query of METRICS_QUERY_NAMES) {
      for (const [filter, value] of Object.entries(values)) {
        if (takes[query]?.includes(filter)) continue;
        // The required filters are given, so only the extra one can refuse.
        const required = (takes[query] ?? [])
          .map((name) => `&${name}=${values[name as keyof typeof values]}`)
          .join('');
        expect(
          refusal(query, `${range(HOUR)}${required}&${filter}=${value}`),
          `${query} with ${filter}`,
        ).toEqual({
          param: filter,
          message: `${filter} is not a parameter of ${query}`,
        });
      }
    }
  });

  it('requires every filter a query takes', () => {
    expect(refusal('cpu_by_workload', range(HOUR))?.param).toBe('namespace');
    expect(
      refusal('replicas', `${range(HOUR)}&namespace=shop&workload=web`),
    ).toEqual({
      param: 'workload_kind',
      message: 'workload_kind is required by replicas',
    });
  });

  it.each([
    ['namespace', 'Shop'],
    ['namespace', 'shop"}'],
    ['namespace', 'a'.repeat(64)],
    ['workload', 'web"} or vector(1)'],
    ['workload', `${'a'.repeat(250)}.bcd`],
    ['workload_kind', 'deployment'],
    ['workload_kind', `D${'a'.repeat(63)}`],
  ])('refuses %s=%j', (param, value) => {
    const values: Record<string, string> = {
      namespace: 'shop',
      workload: 'web',
      workload_kind: 'Deployment',
      [param]: value,
    };
    const qs = Object.entries(values)
      .map(([name, v]) => `&${name}=${encodeURIComponent(v)}`)
      .join('');
    expect(refusal('cpu_by_pod', `${range(HOUR)}${qs}`)?.param).toBe(param);
  });

  it('accepts instant only as true or false, and true only on the namespace queries', () => {
    expect(refusal('cpu_by_namespace', `${range(HOUR)}&instant=yes`)).toEqual({
      param: 'instant',
      message: 'instant must be true or false',
    });
    expect(refusal('cpu_by_node', `${range(HOUR)}&instant=true`)?.param).toBe(
      'instant',
    );
    expect(
      refusal('cpu_by_node', `${range(HOUR)}&instant=false`),
    ).toBeUndefined();
    const instant = parseMetricsRequest(
      'memory_by_namespace',
      `${range(HOUR)}&instant=true`,
    );
    expect(instant).toMatchObject({ instant: true, stepSeconds: 0 });
  });

  it('refuses a bad range', () => {
    expect(refusal('cpu_by_node', `end=${END}`)?.param).toBe('start');
    expect(refusal('cpu_by_node', `start=${END}`)?.param).toBe('end');
    expect(refusal('cpu_by_node', `start=${END}&end=${END}`)?.message).toBe(
      'start must be before end',
    );
    expect(refusal('cpu_by_node', `start=yesterday&end=${END}`)?.param).toBe(
      'start',
    );
    expect(refusal('cpu_by_node', range(30 * 24 * HOUR + 1000))?.message).toBe(
      'start and end may be at most 30 days apart',
    );
    expect(refusal('cpu_by_node', range(30 * 24 * HOUR))).toBeUndefined();
  });

  it('refuses a missing start or end only after the filters and instant', () => {
    // Assess: the 400 names the first rule broken, in the handler's order.
    expect(refusal('cpu_by_node', 'namespace=shop')?.param).toBe('namespace');
    expect(refusal('cpu_by_workload', `end=${END}`)?.param).toBe('namespace');
    expect(refusal('cpu_by_node', 'instant=true')?.param).toBe('instant');
    expect(refusal('cpu_by_node', '')).toEqual({
      param: 'start',
      message: 'start is required',
    });
    expect(refusal('cpu_by_node', `start=${END}`)).toEqual({
      param: 'end',
      message: 'end is required',
    });
  });

  it('is documented with start and end required and the others optional', async () => {
    // Prepare
    const table = await resolvedRoutes(
      routes.filter((route) => route.name === 'get-cluster-metrics'),
    );

    // Act
    const document = (await openApiDocument(table)) as {
      paths: Record<
        string,
        { get: { parameters: { name: string; required: boolean }[] } }
      >;
    };

    // Assess
    const operation = document.paths[table[0]?.path ?? '']?.get;
    expect(
      Object.fromEntries(
        (operation?.parameters ?? []).map((p) => [p.name, p.required]),
      ),
    ).toEqual({
      clusterID: true,
      query: true,
      start: true,
      end: true,
      namespace: false,
      workload: false,
      workload_kind: false,
      instant: false,
    });
  });

  it('reads the filters of a per-workload query', () => {
    expect(
      parseMetricsRequest('cpu_by_pod', `${range(HOUR)}${WORKLOAD}`),
    ).toMatchObject({
      namespace: 'shop',
      workload: 'web',
      workloadKind: 'Deployment',
      instant: false,
      stepSeconds: 60,
    });
  });
});
