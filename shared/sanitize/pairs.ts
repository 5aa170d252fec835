/**
 * Secrets recognized by their name: `key: value`, `key=value`, `key := v`,
 * JSON `"key": …` (escaped JSON inside a string too), Ruby/PHP
 * `'key' => …`, URL-encoded `key%3D…`, and command-line flags in the space
 * form (`--token x`; the `=` form is a key=value pair). Which names count is
 * decided once, in keys.ts.
 *
 * Where a value ends:
 * - quoted (`"…"`, `'…'`, or `\"…\"` inside a string): at its closing quote;
 * - a header dump (`[Basic …]` of a Go header map, `["Basic …"]` of
 *   json.Marshal(http.Header), `[]string{"Basic …"}` of %#v): at its
 *   closing bracket, each quoted string inside hidden;
 * - `key: value` with a bare key: at the end of the line (of the quoted
 *   string, when nested), so a value with spaces goes whole;
 * - otherwise at the next space, `&`, `;` or `,` (a JSON value also at `}`
 *   or `]`), and a scheme word takes its credential with it
 *   (`api_key=Bearer x`).
 *
 * The quoted value of an ordinary key is text of its own and is sanitized
 * again, two levels deep: a logfmt `msg="login pass=…"` loses the nested
 * secret, the message stays.
 *
 * `key = value` with spaces around the `=` counts only at the start of a
 * line: mid-line it is too often code or prose (`if token == nil`).
 */

import { hidesValue, secretKeyKind } from './keys.ts';
import { REDACTED } from './shapes.ts';

const MAX_NESTING = 2;

/**
 * A name, optionally quoted (also `\"` escaped, or a Ruby `:symbol`), and
 * its separator. A quoted name may close a subscript (`$_POST['password'] =`,
 * `os.environ["DB_PASSWORD"] =`). The name must start a word, so scanning
 * stays linear.
 */
