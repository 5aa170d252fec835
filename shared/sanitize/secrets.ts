/**
 * A minimal secret sanitizer for short texts the API passes through, first
 * of all Kubernetes event messages (an exec probe's failure can quote a
 * command line, and a stored row was scrubbed only by whichever agent
 * version wrote it).
 *
 * It is a SUBSET of the spec's live-logs sanitizer (chat.SanitizeSecrets in
 * "Live Reads"). It handles these shapes:
 *
 * - `key: value` anywhere in a line, the whole value redacted (to the end of
 *   the line, or to the closing quote when quoted); `key=value`, up to the
 *   next space, `&`, `;` or `,` (a quoted value taken whole); JSON
 *   `"key": "value"`. Keys are normalized (camelCase boundaries, `-` and `.`
 *   count as `_`, case ignored) and count when they end in a secret word:
 *   clientSecret, accessToken, DbPassword, x-api-key and DB_PASS do;
 *   token_count, auth_method and password_policy do not.
 * - The ambiguous words (token, auth, pass, credential(s), session, cookie,
 *   bearer) keep an obvious non-secret value, judged by its first word:
 *   `token: 5`, `auth: true`, `cookie: none`, `auth: failed for user bob`.
 * - Secret command-line flags in the space form (`--token x`,
 *   `--db-password x`); the `=` form is a key=value pair.
 * - `Bearer <credential>` anywhere, and `Basic <base64>`.
 * - Credentials in URLs of any scheme, an empty user included
 *   (`rediss://:pw@host`).
 * - PEM private-key blocks (to the END line, or to the end of the text).
 * - JWTs.
 *
 * Not handled here (the full sanitizer has rules for them): escaped JSON
 * inside strings, Go header-map and %#v dumps, URL-encoded pairs
 * (`password%3D…`), nested key=value values re-sanitized, Ruby/PHP `=>`
 * pairs, Slack/AWS/Vault/sk- token shapes and the high-entropy backstop.
 * It is a pattern sanitizer, not a guarantee: a secret in a shape no rule
 * knows passes through. The rules err toward hiding.
 */

export const REDACTED = '[REDACTED]';

const SECRET_WORDS = new Set([
  'password',
  'passwd',
  'pwd',
  'passphrase',
  'pass',
  'secret',
  'apikey',
  'accesskey',
  'privatekey',
  'credential',
  'credentials',
  'token',
  'auth',
  'authorization',
  'bearer',
  'session',
  'cookie',
]);
/** Two-segment key words: `api_key`, `X-Api-Key`, `accessKey`. */
const SECRET_PAIRS = new Set(['api_key', 'access_key', 'private_key']);
/** Words also used for plain settings: they keep obvious non-secrets. */
const AMBIGUOUS_WORDS = new Set([
  'token',
  'auth',
  'pass',
  'credential',
  'credentials',
  'session',
  'cookie',
  'bearer',
]);
const HARMLESS_VALUE =
  /^(?:-?\d+(?:\.\d+)?|true|false|yes|no|on|off|none|null|nil|empty|enabled|disabled|required|optional|failed|invalid|expired|missing|ok)$/i;

/** The key's words: camelCase split, `-` and `.` as `_`, lower case. */
function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[-.]/g, '_')
    .toLowerCase()
    .split('_')
    .filter((word) => word !== '');
}

type KeyKind = 'secret' | 'ambiguous' | undefined;

function classifyKey(key: string): KeyKind {
  const words = keyWords(key);
  const last = words.at(-1);
  if (last === undefined) return undefined;
  const pair = words.slice(-2).join('_');
  if (SECRET_PAIRS.has(pair)) return 'secret';
  if (!SECRET_WORDS.has(last)) return undefined;
  return AMBIGUOUS_WORDS.has(last) ? 'ambiguous' : 'secret';
}

function isHarmless(value: string): boolean {
  const first = value.trim().split(/\s+/)[0] ?? '';
  return HARMLESS_VALUE.test(first.replace(/[^\w.-]+$/, ''));
}

