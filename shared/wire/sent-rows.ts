/**
 * One kind array's rows as the agent sent them: their bytes, parsed only
 * when read. A resync digests each row straight from its bytes and reads
 * (parses, validates) only the rows whose digests it does not know.
 */
import {
  type MemberSpan,
  memberSpan,
  memberSpans,
  memberSpansOfRows,
  type RowSpans,
  scanArray,
} from './message-scan.ts';

/** A row's bytes cut around one of its members (see SentRows.around). */
export interface CutRow {
  /** From the row's start to the member's value (its name included). */
  head: Uint8Array;
  /** The member's value. */
  value: Uint8Array;
  /** From after the member's value to the row's end. */
  tail: Uint8Array;
}

/** A row's bytes with the values of some of its members cut out. */
export interface RowWithout {
  /**
   * For each member named, where its value was cut out of the bytes left
   * (their offset in `left`, in the order named), or -1 when it is absent.
   */
  at: number[];
  /** The bytes left, in order: the row's bytes between the values cut. */
  left: Uint8Array[];
  /** Their total length. */
  length: number;
}

/**
 * The body a message's rows were cut from, as received: one per decoded
 * message, shared by its kinds' rows.
 */
export interface SentMessage {
  /** The whole body: a refusal names a row that is no JSON by its place. */
  readonly bytes: Uint8Array;
  /**
   * Whether the body spells any text PostgreSQL cannot store: read once,
   * natively, so a body that spells none spares every row its own look.
   */
  readonly mayHoldUnstorable: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export class SentRows {
  readonly length: number;
  /**
   * The message the rows were cut from; undefined for rows given as values
   * (fromValues), which were checked as values.
   */
  readonly message: SentMessage | undefined;
  readonly #bytes: Buffer;
  readonly #spans: RowSpans;
  readonly #values: unknown[];
  /** Every row's spans of some members, by their names (#rowsMembers). */
  readonly #named = new Map<string, ((MemberSpan | null)[] | undefined)[]>();

  /** Rows at `spans` of `bytes`, the body of `message` when it has one. */
  constructor(bytes: Buffer, spans: RowSpans, message?: SentMessage) {
    this.#bytes = bytes;
    this.#spans = spans;
    this.message = message;
    this.length = spans.starts.length;
    this.#values = new Array(this.length);
  }

  /**
   * Rows given as values: their bytes are what `JSON.stringify` writes, as
   * for a message an agent built the same way.
   */
  static fromValues(values: readonly unknown[]): SentRows {
    const bytes = Buffer.from(JSON.stringify(values));
    const spans = scanArray(bytes);
    // JSON.stringify writes what the scan follows; undefined becomes null.
    if (spans === undefined)
      throw new Error('unscannable JSON.stringify output');
    return new SentRows(bytes, spans);
  }

  /**
   * Row `i`'s bytes as sent: a plain view over them, not a Buffer (a
   * resync takes one per row, and a Buffer's subarray costs a few times
   * more to make).
   */
  bytes(i: number): Uint8Array {
    return this.#view(
      this.#spans.starts[i] as number,
      this.#spans.ends[i] as number,
    );
  }

  /**
   * Every row's bytes at once: the bytes from the first row's start to the
   * last row's end, and where each row starts and ends in them. The two fix
   * every row, its order and their number (a kind's digest).
   */
  whole(): { bytes: Uint8Array; bounds: Uint32Array } {
    const { starts, ends } = this.#spans;
    if (this.length === 0) {
      return { bytes: new Uint8Array(0), bounds: new Uint32Array(0) };
    }
    const first = starts[0] as number;
    const bounds = new Uint32Array(2 * this.length);
    for (let i = 0; i < this.length; i++) {
      bounds[2 * i] = (starts[i] as number) - first;
      bounds[2 * i + 1] = (ends[i] as number) - first;
    }
    return {
      bytes: this.#view(first, ends[this.length - 1] as number),
      bounds,
    };
  }

