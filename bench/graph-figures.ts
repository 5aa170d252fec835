/**
 * The graph bench's results file (bench/graph.ts → bench/results/graph.json):
 * each scenario's p50 and p99 as supporting figures, and two objective rows
 * for docs/slo.md, each the worst scenario of its kind against the 50 ms
 * p99 target: graph reads (depth 1 and 2 from a pod, a node with 110 pods,
 * a Service with 1,000 endpoints, an Ingress) and PQL host searches. Every
 * scenario's p99 stays in the results file and the bench's output.
 */
import { median, percentile } from './common.ts';
import { type Figure, round } from './results.ts';

export const GRAPH_TARGET_P99_MS = 50;

/** What the figures depend on: the reads, the schema and the world seeded. */
export const GRAPH_MEASURES = [
  'shared/graph',
  'shared/hosts',
  'shared/pql',
  'shared/auth',
  'shared/db',
  'shared/events',
  'shared/http',
  'shared/tenancy',
  'shared/patterns.ts',
  'migrations',
  'test/fixtures/generate.ts',
  'bench/graph.ts',
  'bench/api-world.ts',
];

export interface GraphMeasured {
  name: string;
  kind: 'graph' | 'pql';
  latencies: readonly number[];
}

const OBJECTIVES = {
  graph: {
    text: 'Graph reads p99, slowest scenario',
    each: 'scenario',
    all: 'scenarios',
  },
  pql: {
    text: 'PQL host search p99, slowest search',
    each: 'search',
    all: 'searches',
  },
} as const;

/** A scenario's key in the results file. */
const keyOf = (name: string) =>
  name
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_|_$/g, '')
    .toLowerCase();

export function graphFigures(
  measured: readonly GraphMeasured[],
  world: string,
): Record<string, Figure> {
  const figures: Record<string, Figure> = {};
  const p99 = (m: GraphMeasured) => percentile(m.latencies, 99);
  for (const m of measured) {
    const key = `${m.kind}.${keyOf(m.name)}`;
    figures[`${key}.p99_ms`] = { value: round(p99(m)), unit: 'ms' };
    figures[`${key}.p50_ms`] = {
      value: round(median(m.latencies)),
      unit: 'ms',
    };
  }
  for (const kind of ['graph', 'pql'] as const) {
    const list = measured.filter((m) => m.kind === kind);
    if (list.length === 0) continue;
    const worst = list.reduce((w, m) => (p99(m) > p99(w) ? m : w));
    const over = list.filter((m) => p99(m) > GRAPH_TARGET_P99_MS).length;
    figures[`objective.${kind}_worst_p99_ms`] = {
      value: round(p99(worst)),
      unit: 'ms',
      objective: OBJECTIVES[kind].text,
      target: {
        max: GRAPH_TARGET_P99_MS,
        text: `≤ ${GRAPH_TARGET_P99_MS} ms, every ${OBJECTIVES[kind].each}`,
      },
      detail: `${worst.name} (p50 ${median(worst.latencies).toFixed(1)} ms); ${over} of ${list.length} ${OBJECTIVES[kind].all} over ${GRAPH_TARGET_P99_MS} ms; ${world}, ${worst.latencies.length} calls each, one at a time`,
    };
  }
  return figures;
}
