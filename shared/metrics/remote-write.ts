/**
 * Prometheus remote write 1.0's body, encoded by hand: a large cluster's
 * sync writes some 16,000 series, and a generic protobuf library's object
 * walk cost hundreds of milliseconds of the sync's time for them (see
 * docs/decisions.md). The message (remote.proto) is small and fixed:
 *
 *   WriteRequest { repeated TimeSeries timeseries = 1; }
 *   TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
 *   Label        { string name = 1; string value = 2; }
 *   Sample       { double value = 1; int64 timestamp = 2; }
 *
 * Every field is length-delimited (wire type 2) except Sample's: a 64-bit
 * double (wire type 1) and a varint. Each series is one sample; its labels
 * are `__name__` then the sample's labels sorted by name, as the protocol
 * requires. Strings are written as UTF-8 (a lone surrogate as U+FFFD, as
 * TextEncoder does). The body is the message snappy-compressed (block
 * format), as `Content-Encoding: snappy` says.
 */
import snappy from 'snappyjs';
import type { SeriesSample } from './series.ts';

const NAME_LABEL = '__name__';

// Field tags: (field number << 3) | wire type.
const TAG_TIMESERIES = 0x0a; // 1, length-delimited
const TAG_LABEL = 0x0a; // 1, length-delimited
const TAG_SAMPLE = 0x12; // 2, length-delimited
const TAG_NAME = 0x0a; // 1, length-delimited
const TAG_VALUE = 0x12; // 2, length-delimited
const TAG_DOUBLE = 0x09; // 1, 64-bit
const TAG_TIMESTAMP = 0x10; // 2, varint

/** Bytes of a varint holding a non-negative integer below 2^53. */
function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    size++;
  }
  return size;
}

/** UTF-8 byte length of `text`, a lone surrogate counting as U+FFFD (3). */
function utf8Size(text: string): number {
  let size = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) size += 1;
    else if (code < 0x800) size += 2;
    else if (
      code >= 0xd800 &&
      code <= 0xdbff &&
      i + 1 < text.length &&
      (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00
    ) {
      size += 4;
      i++;
    } else size += 3;
  }
  return size;
}

/** A growing buffer the message is written into, front to back. */
class Output {
  bytes = new Uint8Array(1 << 16);
  view = new DataView(this.bytes.buffer);
  at = 0;

  reserve(size: number): void {
    if (this.at + size <= this.bytes.length) return;
    let length = this.bytes.length * 2;
    while (length < this.at + size) length *= 2;
    const grown = new Uint8Array(length);
    grown.set(this.bytes.subarray(0, this.at));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  byte(value: number): void {
    this.bytes[this.at++] = value;
  }

  varint(value: number): void {
    while (value >= 0x80) {
      this.bytes[this.at++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    this.bytes[this.at++] = value;
  }

  double(value: number): void {
    this.view.setFloat64(this.at, value, true);
    this.at += 8;
  }

  /** `text` as UTF-8; `size` is its utf8Size. */
  utf8(text: string, size: number): void {
    const bytes = this.bytes;
    let at = this.at;
    if (size === text.length) {
      for (let i = 0; i < text.length; i++) bytes[at++] = text.charCodeAt(i);
      this.at = at;
      return;
    }
    for (let i = 0; i < text.length; i++) {
      let code = text.charCodeAt(i);
      if (code < 0x80) {
        bytes[at++] = code;
        continue;
      }
      if (code < 0x800) {
        bytes[at++] = 0xc0 | (code >> 6);
        bytes[at++] = 0x80 | (code & 0x3f);
        continue;
      }
      if (
        code >= 0xd800 &&
        code <= 0xdbff &&
        i + 1 < text.length &&
        (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00
      ) {
        code =
          0x10000 + ((code - 0xd800) << 10) + (text.charCodeAt(++i) - 0xdc00);
        bytes[at++] = 0xf0 | (code >> 18);
        bytes[at++] = 0x80 | ((code >> 12) & 0x3f);
        bytes[at++] = 0x80 | ((code >> 6) & 0x3f);
        bytes[at++] = 0x80 | (code & 0x3f);
        continue;
      }
      if ((code & 0xf800) === 0xd800) code = 0xfffd; // a lone surrogate
      bytes[at++] = 0xe0 | (code >> 12);
      bytes[at++] = 0x80 | ((code >> 6) & 0x3f);
      bytes[at++] = 0x80 | (code & 0x3f);
    }
    this.at = at;
  }
}

/**
 * Each Label message seen, encoded once for one body: most pairs repeat
 * in every series (the cluster's ids, `__name__`, namespaces, kinds) and
 * the rest a few times (a pod's name in its CPU, memory and restarts).
 */
class Labels {
  private readonly encoded = new Map<string, Map<string, Uint8Array>>();
  private readonly scratch = new Output();

  /** The field: tag, length, then the Label message of name and value. */
  of(name: string, value: string): Uint8Array {
    let byValue = this.encoded.get(name);
    if (byValue === undefined) {
      byValue = new Map();
      this.encoded.set(name, byValue);
    }
    let field = byValue.get(value);
    if (field === undefined) {
      const n = utf8Size(name);
      const v = utf8Size(value);
      const size = 1 + varintSize(n) + n + 1 + varintSize(v) + v;
      const out = this.scratch;
      out.at = 0;
      out.reserve(1 + varintSize(size) + size);
      out.byte(TAG_LABEL);
      out.varint(size);
      out.byte(TAG_NAME);
      out.varint(n);
      out.utf8(name, n);
      out.byte(TAG_VALUE);
      out.varint(v);
      out.utf8(value, v);
      field = out.bytes.slice(0, out.at);
      byValue.set(value, field);
    }
    return field;
  }
}

/** The WriteRequest message of the samples, not compressed. */
export function encodeWriteRequest(
  samples: readonly SeriesSample[],
  timestampMs: number,
): Uint8Array {
  const out = new Output();
  const labels = new Labels();
  const sampleSize = 1 + 8 + 1 + varintSize(timestampMs);
  const fields: Uint8Array[] = [];
  for (const sample of samples) {
    const names = Object.keys(sample.labels);
    if (names.length > 1) names.sort();
    fields.length = names.length + 1;
    fields[0] = labels.of(NAME_LABEL, sample.name);
    let seriesSize = fields[0].length;
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      const field = labels.of(name, sample.labels[name] as string);
      fields[i + 1] = field;
      seriesSize += field.length;
    }
    seriesSize += 1 + varintSize(sampleSize) + sampleSize;
    out.reserve(1 + varintSize(seriesSize) + seriesSize);
    out.byte(TAG_TIMESERIES);
    out.varint(seriesSize);
    for (const field of fields) {
      out.bytes.set(field, out.at);
      out.at += field.length;
    }
    out.byte(TAG_SAMPLE);
    out.varint(sampleSize);
    out.byte(TAG_DOUBLE);
    out.double(sample.value);
    out.byte(TAG_TIMESTAMP);
    out.varint(timestampMs);
  }
  return out.bytes.subarray(0, out.at);
}

/**
 * The remote write body: each sample one time series at `timestampMs`
 * (unix ms, non-negative), snappy-compressed.
 */
export function encodeRemoteWrite(
  samples: readonly SeriesSample[],
  timestampMs: number,
): Uint8Array {
  return snappy.compress(encodeWriteRequest(samples, timestampMs));
}
