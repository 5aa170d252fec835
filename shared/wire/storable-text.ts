/**
 * Text PostgreSQL cannot store, or that is not Unicode: a NUL (text and
 * jsonb refuse it) and a lone surrogate. Every input that reaches storage
 * (inventories, webhook bodies) is refused naming the field that holds one,
 * never stripped: a silent change of a name is worse than a refusal.
 */

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE =
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether a JSON text could hold such text: only one that spells a NUL or a
 * surrogate as an escape can, so most bodies skip the walk.
 */
export function mayHoldUnstorableText(json: string): boolean {
  return json.includes('\\u0000') || SURROGATE_ESCAPE.test(json);
}

/**
 * mayHoldUnstorableText of the bytes of a JSON text, found natively: a
 * large body is searched, not decoded and matched.
 */
export function mayHoldUnstorableBytes(json: Buffer): boolean {
  if (json.includes('\\u0000')) return true;
  for (const start of ['\\ud', '\\uD']) {
    for (let at = json.indexOf(start); at >= 0; ) {
      if (SURROGATE_ESCAPE.test(json.toString('latin1', at, at + 5))) {
        return true;
      }
      at = json.indexOf(start, at + 4);
    }
  }
  return false;
}

/**
 * The first key or string holding a NUL (PostgreSQL text cannot store it)
 * or a lone surrogate (not Unicode text), walked without recursion.
 */
export function unstorableText(
  value: unknown,
): { path: (string | number)[]; rule: string } | undefined {
  const check = (text: string) => {
    if (text.includes('\u0000')) return 'must not contain a NUL character';
    if (LONE_SURROGATE.test(text)) return 'must not contain a lone surrogate';
    return undefined;
  };
  const stack: { value: unknown; path: (string | number)[] }[] = [
    { value, path: [] },
  ];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === 'string') {
      const rule = check(current);
      if (rule !== undefined) return { path, rule };
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) {
        stack.push({ value: current[i], path: [...path, i] });
      }
    } else if (typeof current === 'object' && current !== null) {
      const keys = Object.keys(current);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        const rule = check(key);
        if (rule !== undefined) return { path, rule: `a key ${rule}` };
        stack.push({
          value: (current as Record<string, unknown>)[key],
          path: [...path, key],
        });
      }
    }
  }
  return undefined;
}
