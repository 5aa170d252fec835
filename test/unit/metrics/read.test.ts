import { describe, expect, it } from 'vitest';
import { parseMetricsRequest } from '../../../shared/metrics/params.ts';
import {
  labelsKey,
  MetricsNotConfiguredError,
  readClusterMetrics,
} from '../../../shared/metrics/read.ts';
import type {
  MetricsStore,
  StoreSeries,
} from '../../../shared/metrics/store.ts';

const CLUSTER = { id: 'c1', environment_id: 'e1' };
const QS = 'start=2026-05-01T10:00:00Z&end=2026-05-01T11:00:00Z';
const T = Date.parse('2026-05-01T10:00:00Z') / 1000;

/** A store answering `series` to every query, recording what it was asked. */
function answering(series: StoreSeries[]) {
  const asked: string[] = [];
  const store: MetricsStore = {
    queryRange: async (promql) => {
      asked.push(promql);
      return series;
    },
    queryInstant: async (promql) => {
      asked.push(promql);
      return series;
    },
  };
  return { store, asked };
}

describe('readClusterMetrics', () => {
  it('drops NaN and infinite points as gaps, and a series left empty', async () => {
    // Prepare: what Prometheus writes for NaN and infinities.
    const { store } = answering([
      {
        labels: { node: 'a' },
        points: [
          [T, '1'],
          [T + 60, 'NaN'],
          [T + 120, '+Inf'],
          [T + 180, '-Inf'],
          [T + 240, '2'],
        ],
      },
      { labels: { node: 'b' }, points: [[T, 'NaN']] },
    ]);
    // Act
    const data = await readClusterMetrics(
      store,
      CLUSTER,
      parseMetricsRequest('cpu_by_node', QS),
    );
    // Assess
    expect(data).toEqual({
      series: [
        {
          labels_key: '{node="a"}',
          labels: { node: 'a' },
          data: [
            { time: '2026-05-01T10:00:00.000Z', avg_value: 1 },
            { time: '2026-05-01T10:04:00.000Z', avg_value: 2 },
          ],
        },
      ],
      truncated: false,
      step_seconds: 60,
    });
  });

  it('gives each point its step peak, a point without a finite peak is a gap, and ranks by peak then labels', async () => {
    // Prepare: a 12-hour range (5-minute steps): averages and peaks are
    // asked apart; node c's peak matches b's, so the labels break the tie.
    const step = 300;
    const averages: StoreSeries[] = [
      {
        labels: { __name__: 'x', node: 'a' },
        points: [
          [T, '5'],
          [T + step, '6'],
          [T + 2 * step, '7'],
        ],
      },
      { labels: { node: 'c' }, points: [[T, '1']] },
      { labels: { node: 'b' }, points: [[T, '2']] },
      { labels: { node: 'd' }, points: [[T, '3']] },
    ];
    const peaks: StoreSeries[] = [
      {
        labels: { node: 'a' },
        points: [
          [T, '8'],
          [T + step, 'NaN'],
        ],
      },
      { labels: { node: 'b' }, points: [[T, '9']] },
      { labels: { node: 'c' }, points: [[T, '9']] },
    ];
    const store: MetricsStore = {
      queryRange: async (promql) =>
        promql.startsWith('max_over_time') ? peaks : averages,
      queryInstant: async () => [],
    };
    // Act
    const data = await readClusterMetrics(
      store,
      CLUSTER,
      parseMetricsRequest(
        'cpu_by_node',
        'start=2026-05-01T10:00:00Z&end=2026-05-01T22:00:00Z',
      ),
    );
    // Assess
    expect(data).toEqual({
      series: [
        {
          labels_key: '{node="b"}',
          labels: { node: 'b' },
          data: [
            { time: '2026-05-01T10:00:00.000Z', avg_value: 2, max_value: 9 },
          ],
        },
        {
          labels_key: '{node="c"}',
          labels: { node: 'c' },
          data: [
            { time: '2026-05-01T10:00:00.000Z', avg_value: 1, max_value: 9 },
          ],
        },
        {
          labels_key: '{node="a"}',
          labels: { node: 'a' },
          data: [
            { time: '2026-05-01T10:00:00.000Z', avg_value: 5, max_value: 8 },
          ],
        },
      ],
      truncated: false,
      step_seconds: step,
    });
  });

  it('confines the selector to the stored cluster id and environment', async () => {
    const { store, asked } = answering([]);
    await readClusterMetrics(
      store,
      CLUSTER,
      parseMetricsRequest(
        'replicas',
        `${QS}&namespace=shop&workload=web&workload_kind=Deployment`,
      ),
    );
    expect(asked).toEqual([
      'max by (type) (k8s_workload_replicas{cluster_id="c1",environment_id="e1",namespace="shop",workload="web",workload_kind="Deployment",host_id=""})',
    ]);
  });

  it('writes the restarts rule with W = max(step, 5m) on both selectors', async () => {
    const { store, asked } = answering([]);
    await readClusterMetrics(
      store,
      CLUSTER,
      parseMetricsRequest(
        'restarts',
        'start=2026-05-01T00:00:00Z&end=2026-05-03T00:00:00Z',
      ),
    );
    expect(asked).toEqual([
      'sum(clamp_min(last_over_time(container_restarts_total{cluster_id="c1",environment_id="e1"}[900s]) - last_over_time(container_restarts_total{cluster_id="c1",environment_id="e1"}[900s] offset 900s), 0))',
    ]);
  });

  it.each([
    ['no minute inside it', '2026-05-01T12:00:10Z', '2026-05-01T12:00:50Z'],
    [
      'its only minute before start by half a second',
      '2026-05-01T12:00:00.500Z',
      '2026-05-01T12:00:59.999Z',
    ],
  ])(
    'answers series [] without asking the store for a window with %s',
    async (_, start, end) => {
      // Prepare: a store that would answer a point had it been asked.
      const ranges: unknown[] = [];
      const store: MetricsStore = {
        queryRange: async (_promql, range) => {
          ranges.push(range);
          return [{ labels: { node: 'a' }, points: [[range.start, '1']] }];
        },
        queryInstant: async () => [],
      };

      // Act: under 6 hours, so 1-minute steps.
      const data = await readClusterMetrics(
        store,
        CLUSTER,
        parseMetricsRequest('cpu_by_node', `start=${start}&end=${end}`),
      );

      // Assess
      expect(data).toEqual({ series: [], truncated: false, step_seconds: 60 });
      expect(ranges).toEqual([]);
    },
  );

  it('asks the store from the first step at or after start to end', async () => {
    // Prepare
    const ranges: unknown[] = [];
    const store: MetricsStore = {
      queryRange: async (_promql, range) => {
        ranges.push(range);
        return [];
      },
      queryInstant: async () => [],
    };
    const minute = (text: string) => Date.parse(text) / 1000;

    // Act: a window holding one minute at its start, one at its end, and
    // one starting half a second past a minute.
    for (const qs of [
      'start=2026-05-01T12:00:00Z&end=2026-05-01T12:00:30Z',
      'start=2026-05-01T12:00:30Z&end=2026-05-01T12:01:00Z',
      'start=2026-05-01T12:00:00.500Z&end=2026-05-01T12:02:10Z',
    ]) {
      await readClusterMetrics(
        store,
        CLUSTER,
        parseMetricsRequest('cpu_by_node', qs),
      );
    }

    // Assess
    expect(ranges).toEqual([
      {
        start: minute('2026-05-01T12:00:00Z'),
        end: minute('2026-05-01T12:00:30Z'),
        step: 60,
      },
      {
        start: minute('2026-05-01T12:01:00Z'),
        end: minute('2026-05-01T12:01:00Z'),
        step: 60,
      },
      {
        start: minute('2026-05-01T12:01:00Z'),
        end: minute('2026-05-01T12:02:10Z'),
        step: 60,
      },
    ]);
  });

  it('answers 503 when no store is configured', async () => {
    await expect(
      readClusterMetrics(
        undefined,
        CLUSTER,
        parseMetricsRequest('cpu_by_node', QS),
      ),
    ).rejects.toBeInstanceOf(MetricsNotConfiguredError);
  });

  it('keys labels by sorted name with quoted values', () => {
    expect(labelsKey({ workload: 'w"1', workload_kind: 'Deployment' })).toBe(
      '{workload="w\\"1",workload_kind="Deployment"}',
    );
    expect(labelsKey({})).toBe('{}');
  });
});