const KEY_AND_SEPARATOR =
  /(?<![\w./\\])(\\?["']|:)?([A-Za-z_][\w./-]*)(\1\]?)?([ \t]*)(=>|:=|:|=)([ \t]*)/g;

/** One scanner per nesting level: a nested scan must not move its parent's. */
const SCANNERS = Array.from(
  { length: MAX_NESTING + 1 },
  () => new RegExp(KEY_AND_SEPARATOR.source, 'g'),
);

/** One or more redaction marks side by side (`[REDACTED]`, `$[REDACTED]`). */
const MARKS = String.raw`(?:\$?\[[A-Za-z_ -]*\])+`;

/**
 * A value that is already a redaction mark or a placeholder (`${TOKEN}`,
 * `<password>`, `[PASSWORD]`, `{{ .Values.x }}`, `XXXXXXXX`, empty), with or
 * without a scheme word before it: left as it is. `$[REDACTED]` too: a
 * `$NAME` placeholder whose random-looking name the backstop hid, and marks
 * side by side (`[REDACTED][REDACTED]`: a value hidden in two parts), so a
 * second pass changes nothing.
 */
const ALREADY_REDACTED = new RegExp(
  String.raw`^(?:(?:bearer|basic|token)[ \t]+)?(?:${MARKS}|\*{3,}|<[^<>]*>|\$\{[^}]*\}|\$[A-Za-z_]\w*|\{\{.*\}\}|([Xx#*.])\1{3,}|)$`,
  'i',
);

/** Redaction marks (or bracketed placeholders) at the start of a value. */
const LEADING_MARKS = new RegExp(`^${MARKS}`);

/** The auth schemes whose word takes its credential into a pair's value. */
const SCHEMES = 'bearer|basic|digest|negotiate|token';

const SCHEME_THEN_CREDENTIAL = new RegExp(
  String.raw`^(?:${SCHEMES})[ \t]+[^\s"',;&]+`,
  'i',
);

/**
 * An Authorization key's unquoted value (`Authorization=ApiKey k3y…`,
 * Proxy-Authorization, HTTP_AUTHORIZATION): a scheme and its credential are
 * one value, whatever the scheme word, as in the header form. {@link SCHEMES}
 * is kept for other keys (`api_key=Bearer x`), where a word before a blank
 * is only taken for a scheme when it is a known one.
 *
 * The scheme is one token, the credential the next token, or a list of
 * auth-params to its last comma-joined one (AWS SigV4's `Credential=…,
 * SignedHeaders=…, Signature=…`, Digest's `username="…", response="…"`).
 * A bare credential followed by other text (`Authorization=abc123 next`) has
 * the same form, so the next token is taken only when it looks like a
 * credential ({@link CREDENTIAL_LIKE}), or when the first token is letters
 * alone, which reads as a scheme word (`ApiKey`, `SSWS`), not a credential:
 * at worst one word of prose after it is hidden too. A `key=value` pair or a
 * `word:` after it is the next field, never a credential, and stays. A mark
 * is never read as a scheme: its credential-looking next token would be
 * taken, and the mark left would take the next one on the next pass.
 */
const AUTH_PARAM = String.raw`[\w-]+[ \t]*=[ \t]*(?:"[^"\n]*"|[^\s",]+)`;
const AUTHORIZATION_VALUE = new RegExp(
  String.raw`^(?:([A-Za-z]+)|[A-Za-z][\w.+-]*)[ \t]+(?:${AUTH_PARAM}(?:[ \t]*,[ \t]*${AUTH_PARAM})+|(?![\w.-]+(?:=[^=\s]|:(?!\S)))([^\s"',;&]+))`,
);

/** A digit, an upper-case letter past the first, or inner punctuation. */
const CREDENTIAL_LIKE = /\d|.[A-Z]|[.~+/=_%:-]./;

/** A header's name that carries credentials, however prefixed. */
const AUTHORIZATION_KEY = /authorization$/i;

/** The end of an Authorization value that starts at `start`, or -1. */
function authorizationEnd(text: string, start: number): number {
  const m = AUTHORIZATION_VALUE.exec(text.slice(start, start + 4096));
  if (m === null) return -1;
  const [whole, letters, token] = m;
  if (token !== undefined && letters === undefined) {
    if (!CREDENTIAL_LIKE.test(token)) return -1;
  }
  return start + whole.length;
}

interface Quote {
  open: string;
  close: string;
}

function quoteAt(text: string, at: number): Quote | undefined {
  const c = text[at];
  if (c === '"' || c === "'") return { open: c, close: c };
  if (c === '\\' && (text[at + 1] === '"' || text[at + 1] === "'")) {
    const q = `\\${text[at + 1]}`;
    return { open: q, close: q };
  }
  return undefined;
}

/** The end (exclusive) of a quoted string starting at `at`. */
function quotedEnd(text: string, at: number, quote: Quote): number {
  if (quote.open.length === 2) {
    const close = text.indexOf(quote.close, at + 2);
    const line = text.indexOf('\n', at);
    if (close === -1 || (line !== -1 && line < close)) {
      return line === -1 ? text.length : line;
    }
    return close + 2;
  }
  for (let i = at + 1; i < text.length; i += 1) {
    const c = text[i];
    if (c === '\\') i += 1;
    else if (c === quote.close) return i + 1;
    else if (c === '\n') return i;
  }
  return text.length;
}

function lineEnd(text: string, at: number): number {
  const end = text.indexOf('\n', at);
  return end === -1 ? text.length : end;
}

function untilAny(text: string, at: number, stops: RegExp): number {
  stops.lastIndex = at;
  return stops.exec(text)?.index ?? text.length;
}

const STOP_PAIR = /[\s&;,]/g;
const STOP_JSON = /[\s,;}\]]/g;
const STOP_RUBY = /[\s,;)}\]]/g;

/** Whether only indentation (and `export `) stands before `at` on its line. */
function startsLine(text: string, at: number): boolean {
  const start = text.lastIndexOf('\n', at - 1) + 1;
  return /^[ \t]*(?:export[ \t]+|-[ \t]+)?$/.test(text.slice(start, at));
}