const PEM_PRIVATE_KEY =
  /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$)/g;
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:@/]*):([^\s@/]+)@/gi;
const BEARER = /\b(bearer)[ \t]+(?!\[REDACTED\])[^\s"',;]+/gi;
const BASIC =
  /\b(Basic)[ \t]+(?=[a-z]*[A-Z0-9+/])[A-Za-z0-9+/]{8,}={0,2}(?![A-Za-z0-9+/=])/g;
const JWT = /\beyJ[\w-]{4,}\.eyJ[\w-]{4,}\.[\w-]+/g;
const FLAG_SPACE_FORM =
  /(^|\s)(--?[A-Za-z][\w-]*)([ \t]+)(?!-)(?!\[REDACTED\])((?:[Bb]earer|[Bb]asic)[ \t]+\S+|[^\s"']+|"[^"\n]*"|'[^'\n]*')/g;
const AUTH_SCHEME_THEN_CREDENTIAL = /^(?:bearer|basic)[ \t]+[^\s"',;&]+/i;
/** A key and its separator; the value is measured by {@link valueEnd}. */
const KEY_AND_SEPARATOR = /(["']?)([A-Za-z_][\w.-]*)\1[ \t]*([:=])[ \t]*/g;

/** Where a value that starts at `start` ends (exclusive). */
function valueEnd(text: string, start: number, separator: string): number {
  const open = text[start];
  if (open === '"' || open === "'") {
    for (let i = start + 1; i < text.length; i += 1) {
      const c = text[i];
      if (c === '\\') i += 1;
      else if (c === open || c === '\n') return c === open ? i + 1 : i;
    }
    return text.length;
  }
  const stop = separator === ':' ? /\n/g : /[\s&;,]/g;
  stop.lastIndex = start;
  return stop.exec(text)?.index ?? text.length;
}

function redactValue(value: string): string {
  const quote = value[0];
  if ((quote === '"' || quote === "'") && value.length >= 2) {
    return value.endsWith(quote)
      ? `${quote}${REDACTED}${quote}`
      : `${quote}${REDACTED}`;
  }
  return REDACTED;
}

function redactPairs(text: string): string {
  let out = '';
  let copied = 0;
  KEY_AND_SEPARATOR.lastIndex = 0;
  for (
    let match = KEY_AND_SEPARATOR.exec(text);
    match !== null;
    match = KEY_AND_SEPARATOR.exec(text)
  ) {
    const key = match[2] ?? '';
    const separator = match[3] ?? '=';
    const kind = classifyKey(key);
    if (kind === undefined) continue;
    const start = match.index + match[0].length;
    let end = valueEnd(text, start, separator);
    // `api_key=Bearer x`: the scheme and its credential are one value.
    const scheme = AUTH_SCHEME_THEN_CREDENTIAL.exec(text.slice(start));
    if (scheme !== null) end = Math.max(end, start + scheme[0].length);
    const value = text.slice(start, end);
    const bare = value.replace(/^["']|["']$/g, '');
    if (bare === '' || bare.startsWith(REDACTED)) continue;
    if (kind === 'ambiguous' && isHarmless(bare)) continue;
    out += text.slice(copied, start) + redactValue(value);
    copied = end;
    KEY_AND_SEPARATOR.lastIndex = Math.max(end, start + 1);
  }
  return out + text.slice(copied);
}

function redactFlags(text: string): string {
  return text.replace(
    FLAG_SPACE_FORM,
    (whole, lead: string, flag: string, gap: string, value: string) => {
      const name = flag.replace(/^-+/, '');
      const kind = classifyKey(name);
      if (kind === undefined || (kind === 'ambiguous' && isHarmless(value))) {
        return whole;
      }
      return `${lead}${flag}${gap}${redactValue(value)}`;
    },
  );
}

/**
 * The text with every secret this sanitizer recognizes replaced by
 * `[REDACTED]`. Idempotent: sanitizing twice changes nothing more.
 */
export function sanitizeSecrets(text: string): string {
  if (text === '') return text;
  let out = text.replace(PEM_PRIVATE_KEY, REDACTED);
  out = out.replace(URL_CREDENTIALS, `$1$2:${REDACTED}@`);
  out = out.replace(JWT, REDACTED);
  out = out.replace(BEARER, `$1 ${REDACTED}`);
  out = out.replace(BASIC, `$1 ${REDACTED}`);
  out = redactFlags(out);
  return redactPairs(out);
}
