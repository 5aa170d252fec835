/**
 * PromQL text built from values: label matchers only, every value quoted and
 * escaped here, so no value (a parameter, a stored id) can close its string
 * or its selector and add matchers or expressions of its own.
 */

/** Go-style escapes for the characters a double-quoted PromQL string cannot hold as is. */
const ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '"': '\\"',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/**
 * `value` as a double-quoted PromQL string. Backslash, quote and the common
 * control characters get their escapes; any other control character (C0,
 * DEL, the line and paragraph separators) becomes `\uXXXX`, which Prometheus
 * and VictoriaMetrics both decode, so the literal matches exactly `value`.
 */
export function quoteLabelValue(value: string): string {
  let quoted = '"';
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    const escaped = ESCAPES[char];
    if (escaped !== undefined) quoted += escaped;
    else if (code < 0x20 || code === 0x7f || code === 0x2028 || code === 0x2029)
      quoted += `\\u${code.toString(16).padStart(4, '0')}`;
    else quoted += char;
  }
  return `${quoted}"`;
}

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** One matcher: names are written by this code, checked anyway. */
export function matcher(name: string, op: '=' | '!=', value: string): string {
  if (!LABEL_NAME.test(name)) throw new Error(`bad label name ${name}`);
  return `${name}${op}${quoteLabelValue(value)}`;
}

/** Label equality matchers, in the order given, joined for a `{...}`. */
export function equalities(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([name, value]) => matcher(name, '=', value))
    .join(',');
}
