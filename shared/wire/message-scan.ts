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
 */

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

/** The index just past the string starting at `i` (a quote), or -1. */
function stringEnd(b: Buffer, i: number): number {
  let at = i + 1;
  for (;;) {
    const quote = b.indexOf(QUOTE, at);
    if (quote < 0) return -1;
    // Escaped when an odd number of backslashes precede it.
    let slashes = 0;
    while (b[quote - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

/** The index just past the JSON value starting at `i`, or -1. */
function valueEnd(b: Buffer, i: number): number {
  const first = b[i];
  if (first === QUOTE) return stringEnd(b, i);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let at = i; at < b.length; at++) {
      const c = b[at];
      if (c === QUOTE) {
        at = stringEnd(b, at) - 1;
        if (at < 0) return -1;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        depth++;
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return at + 1;
      }
    }
    return -1;
  }
  // A number or a literal: up to what may follow a value.
  let at = i;
  while (
    at < b.length &&
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
 * A member name as JSON.parse reads it (escapes only cost a parse), or
 * undefined for a name no parser would read.
 */
function memberName(b: Buffer, start: number, end: number): string | undefined {
  const raw = b.toString('utf8', start + 1, end - 1);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

/**
 * Calls `visit` for each member of the object at `i` (an open brace) with
 * its name and value start; `visit` returns the value's end (or -1 to give
 * up). Returns the index just past the object, or -1.
 */
function scanMembers(
  b: Buffer,
  i: number,
  visit: (name: string, valueStart: number, nameStart: number) => number,
): number {
  let at = skipSpace(b, i + 1);
  if (b[at] === CLOSE_BRACE) return at + 1;
  for (;;) {
    if (b[at] !== QUOTE) return -1;
    const nameEnd = stringEnd(b, at);
    if (nameEnd < 0) return -1;
    const name = memberName(b, at, nameEnd);
    if (name === undefined) return -1;
    const colon = skipSpace(b, nameEnd);
    if (b[colon] !== COLON) return -1;
    const end = visit(name, skipSpace(b, colon + 1), at);
    if (end < 0) return -1;
    at = skipSpace(b, end);
    if (b[at] === CLOSE_BRACE) return at + 1;
    if (b[at] !== COMMA) return -1;
    at = skipSpace(b, at + 1);
  }
}

/** The spans of the elements of the array at `i` (an open bracket). */
function scanElements(
  b: Buffer,
  i: number,
): { spans: RowSpans; end: number } | undefined {
  const spans: RowSpans = { starts: [], ends: [] };
  let at = skipSpace(b, i + 1);
  if (b[at] === CLOSE_BRACKET) return { spans, end: at + 1 };
  for (;;) {
    const end = valueEnd(b, at);
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
  const b = asBuffer(bytes);
  const start = skipSpace(b, 0);
  if (b[start] !== OPEN_BRACE) return undefined;
  const rows = new Map<string, RowSpans>();
  /** The [from, to) byte ranges cut out: each scanned array's interior. */
  const cuts: number[] = [];
  const end = scanMembers(b, start, (name, valueStart) => {
    if (!arrays.has(name)) return valueEnd(b, valueStart);
    if (b[valueStart] !== OPEN_BRACKET) {
      rows.delete(name);
      return valueEnd(b, valueStart);
    }
    const scanned = scanElements(b, valueStart);
    if (scanned === undefined) return -1;
    rows.set(name, scanned.spans);
    cuts.push(valueStart + 1, scanned.end - 1);
    return scanned.end;
  });
  if (end < 0 || skipSpace(b, end) !== b.length) return undefined;
  const pieces: Buffer[] = [];
  let from = 0;
  for (let c = 0; c < cuts.length; c += 2) {
    pieces.push(b.subarray(from, cuts[c]));
    from = cuts[c + 1] as number;
  }
  pieces.push(b.subarray(from));
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
  const b = asBuffer(bytes);
  if (b[start] !== OPEN_BRACE) return undefined;
  let found: MemberSpan | null = null;
  const end = scanMembers(b, start, (member, valueStart, nameStart) => {
    const after = valueEnd(b, valueStart);
    if (member === name) found = { nameStart, valueStart, valueEnd: after };
    return after;
  });
  return end < 0 ? undefined : found;
}

/** The spans of an array's elements, for a JSON text that is one array. */
export function scanArray(bytes: Uint8Array): RowSpans | undefined {
  const b = asBuffer(bytes);
  const start = skipSpace(b, 0);
  if (b[start] !== OPEN_BRACKET) return undefined;
  const scanned = scanElements(b, start);
  if (scanned === undefined || skipSpace(b, scanned.end) !== b.length) {
    return undefined;
  }
  return scanned.spans;
}
