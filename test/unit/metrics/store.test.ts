import { describe, expect, it } from 'vitest';
import { MetricsStoreError } from '../../../shared/metrics/http.ts';
import { prometheusStore } from '../../../shared/metrics/store.ts';

/** A store over a transport that answers `body` to every request. */
const answering = (body: unknown) =>
  prometheusStore({
    baseUrl: 'http://store.test',
    http: async () => ({
      status: 200,
      body: Buffer.from(JSON.stringify(body)),
    }),
  });

const matrix = (values: unknown) => ({
  status: 'success',
  data: {
    resultType: 'matrix',
    result: [{ metric: { node: 'a' }, values }],
  },
});

describe('prometheusStore', () => {
  const range = { start: 0, end: 120, step: 60 };

  it('reads a range answer as series of [time, value text] points', async () => {
    // Act
    const series = await answering(
      matrix([
        [0, '1'],
        [60, 'NaN'],
      ]),
    ).queryRange('up', range);
    // Assess
    expect(series).toEqual([
      {
        labels: { node: 'a' },
        points: [
          [0, '1'],
          [60, 'NaN'],
        ],
      },
    ]);
  });

  it('reads an instant answer as one point per series', async () => {
    // Act
    const series = await answering({
      status: 'success',
      data: {
        resultType: 'vector',
        result: [{ metric: { node: 'a' }, value: [60, '2'] }],
      },
    }).queryInstant('up', 60);
    // Assess
    expect(series).toEqual([{ labels: { node: 'a' }, points: [[60, '2']] }]);
  });

  it.each([
    ['a value as a number', [[0, 1]]],
    ['a point without its value', [[0]]],
    ['a point with a third element', [[0, '1', 'x']]],
    ['a time as text', [['0', '1']]],
    ['points that are not a list', { 0: [0, '1'] }],
  ])('refuses %s as an unreadable body', async (_label, values) => {
    // Act
    const read = answering(matrix(values)).queryRange('up', range);
    // Assess
    await expect(read).rejects.toThrow(MetricsStoreError);
    await expect(read).rejects.toThrow('unreadable body');
  });

  it('refuses an instant point of the wrong shape', async () => {
    // Act
    const read = answering({
      status: 'success',
      data: {
        resultType: 'vector',
        result: [{ metric: {}, value: [60] }],
      },
    }).queryInstant('up', 60);
    // Assess
    await expect(read).rejects.toThrow('unreadable body');
  });
});
