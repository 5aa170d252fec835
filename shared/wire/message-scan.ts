/**
 * Finds the byte span of each row of a message's kind arrays without
 * parsing the rows: a resync's unchanged rows are then digested straight
 * from the bytes received and never parsed at all (issue #15).
 *
 * The scan reads only the message's structure: the top-level object's
 * members, and in each kind array where one element ends and the next
 * begins (strings are skipped whole, brackets counted). It does not check
 * what it skips. That is sound because nothing it returns is trusted on its
 * own: the envelope (the message with each kind array emptied) is parsed,
 * and every row span is either parsed or matches the digest of bytes that
 * were parsed and accepted before; a span of valid JSON ends where a parser
 * would end it, so when all the pieces parse, the whole message parses to
 * the same value. Whatever the scan does not recognize, it gives up on
 * (`undefined`), and the caller parses the message whole.
 *
 * Rows are objects, most of a message's bytes: where each ends is found by
 * a small WebAssembly function reading 64 bytes at a time
 * (object-end.wat), over a copy of the bytes in its memory.
 */
import { OBJECT_END_WASM } from './object-end-wasm.ts';

/** Where the rows of one array are, in the scanned bytes: [start, end). */
export interface RowSpans {
  starts: number[];
  ends: number[];
}

export interface ScannedMessage {
  /** The message with the rows of each array in `rows` cut out, as bytes. */
  envelope: Uint8Array;
  /** The spans of each scanned array, by top-level member name. */
  rows: Map<string, RowSpans>;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(b: Uint8Array, i: number): number {
  while (isSpace(b[i])) i++;
  return i;
}

/**
 * The bytes scanned, copied to the WebAssembly memory (every read site
 * sees one kind of array), and a view that reads them four at a time.
 */
interface Scanned {
  b: Uint8Array;
  words: DataView;
}

/** Node's WebAssembly global, whose types no lib loaded here declares. */
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object) => { exports: unknown };
    };
  }
).WebAssembly;

const objectEndModule = new wasm.Instance(
  new wasm.Module(Buffer.from(OBJECT_END_WASM, 'base64')),
).exports as {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  objectEnd(start: number, length: number): number;
  lastMember(start: number, end: number, name: bigint, length: number): number;
};

/** Zero bytes after the copy: objectEnd reads up to 63 bytes past it. */
const PADDING = 64;
const PAGE = 65536;

/**
 * Copies `bytes` to the start of the WebAssembly memory, grown when they
 * do not fit (it keeps the largest message's size). One scan at a time
 * owns the memory: each call that scans copies its bytes first, and none
 * keeps them past its return.
 */
function scanned(bytes: Uint8Array): Scanned {
  const { memory } = objectEndModule;
  const need = bytes.length + PADDING;
  if (need > memory.buffer.byteLength) {
    memory.grow(Math.ceil((need - memory.buffer.byteLength) / PAGE));
  }
  const b = new Uint8Array(memory.buffer, 0, bytes.length);
  b.set(bytes);
  new Uint8Array(memory.buffer, bytes.length, PADDING).fill(0);
  return { b, words: new DataView(memory.buffer, 0, bytes.length) };
}

const QUOTES = 0x22222222;
const BACKSLASHES = 0x5c5c5c5c;
const LOW_BITS = 0x7f7f7f7f;

/**
 * The bytes of the 32-bit word `x` that are zero, each as its high bit
 * (0x80 in that byte, exactly: no borrow crosses bytes), else 0.
 */
function zeroBytes(x: number): number {
  return ~(((x & LOW_BITS) + LOW_BITS) | x | LOW_BITS);
}

/**
 * The index of the first quote or backslash among the four bytes at
 * `at`, read as one little-endian word, or -1 when there is none.
 */
function quoteOrBackslash(words: DataView, at: number): number {
  const x = words.getInt32(at, true);
  const found = zeroBytes(x ^ QUOTES) | zeroBytes(x ^ BACKSLASHES);
  if (found === 0) return -1;
  // The lowest flagged byte comes first: its high bit's index, over 8.
  return at + ((31 - Math.clz32(found & -found)) >> 3);
}

/**
 * The index just past the string starting at `i` (a quote), or -1. A
 * backslash escapes the byte after it, whatever that is, so a quote ends
 * the string when an even number of backslashes precede it, as a parser
 * reads it. Strings are most of a message's bytes, and a loop over single
 * bytes costs more than the rest of the scan: the bytes are read four at
 * a time, each word tested for a quote or a backslash at once (a native
 * Buffer.indexOf per string cost more in calls than it saved: the median
 * string is a dozen bytes).
 */
