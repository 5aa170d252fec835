/**
 * Writes series samples to a Prometheus-compatible store, in one of two
 * formats:
 *
 * - `remote_write` (default): Prometheus remote write 1.0, a `WriteRequest`
 *   protobuf (./remote-write.ts) compressed with snappy's block format, POSTed with
 *   `Content-Encoding: snappy` (VictoriaMetrics' `/api/v1/write`, AMP's
 *   `/api/v1/remote_write`, Prometheus with its receiver on).
 * - `vm_import`: VictoriaMetrics' `/api/v1/import/prometheus`, the text
 *   exposition format with millisecond timestamps.
 *
 * Each write is one request bounded by its deadline; the caller decides
 * what a failure means (after a sync: counted and logged, never retried).
 */
import type { MetricsHttp } from './http.ts';
import { encodeRemoteWrite } from './remote-write.ts';
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
