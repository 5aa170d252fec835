/**
 * Writes series samples to a Prometheus-compatible store, in one of two
 * formats:
 *
 * - `remote_write` (default): Prometheus remote write 1.0, a `WriteRequest`
 *   protobuf compressed with snappy's block format, POSTed with
 *   `Content-Encoding: snappy` (VictoriaMetrics' `/api/v1/write`, AMP's
 *   `/api/v1/remote_write`, Prometheus with its receiver on).
 * - `vm_import`: VictoriaMetrics' `/api/v1/import/prometheus`, the text
 *   exposition format with millisecond timestamps.
 *
 * Each write is one request bounded by its deadline; the caller decides
 * what a failure means (after a sync: counted and logged, never retried).
 */
import protobuf from 'protobufjs';
import snappy from 'snappyjs';
import type { MetricsHttp } from './http.ts';
import type { SeriesSample } from './series.ts';

export type SeriesWriteFormat = 'remote_write' | 'vm_import';

export interface SeriesWriter {
  /** Writes every sample at `timestampMs` (unix ms). */
  write(samples: readonly SeriesSample[], timestampMs: number): Promise<void>;
}

export interface SeriesWriterOptions {
  /** The full write endpoint. */
  url: string;
  format: SeriesWriteFormat;
  http: MetricsHttp;
  timeoutMs: number;
}

/** remote.proto's WriteRequest, TimeSeries, Label and Sample (version 1.0). */
const remoteWriteProto = protobuf.Root.fromJSON({
  nested: {
    prometheus: {
      nested: {
        WriteRequest: {
          fields: {
            timeseries: { rule: 'repeated', type: 'TimeSeries', id: 1 },
          },
        },
        TimeSeries: {
          fields: {
            labels: { rule: 'repeated', type: 'Label', id: 1 },
            samples: { rule: 'repeated', type: 'Sample', id: 2 },
          },
        },
        Label: {
          fields: {
            name: { type: 'string', id: 1 },
            value: { type: 'string', id: 2 },
          },
        },
        Sample: {
          fields: {
            value: { type: 'double', id: 1 },
            timestamp: { type: 'int64', id: 2 },
          },
        },
      },
    },
  },
});
const WriteRequest = remoteWriteProto.lookupType('prometheus.WriteRequest');

/**
 * The remote write body: each sample one time series, its labels with
 * `__name__` sorted by name as the protocol requires, snappy-compressed.
 */
export function encodeRemoteWrite(
  samples: readonly SeriesSample[],
  timestampMs: number,
): Uint8Array {
  const timeseries = samples.map((sample) => {
    const labels = [{ name: '__name__', value: sample.name }];
    for (const name of Object.keys(sample.labels).sort()) {
      labels.push({ name, value: sample.labels[name] ?? '' });
    }
    return {
      labels,
      samples: [{ value: sample.value, timestamp: timestampMs }],
    };
  });
  // fromObject is skipped: the objects already have the message's shape.
  const encoded = WriteRequest.encode({ timeseries } as never).finish();
  return snappy.compress(encoded);
}

function escapeText(value: string): string {
  return value
    .replaceAll('\\', '\\\\')
    .replaceAll('"', '\\"')
    .replaceAll('\n', '\\n');
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

/** One sample as a text exposition line (no newline). */
export function importLine(sample: SeriesSample, timestampMs: number): string {
  const labels = Object.entries(sample.labels)
    .map(([name, value]) => `${name}="${escapeText(value)}"`)
    .join(',');
  return `${sample.name}{${labels}} ${formatValue(sample.value)} ${timestampMs}`;
}

/** The text exposition lines of the samples, one per sample. */
export function encodeImportText(
  samples: readonly SeriesSample[],
  timestampMs: number,
): string {
  let text = '';
  for (const sample of samples) text += `${importLine(sample, timestampMs)}\n`;
  return text;
}

export function seriesWriter(options: SeriesWriterOptions): SeriesWriter {
  const url = new URL(options.url);
  return {
    async write(samples, timestampMs) {
      if (samples.length === 0) return;
      if (options.format === 'vm_import') {
        await options.http({
          url,
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: encodeImportText(samples, timestampMs),
          timeoutMs: options.timeoutMs,
        });
        return;
      }
      await options.http({
        url,
        method: 'POST',
        headers: {
          'content-type': 'application/x-protobuf',
          'content-encoding': 'snappy',
          'x-prometheus-remote-write-version': '0.1.0',
        },
        body: encodeRemoteWrite(samples, timestampMs),
        timeoutMs: options.timeoutMs,
      });
    },
  };
}