/** Each quoted string inside hidden, or the whole content when none. */
function redactDump(content: string): string {
  let found = false;
  const out = content.replace(
    /(\\?")((?:\\(?!")|[^"\\])*?)\1/g,
    (whole, q: string, inner: string) => {
      found = true;
      return ALREADY_REDACTED.test(inner) ? whole : `${q}${REDACTED}${q}`;
    },
  );
  if (found) return out;
  return ALREADY_REDACTED.test(content.trim()) ? content : REDACTED;
}

/**
 * The closing bracket of a header dump, past quoted strings and
 * `[REDACTED]` marks inside it; -1 when the line ends first.
 */
function dumpClose(text: string, from: number, closer: string): number {
  for (let i = from; i < text.length; i += 1) {
    const c = text[i];
    if (c === '\n') return -1;
    if (c === closer) return i;
    if (text.startsWith(REDACTED, i)) i += REDACTED.length - 1;
    else if (c === '"') i = quotedEnd(text, i, { open: '"', close: '"' }) - 1;
    else if (c === '\\' && text[i + 1] === '"') {
      i = quotedEnd(text, i, { open: '\\"', close: '\\"' }) - 1;
    }
  }
  return -1;
}

interface Value {
  end: number;
  replacement: string | undefined;
  /** The quoted content of an ordinary key, to sanitize again. */
  nested?: { start: number; end: number };
}

/**
 * Measures the value that starts at `start`, and what a secret name's value
 * becomes.
 */
function measureValue(
  text: string,
  start: number,
  separator: string,
  keyQuoted: boolean,
  enclosing: string | undefined,
  authorization = false,
): Value {
  const quote = quoteAt(text, start);
  if (quote !== undefined) {
    const end = quotedEnd(text, start, quote);
    // An opening quote alone (`\"` at the end of the text) is not closed.
    const closed =
      end >= start + quote.open.length + quote.close.length &&
      text.endsWith(quote.close, end);
    const innerEnd = closed ? end - quote.close.length : end;
    const inner = text.slice(start + quote.open.length, innerEnd);
    return {
      end,
      replacement: ALREADY_REDACTED.test(inner)
        ? undefined
        : `${quote.open}${REDACTED}${closed ? quote.close : ''}`,
      nested: { start: start + quote.open.length, end: innerEnd },
    };
  }
  if (text.startsWith(REDACTED, start)) {
    return { end: start + REDACTED.length, replacement: undefined };
  }
  const dump = /^(\[\]string\{|\[)/.exec(text.slice(start, start + 9));
  if (dump !== null) {
    const opener = dump[1] ?? '[';
    const close = dumpClose(
      text,
      start + opener.length,
      opener === '[' ? ']' : '}',
    );
    const end = close === -1 ? lineEnd(text, start) : close + 1;
    const content = text.slice(
      start + opener.length,
      close === -1 ? end : close,
    );
    return {
      end,
      replacement: `${opener}${redactDump(content)}${close === -1 ? '' : text[close]}`,
    };
  }
  let end: number;
  if (separator === ':' && !keyQuoted) end = lineEnd(text, start);
  else if (separator === ':') end = untilAny(text, start, STOP_JSON);
  else if (separator === '=>') end = untilAny(text, start, STOP_RUBY);
  else end = untilAny(text, start, STOP_PAIR);
  // `-H "Token: x" -d …`: a pair inside a quoted string ends with it.
  if (enclosing !== undefined) {
    const close = text.indexOf(enclosing, start);
    if (close !== -1 && close < end) end = close;
  }
  const scheme = SCHEME_THEN_CREDENTIAL.exec(text.slice(start, start + 4096));
  if (scheme !== null) end = Math.max(end, start + scheme[0].length);
  if (authorization) end = Math.max(end, authorizationEnd(text, start));
  // A mark is read whole, though its `]` would end a `=>` value
  // (`password=>$[REDACTED]`, a `$NAME` the backstop hid).
  const mark = LEADING_MARKS.exec(text.slice(start, start + 256));
  if (mark !== null) end = Math.max(end, start + mark[0].length);
  const value = text.slice(start, end);
  return {
    end,
    replacement: ALREADY_REDACTED.test(value.trim()) ? undefined : REDACTED,
  };
}

/** `key: value`, `key=value`, JSON, `=>` and `:=` pairs, nested values too. */
export function redactPairs(text: string, depth = 0): string {
  const scan = SCANNERS[depth] ?? new RegExp(KEY_AND_SEPARATOR.source, 'g');
  scan.lastIndex = 0;
  let out = '';
  let copied = 0;
  for (let match = scan.exec(text); match !== null; match = scan.exec(text)) {
    const [whole, keyQuote = '', key = '', closing, before = '', separator] =
      match;
    const start = match.index + whole.length;
    const keyQuoted =
      keyQuote !== '' && keyQuote !== ':' && closing !== undefined;
    if (separator === undefined || start >= text.length) continue;
    // `a == b` in code.
    if (separator === '=' && text[start] === '=') continue;
    // `x password = y` mid-line is too often prose or code.
    if (
      before !== '' &&
      !keyQuoted &&
      (separator === '=' || separator === ':=') &&
      !startsLine(text, match.index)
    ) {
      continue;
    }
    // An ordinary name's unquoted value is neither hidden nor scanned
    // again: nothing to measure (most pairs of most lines).
    if (
      secretKeyKind(key) === undefined &&
      quoteAt(text, start) === undefined
    ) {
      continue;
    }
    const enclosing =
      keyQuote !== '' && keyQuote !== ':' && !keyQuoted ? keyQuote : undefined;
    const value = measureValue(
      text,
      start,
      separator,
      keyQuoted,
      enclosing,
      AUTHORIZATION_KEY.test(key),
    );
    const shown = value.nested
      ? text.slice(value.nested.start, value.nested.end)
      : text.slice(start, value.end);
    if (hidesValue(key, shown)) {
      if (value.replacement !== undefined) {
        out += text.slice(copied, start) + value.replacement;
        copied = value.end;
      }
      scan.lastIndex = Math.max(value.end, start);
      continue;
    }
    if (value.nested !== undefined && depth < MAX_NESTING) {
      const { start: innerStart, end: innerEnd } = value.nested;
      out +=
        text.slice(copied, innerStart) +
        redactPairs(text.slice(innerStart, innerEnd), depth + 1);
      copied = innerEnd;
      scan.lastIndex = value.end;
    }
  }
  return out + text.slice(copied);
}

/**
 * A secret's name and its value as two fields of one entry, as a
 * Kubernetes env var gives them: JSON `{"name":"DB_PASSWORD","value":"…"}`
 * (escaped inside a string too), YAML `- name: DB_PASSWORD` with `value: …`
 * on the next line, Go's %+v `{Name:DB_PASSWORD Value:… ValueFrom:nil}`, as
 * a controller's log or an event dumps a container spec. The name is judged
 * as a key is; the value ends as a pair's with the same separator does.
 */
const NAMED_VALUE =
  /(\\?["']?)\b(?:name|Name|NAME)\1[ \t]*[:=][ \t]*(\\?["']?)([A-Za-z_][\w.-]*)\2[ \t]*,?\s*(\\?["']?)(?:value|Value|VALUE)\4[ \t]*([:=])[ \t]*/g;

export function redactNamedValues(text: string): string {
  if (!/value/i.test(text)) return text;
  NAMED_VALUE.lastIndex = 0;
  let out = '';
  let copied = 0;
  for (
    let match = NAMED_VALUE.exec(text);
    match !== null;
    match = NAMED_VALUE.exec(text)
  ) {
    const [whole, , , name = '', valueQuote = '', separator = ':'] = match;
    const start = match.index + whole.length;
    if (start >= text.length || secretKeyKind(name) === undefined) continue;
    const value = measureValue(
      text,
      start,
      separator,
      valueQuote !== '',
      undefined,
      AUTHORIZATION_KEY.test(name),
    );
    const shown = value.nested
      ? text.slice(value.nested.start, value.nested.end)
      : text.slice(start, value.end);
    if (value.replacement !== undefined && hidesValue(name, shown)) {
      out += text.slice(copied, start) + value.replacement;
      copied = value.end;
    }
    NAMED_VALUE.lastIndex = Math.max(value.end, start);
  }
  return out + text.slice(copied);
}

/** An element named as a secret: `<password>…</password>` (XML, HTML). */
const ELEMENT = /<([A-Za-z_][\w.-]*)(?:[ \t][^<>]*)?>([^<]*)<\/\1>/g;

export function redactSecretElements(text: string): string {
  if (!text.includes('</')) return text;
  return text.replace(ELEMENT, (whole, tag: string, inner: string) => {
    if (ALREADY_REDACTED.test(inner.trim()) || !hidesValue(tag, inner)) {
      return whole;
    }
    return whole.replace(`>${inner}<`, `>${REDACTED}<`);
  });
}

/**
 * URL-encoded pairs (`password%3Dx`, `token%3A%20x`; `+` is a blank too, as
 * in a form body), each value judged as its decoded form would be:
 * - the encoded text ends at an unencoded blank, quote, backtick, `<`, `>`,
 *   `&`, `;` or `,`. In a query string or form body a raw `&` starts the
 *   next parameter, and all before it is one parameter's value, however
 *   many encoded pairs it holds;
 * - `key%3A%20value` takes the rest of the encoded text, as `key: value`
 *   takes the rest of its line (an encoded line break ends it too);
 * - `key%3Dvalue` ends where an encoded blank, `&`, `;` or `,` ends a bare
 *   `key=value` ({@link STOP_PAIR}), and a scheme word takes its credential
 *   with it (`api_key%3DBearer%20x`);
 * - an encoded quote (`%22…%22`) is taken to its closing quote.
 */
const ENCODED_KEY =
  /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]+)(%3[Dd]|%3[Aa](?:%20|\+)*)/g;
const ENCODED_TEXT_END = /[\s&"'`<>,;]/g;
const ENCODED_LINE_END = /%0[AaDd]/g;
const ENCODED_PAIR_END = /%(?:0[9AaDd]|2[06Cc]|3[Bb])/g;
const ENCODED_QUOTE = /^%2[27]/;
const ENCODED_SCHEME = new RegExp(String.raw`^(?:${SCHEMES})(?:%20|\+)+`, 'i');

interface EncodedValue {
  /** The end (exclusive) of the value. */
  end: number;
  /** Its encoded opening quote, or ''. */
  quote: string;
  /** Whether the quote is closed before the end of the encoded text. */
  closed: boolean;
}

/** Measures the encoded value that starts at `start`. */
function measureEncodedValue(
  text: string,
  start: number,
  separator: string,
): EncodedValue {
  const textEnd = untilAny(text, start, ENCODED_TEXT_END);
  const quote = ENCODED_QUOTE.exec(text.slice(start, start + 3))?.[0];
  if (quote !== undefined) {
    const close = text.indexOf(quote, start + quote.length);
    return close === -1 || close >= textEnd
      ? { end: textEnd, quote, closed: false }
      : { end: close + quote.length, quote, closed: true };
  }
  if (/^%3[Aa]/.test(separator)) {
    const end = Math.min(textEnd, untilAny(text, start, ENCODED_LINE_END));
    return { end, quote: '', closed: false };
  }
  const scheme = ENCODED_SCHEME.exec(text.slice(start, textEnd));
  const from = start + (scheme?.[0].length ?? 0);
  const end = Math.min(textEnd, untilAny(text, from, ENCODED_PAIR_END));
  return { end, quote: '', closed: false };
}

/** `+` as a blank and `%XX` escapes decoded; a broken escape as a blank. */
function decodeEncoded(value: string): string {
  const spaced = value.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced.replace(/%[0-9A-Fa-f]{2}/g, ' ');
  }
}

export function redactEncodedPairs(text: string): string {
  if (!text.includes('%3')) return text;
  ENCODED_KEY.lastIndex = 0;
  let out = '';
  let copied = 0;
  for (
    let match = ENCODED_KEY.exec(text);
    match !== null;
    match = ENCODED_KEY.exec(text)
  ) {
    const [whole, rawKey = '', separator = ''] = match;
    // `%26password%3D…`: the `26` belongs to the escape before the name.
    const key = text[match.index - 1] === '%' ? rawKey.slice(2) : rawKey;
    const start = match.index + whole.length;
    const hidden = encodedValueToHide(text, key, start, separator);
    if (hidden === undefined) {
      // The next key may start inside this separator's escapes
      // (`x%3A%20password%3A%20…`: `20password`), which the match consumed.
      ENCODED_KEY.lastIndex = match.index + rawKey.length;
      continue;
    }
    const { end, quote, closed } = hidden;
    out += `${text.slice(copied, start)}${quote}${REDACTED}${closed ? quote : ''}`;
    copied = end;
    ENCODED_KEY.lastIndex = end;
  }
  return out + text.slice(copied);
}

/** The value after `key`'s separator, if it is one to hide. */
function encodedValueToHide(
  text: string,
  key: string,
  start: number,
  separator: string,
): EncodedValue | undefined {
  if (secretKeyKind(key) === undefined) return undefined;
  const measured = measureEncodedValue(text, start, separator);
  const { end, quote, closed } = measured;
  if (end <= start) return undefined;
  // A quoted value is judged, and hidden, inside its quotes.
  const value = decodeEncoded(
    text.slice(start + quote.length, closed ? end - quote.length : end),
  );
  if (ALREADY_REDACTED.test(value.trim()) || !hidesValue(key, value)) {
    return undefined;
  }
  return measured;
}

/**
 * Secret flags in the space form. The flag's last `-`/`_` segment decides
 * (keys.ts): --token x, --db-password x and --client-secret x lose their
 * value, --token-ttl 5 and --password-file /p keep it.
 */
const FLAG_SPACE_FORM =
  /(^|\s)(--?[A-Za-z][\w-]*)([ \t]+)(?!-)(?!\[REDACTED\])((?:[Bb]earer|[Bb]asic)[ \t]+\S+|"[^"\n]*"|'[^'\n]*'|[^\s"']+)/g;

/**
 * `curl -u user:password`, `--user`, `--proxy-user`: the password after the
 * first colon, unless it is a placeholder (`<user:password>`, `${P}`).
 */
const USER_FLAG =
  /(^|\s)(-u|-U|--user|--proxy-user)([ \t]+|=)(?:(["'])([^"'\n:]*):([^"'\n]*)\4|([^\s"':]*):(["']?)([^\s"']+)\8(?=[\s"']|$))/g;

const MAY_HOLD_USER_FLAG = /(?:^|\s)(?:-[uU]|--(?:proxy-)?user)[\s=]/;

export function redactUserFlags(text: string): string {
  if (!MAY_HOLD_USER_FLAG.test(text)) return text;
  return text.replace(USER_FLAG, (whole, ...groups: (string | undefined)[]) => {
    const [lead, flag, gap, q, qUser, qSecret, user, sq, secret] = groups;
    const name = qUser ?? user ?? '';
    const password = qSecret ?? secret ?? '';
    if (name.startsWith('<') || name.startsWith('$')) return whole;
    if (ALREADY_REDACTED.test(password)) return whole;
    const shown =
      q !== undefined
        ? `${q}${name}:${REDACTED}${q}`
        : `${name}:${sq}${REDACTED}${sq}`;
    return `${lead}${flag}${gap}${shown}`;
  });
}

/**
 * One-letter password flags, by the command that reads them: MySQL's and
 * MariaDB's clients take the password glued on (`mysql -uroot -ps3cret`;
 * `-p` alone prompts, and `-P` is the port), redis-cli after `-a`, a
 * registry or cloud `login` (docker, podman, helm registry, az) after `-p`
 * (elsewhere in docker a port), sshpass after `-p`, glued or not. Up to the
 * end of the command (a line break, `|`, `;` or `&`), and within 512
 * characters of the command's name, so a line of many command names and no
 * flag costs no more than a few scans of it.
 */
const COMMAND_PASSWORD =
  /\b((?:(?:mysql|mariadb)[\w-]*[ \t](?:[^\n|;&]{0,512}?[ \t])?-p|redis-cli[ \t](?:[^\n|;&]{0,512}?[ \t])?-a[ \t]+|login[ \t](?:[^\n|;&]{0,512}?[ \t])?-p[ \t]+|sshpass[ \t](?:[^\n|;&]{0,512}?[ \t])?-p[ \t]*))("[^"\n]*"|'[^'\n]*'|[^\s"']+)/g;

const MAY_HOLD_COMMAND_PASSWORD = /mysql|mariadb|redis-cli|login|sshpass/;

export function redactCommandPasswords(text: string): string {
  if (!MAY_HOLD_COMMAND_PASSWORD.test(text)) return text;
  return text.replace(
    COMMAND_PASSWORD,
    (whole, command: string, value: string) => {
      const inner = /^["']/.test(value) ? value.slice(1, -1) : value;
      return ALREADY_REDACTED.test(inner) ? whole : `${command}${REDACTED}`;
    },
  );
}

export function redactFlags(text: string): string {
  if (!text.includes('-')) return text;
  return text.replace(
    FLAG_SPACE_FORM,
    (whole, lead: string, flag: string, gap: string, value: string) => {
      if (!hidesValue(flag.replace(/^-+/, ''), value)) return whole;
      const quote = value[0];
      const quoted = (quote === '"' || quote === "'") && value.length > 1;
      return `${lead}${flag}${gap}${quoted ? `${quote}${REDACTED}${quote}` : REDACTED}`;
    },
  );
}