function stringEnd({ b, words }: Scanned, i: number): number {
  const n = b.length;
  let at = i + 1;
  while (at + 4 <= n) {
    const found = quoteOrBackslash(words, at);
    if (found < 0) {
      at += 4;
    } else if (b[found] === QUOTE) {
      return found + 1;
    } else {
      at = found + 2;
    }
  }
  // The last few bytes of the message, one at a time.
  for (; at < n; at++) {
    const c = b[at];
    if (c === QUOTE) return at + 1;
    if (c === BACKSLASH) at++;
  }
  return -1;
}

/** The index just past the JSON value starting at `i`, or -1. */
function valueEnd(s: Scanned, i: number): number {
  const b = s.b;
  const n = b.length;
  const first = b[i];
  if (first === QUOTE) return stringEnd(s, i);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    return objectEndModule.objectEnd(i, n);
  }
  // A number or a literal: up to what may follow a value.
  let at = i;
  while (
    at < n &&
    b[at] !== COMMA &&
    b[at] !== CLOSE_BRACE &&
    b[at] !== CLOSE_BRACKET &&
    !isSpace(b[at])
  ) {
    at++;
  }
  return at === i ? -1 : at;
}

/**
 * The name of the member whose name string is [start, end), as JSON.parse
 * reads it (escapes only cost a parse), or undefined for a name no parser
 * would read.
 */