  #view(start: number, end: number): Uint8Array {
    const bytes = this.#bytes;
    return new Uint8Array(bytes.buffer, bytes.byteOffset + start, end - start);
  }

  /** Where row `i`'s bytes start in the body (`copy` reads them). */
  start(i: number): number {
    return this.#spans.starts[i] as number;
  }

  /** Where row `i`'s bytes end in the body. */
  end(i: number): number {
    return this.#spans.ends[i] as number;
  }

  /**
   * Copies the body's bytes [start, end) (within rows' spans) into
   * `target` at `at`: no view made, for a loop over every row.
   */
  copy(target: Buffer, at: number, start: number, end: number): void {
    this.#bytes.copy(target, at, start, end);
  }

  /**
   * Row `i`'s members `names` as `without` finds them (body offsets, null:
   * absent), as kept for every row: undefined when the row is no object
   * the scan can follow.
   */
  memberSpans(
    i: number,
    names: readonly string[],
  ): readonly (MemberSpan | null)[] | undefined {
    return this.#rowsMembers(names)[i];
  }

  /** Row `i`'s text as sent. */
  text(i: number): string {
    return this.#bytes.toString(
      'utf8',
      this.#spans.starts[i],
      this.#spans.ends[i],
    );
  }

  /**
   * Row `i` parsed as sent, not validated (the same value on every read);
   * throws a SyntaxError for bytes that are no JSON value.
   */
  value(i: number): unknown {
    if (!(i in this.#values)) this.#values[i] = JSON.parse(this.text(i));
    return this.#values[i];
  }

  /** Every row parsed as sent. */
  values(): unknown[] {
    return Array.from({ length: this.length }, (_, i) => this.value(i));
  }

  /**
   * The string values of row `i`'s members `names` (each by its last
   * occurrence, as JSON.parse reads it), read from their bytes without
   * parsing the row: undefined when one is absent or no string, or the
   * row is no object the scan can follow.
   */
  strings(i: number, names: readonly string[]): string[] | undefined {
    const start = this.#spans.starts[i] as number;
    const end = this.#spans.ends[i] as number;
    const spans = memberSpans(this.#view(0, end), start, names);
    if (spans === undefined) return undefined;
    const out: string[] = [];
    for (const span of spans) {
      if (span === null || this.#bytes[span.valueStart] !== QUOTE) {
        return undefined;
      }
      out.push(this.#stringAt(span.valueStart, span.valueEnd));
    }
    return out;
  }

  /**
   * The values of row `i`'s members `names` (each by its last occurrence,
   * as JSON.parse reads it; undefined when absent), each parsed from its
   * own bytes, not the whole row's: undefined when the row is no object
   * the scan can follow. For a few small members of a large row (an
   * event's times, a node's addresses), read on every resync of every row:
   * found in every row at the first read, in one scan of the kind's rows.
   */
  members(i: number, names: readonly string[]): unknown[] | undefined {
    const spans = this.#rowsMembers(names)[i];
    if (spans === undefined) return undefined;
    return spans.map((span) => {
      if (span === null) return undefined;
      return this.#bytes[span.valueStart] === QUOTE
        ? this.#stringAt(span.valueStart, span.valueEnd)
        : JSON.parse(
            this.#bytes.toString('utf8', span.valueStart, span.valueEnd),
          );
    });
  }

  /**
   * The JSON string at [start, end) (its quotes included) as JSON.parse
   * reads it. With no escape and no control character its value is the
   * bytes between the quotes, read without a parse (a resync's keys).
   */
  #stringAt(start: number, end: number): string {
    const bytes = this.#bytes;
    for (let at = start + 1; at < end - 1; at++) {
      const c = bytes[at] as number;
      if (c === BACKSLASH || c < 0x20) {
        return JSON.parse(bytes.toString('utf8', start, end)) as string;
      }
    }
    return bytes.toString('utf8', start + 1, end - 1);
  }

  /**
   * Row `i`'s bytes without the values of its members `names` (each by its
   * last occurrence, as JSON.parse reads it; an earlier one stays in the
   * bytes left), and where each was: undefined when the row is no object
   * the scan can follow. The bytes left and where the values were fix the
   * row but for those values.
   */
  without(i: number, names: readonly string[]): RowWithout | undefined {
    const start = this.#spans.starts[i] as number;
    const end = this.#spans.ends[i] as number;
    const spans = this.#rowsMembers(names)[i];
    if (spans === undefined) return undefined;
    const cuts: { span: MemberSpan; k: number }[] = [];
    spans.forEach((span, k) => {
      if (span !== null) cuts.push({ span, k });
    });
    cuts.sort((a, b) => a.span.valueStart - b.span.valueStart);
    const at = names.map(() => -1);
    const left: Uint8Array[] = [];
    let from = start;
    let length = 0;
    for (const { span, k } of cuts) {
      const { valueStart, valueEnd } = span;
      left.push(this.#view(from, valueStart));
      length += valueStart - from;
      at[k] = length;
      from = valueEnd;
    }
    left.push(this.#view(from, end));
    length += end - from;
    return { at, left, length };
  }

  /**
   * Every row's members `names`, found in one scan of the rows' bytes and
   * kept: a kind whose digest leaves them out cuts every row around them,
   * then reads them (members) to validate them on their own; a step that
   * reads some members of every row reads them all.
   */
  #rowsMembers(
    names: readonly string[],
  ): ((MemberSpan | null)[] | undefined)[] {
    const key = names.join('\n');
    let spans = this.#named.get(key);
    if (spans === undefined) {
      spans = memberSpansOfRows(this.#bytes, this.#spans, names);
      this.#named.set(key, spans);
    }
    return spans;
  }

  /**
   * Row `i`'s bytes cut around the value of its member `name` (its last
   * occurrence, as JSON.parse reads it): null when the row has no such
   * member, undefined when its bytes are no object the scan can follow.
   */
  around(i: number, name: string): CutRow | null | undefined {
    const start = this.#spans.starts[i] as number;
    const end = this.#spans.ends[i] as number;
    // Up to the row's end only: the scan must not read past it.
    const span = memberSpan(this.#view(0, end), start, name);
    if (span === undefined || span === null) return span;
    return {
      head: this.#view(start, span.valueStart),
      value: this.#view(span.valueStart, span.valueEnd),
      tail: this.#view(span.valueEnd, end),
    };
  }
}