function memberName(
  b: Uint8Array,
  start: number,
  end: number,
): string | undefined {
  const raw = asBuffer(b).toString('utf8', start + 1, end - 1);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

/**
 * Whether the member name string [start, end) is plain ASCII with no
 * escape, so reads as its bytes (else as memberName reads it).
 */
function isPlainName(b: Uint8Array, start: number, end: number): boolean {
  for (let at = start + 1; at < end - 1; at++) {
    const c = b[at] as number;
    if (c === BACKSLASH || c >= 0x80) return false;
  }
  return true;
}

/** Whether the plain name string [start, end) is `nameBytes`. */
function isPlainNamed(
  b: Uint8Array,
  start: number,
  end: number,
  nameBytes: Uint8Array,
): boolean {
  if (end - start - 2 !== nameBytes.length) return false;
  for (let k = 0; k < nameBytes.length; k++) {
    if (b[start + 1 + k] !== nameBytes[k]) return false;
  }
  return true;
}

/**
 * Calls `visit` for each member of the object at `i` (an open brace) with
 * its name string's span and its value's start; `visit` returns the
 * value's end (or -1 to give up). Returns the index just past the object,
 * or -1.
 */
function scanMembers(
  s: Scanned,
  i: number,
  visit: (nameStart: number, nameEnd: number, valueStart: number) => number,
): number {
  const b = s.b;
  let at = skipSpace(b, i + 1);
  if (b[at] === CLOSE_BRACE) return at + 1;
  for (;;) {
    if (b[at] !== QUOTE) return -1;
    const nameEnd = stringEnd(s, at);
    if (nameEnd < 0) return -1;
    const colon = skipSpace(b, nameEnd);
    if (b[colon] !== COLON) return -1;
    const end = visit(at, nameEnd, skipSpace(b, colon + 1));
    if (end < 0) return -1;
    at = skipSpace(b, end);
    if (b[at] === CLOSE_BRACE) return at + 1;
    if (b[at] !== COMMA) return -1;
    at = skipSpace(b, at + 1);
  }
}

/** The spans of the elements of the array at `i` (an open bracket). */
function scanElements(
  s: Scanned,
  i: number,
): { spans: RowSpans; end: number } | undefined {
  const b = s.b;
  const spans: RowSpans = { starts: [], ends: [] };
  let at = skipSpace(b, i + 1);
  if (b[at] === CLOSE_BRACKET) return { spans, end: at + 1 };
  for (;;) {
    const end = valueEnd(s, at);
    if (end < 0) return undefined;
    spans.starts.push(at);
    spans.ends.push(end);
    at = skipSpace(b, end);
    if (b[at] === CLOSE_BRACKET) return { spans, end: at + 1 };
    if (b[at] !== COMMA) return undefined;
    at = skipSpace(b, at + 1);
  }
}

/** A Buffer over the same memory (no copy). */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Scans a message: the spans of the rows of each top-level array named in
 * `arrays`, and the message without them. A member named twice counts as
 * JSON.parse counts it, by its last occurrence. Undefined when the bytes
 * are not an object this scan can follow.
 */
export function scanMessage(
  bytes: Uint8Array,
  arrays: ReadonlySet<string>,
): ScannedMessage | undefined {
  const s = scanned(bytes);
  const b = s.b;
  const start = skipSpace(b, 0);
  if (b[start] !== OPEN_BRACE) return undefined;
  const rows = new Map<string, RowSpans>();
  /** The [from, to) byte ranges cut out: each scanned array's interior. */
  const cuts: number[] = [];
  const end = scanMembers(s, start, (nameStart, nameEnd, valueStart) => {
    const name = memberName(b, nameStart, nameEnd);
    if (name === undefined) return -1;
    if (!arrays.has(name)) return valueEnd(s, valueStart);
    if (b[valueStart] !== OPEN_BRACKET) {
      rows.delete(name);
      return valueEnd(s, valueStart);
    }
    const elements = scanElements(s, valueStart);
    if (elements === undefined) return -1;
    rows.set(name, elements.spans);
    cuts.push(valueStart + 1, elements.end - 1);
    return elements.end;
  });
  if (end < 0 || skipSpace(b, end) !== b.length) return undefined;
  const source = asBuffer(bytes);
  const pieces: Buffer[] = [];
  let from = 0;
  for (let c = 0; c < cuts.length; c += 2) {
    pieces.push(source.subarray(from, cuts[c]));
    from = cuts[c + 1] as number;
  }
  pieces.push(source.subarray(from));
  return { envelope: Buffer.concat(pieces), rows };
}

/** Where one member of an object is: its name's start, its value's span. */
export interface MemberSpan {
  nameStart: number;
  valueStart: number;
  valueEnd: number;
}

/**
 * The member `name` of the object at `start`, by its last occurrence as
 * JSON.parse reads it: null when the object has no such member, undefined
 * when the bytes are no object this scan can follow.
 */
export function memberSpan(
  bytes: Uint8Array,
  start: number,
  name: string,
): MemberSpan | null | undefined {
  const spans = memberSpans(bytes, start, [name]);
  return spans === undefined ? undefined : (spans[0] ?? null);
}

/** Member names' bytes, kept: the same few names are looked up per row. */
const NAME_BYTES = new Map<string, Uint8Array>();

function bytesOfName(name: string): Uint8Array {
  let bytes = NAME_BYTES.get(name);
  if (bytes === undefined && NAME_BYTES.size < 64) {
    bytes = Buffer.from(name);
    NAME_BYTES.set(name, bytes);
  }
  return bytes ?? Buffer.from(name);
}

/**
 * The members `names` of the object at `start` in one pass, each by its
 * last occurrence as JSON.parse reads it (null when absent); undefined when
 * the bytes are no object this scan can follow.
 */
export function memberSpans(
  bytes: Uint8Array,
  start: number,
  names: readonly string[],
): (MemberSpan | null)[] | undefined {
  // The object's bytes only, as memberSpan: the copy is the row's.
  const s = scanned(bytes.subarray(start));
  const named = scanNamed(s, 0, names.map(bytesOfName), names, start);
  return named.end < 0 ? undefined : named.found;
}

/**
 * memberSpans of each row at `rows` of `bytes`, over one copy of them all
 * (a kind's rows, each of which is read): undefined for a row this scan
 * does not follow, or does not end where the row does.
 */
export function memberSpansOfRows(
  bytes: Uint8Array,
  rows: RowSpans,
  names: readonly string[],
): ((MemberSpan | null)[] | undefined)[] {
  const n = rows.starts.length;
  if (n === 0) return [];
  const first = rows.starts[0] as number;
  const s = scanned(bytes.subarray(first, rows.ends[n - 1]));
  const nameBytes = names.map(bytesOfName);
  const quoted = names.map(quotedName);
  const plain = quoted.every((name) => name !== undefined);
  const escapes = new Occurrences(s.b, BACKSLASH_BYTES);
  const out: ((MemberSpan | null)[] | undefined)[] = new Array(n);
  for (let r = 0; r < n; r++) {
    const at = (rows.starts[r] as number) - first;
    const end = (rows.ends[r] as number) - first;
    if (plain && s.b[at] === OPEN_BRACE && escapes.nextIn(at, end) < 0) {
      out[r] = plainMembers(s, at, end, quoted as QuotedName[], first);
      continue;
    }
    const scan = scanNamed(s, at, nameBytes, names, first);
    // Ended elsewhere: it read past its row (or gave up).
    out[r] = scan.end === end ? scan.found : undefined;
  }
  return out;
}

const BACKSLASH_BYTES = Buffer.from('\\');

/**
 * Where some bytes (a backslash: rare, so found natively, a search per
 * occurrence) occur in the scanned bytes, walked forward row by row: each
 * row asks about its own span, in order.
 */
class Occurrences {
  readonly #haystack: Buffer;
  readonly #needle: Uint8Array;
  /** The next occurrence at or after the last span asked about, or -1. */
  #next: number;

  constructor(bytes: Uint8Array, needle: Uint8Array) {
    this.#haystack = asBuffer(bytes);
    this.#needle = needle;
    this.#next = this.#haystack.indexOf(needle, 0);
  }

  /**
   * The first that starts in [from, end), or -1; each call's `from` is at
   * or after the last one's.
   */
  nextIn(from: number, end: number): number {
    this.#skipTo(from);
    return this.#next >= 0 && this.#next < end ? this.#next : -1;
  }

  #skipTo(start: number): void {
    if (this.#next >= 0 && this.#next < start) {
      this.#next = this.#haystack.indexOf(this.#needle, start);
    }
  }
}

/** A member name as lastMember looks for it: its quoted bytes, as a word. */
interface QuotedName {
  word: bigint;
  length: number;
}

/**
 * `name` quoted, as lastMember reads it (up to 8 bytes, little-endian):
 * undefined for a name longer or that its bytes do not spell plainly.
 */
function quotedName(name: string): QuotedName | undefined {
  const bytes = Buffer.from(`"${name}"`, 'latin1');
  if (bytes.length > 8 || !/^[\x20-\x7e]*$/.test(name) || /["\\]/.test(name)) {
    return undefined;
  }
  let word = 0n;
  for (let k = bytes.length - 1; k >= 0; k--) {
    word = (word << 8n) | BigInt(bytes[k] as number);
  }
  return { word, length: bytes.length };
}

/**
 * scanNamed of a row [at, end) whose bytes hold no backslash, without
 * reading every member: every quote is a real one and every name reads as
 * its bytes, so a member named `name` is a string at the row's own depth
 * that its quoted bytes start, followed by a colon (lastMember), and the
 * last one is the one JSON.parse keeps. The row's other bytes are not
 * checked, as scanNamed does not check what it skips: a row of valid JSON
 * gives what scanNamed gives.
 */
function plainMembers(
  s: Scanned,
  at: number,
  end: number,
  names: readonly QuotedName[],
  base: number,
): (MemberSpan | null)[] | undefined {
  const b = s.b;
  const found: (MemberSpan | null)[] = names.map(() => null);
  for (let k = 0; k < names.length; k++) {
    const { word, length } = names[k] as QuotedName;
    // A string of the name not followed by a colon is a value: the one
    // before it may be the member.
    for (let before = end; ; ) {
      const nameStart = objectEndModule.lastMember(at, before, word, length);
      if (nameStart < 0) break;
      const colon = skipSpace(b, nameStart + length);
      if (b[colon] !== COLON) {
        before = nameStart;
        continue;
      }
      const valueStart = skipSpace(b, colon + 1);
      const after = valueEnd(s, valueStart);
      if (after < 0 || after > end) return undefined;
      found[k] = {
        nameStart: base + nameStart,
        valueStart: base + valueStart,
        valueEnd: base + after,
      };
      break;
    }
  }
  return found;
}

/**
 * The members `names` (their bytes `nameBytes`) of the object at `i` of
 * `s`, their spans offset by `base`, and the index just past it (-1: the
 * scan gave up or it is no object).
 */
function scanNamed(
  s: Scanned,
  i: number,
  nameBytes: readonly Uint8Array[],
  names: readonly string[],
  base: number,
): { found: (MemberSpan | null)[]; end: number } {
  const b = s.b;
  const found: (MemberSpan | null)[] = names.map(() => null);
  if (b[i] !== OPEN_BRACE) return { found, end: -1 };
  const end = scanMembers(s, i, (nameStart, nameEnd, valueStart) => {
    const after = valueEnd(s, valueStart);
    // Looked at once per member: most are plain, compared byte for byte.
    const plain = isPlainName(b, nameStart, nameEnd);
    const read = plain ? undefined : memberName(b, nameStart, nameEnd);
    // A name no parser would read.
    if (!plain && read === undefined) return -1;
    for (let k = 0; k < names.length; k++) {
      const named = plain
        ? isPlainNamed(b, nameStart, nameEnd, nameBytes[k] as Uint8Array)
        : read === names[k];
      if (named) {
        found[k] = {
          nameStart: base + nameStart,
          valueStart: base + valueStart,
          valueEnd: base + after,
        };
      }
    }
    return after;
  });
  return { found, end };
}

/** The spans of an array's elements, for a JSON text that is one array. */
export function scanArray(bytes: Uint8Array): RowSpans | undefined {
  const s = scanned(bytes);
  const start = skipSpace(s.b, 0);
  if (s.b[start] !== OPEN_BRACKET) return undefined;
  const elements = scanElements(s, start);
  if (elements === undefined || skipSpace(s.b, elements.end) !== s.b.length) {
    return undefined;
  }
  return elements.spans;
}

/**
 * The index just past the object or array at `start` (its open bracket),
 * or -1, as the scan finds it. Exported for its tests.
 */
export function objectEnd(bytes: Uint8Array, start: number): number {
  return objectEndModule.objectEnd(start, scanned(bytes).b.length);
}
