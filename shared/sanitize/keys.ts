/**
 * Which names are secret names: the one key rule every sanitizer rule that
 * looks at a name (`key: value`, `key=value`, JSON keys, `=>` pairs,
 * URL-encoded pairs, command-line flags, annotation keys) shares.
 *
 * A name is split into words (camelCase and PascalCase boundaries, `-`, `.`
 * and `_` all separate words, case ignored) and counts by its LAST word, so
 * clientSecret, accessToken, DbPassword, x-api-key, DB_PASS and
 * --github-token are secret names while token_count, auth_method,
 * password_policy, --token-ttl and --password-file are not. Environment-style
 * names that glue a secret word on without a separator (PGPASSWORD,
 * VAULTTOKEN) count by that ending, for the words long enough not to end
 * ordinary words by chance.
 */

export type SecretKeyKind = 'secret' | 'ambiguous';

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

/**
 * Two-word names: `api_key`, `X-Api-Key`, `accessKey`, `private.key`,
 * `aws_secret_key`, `client_key` (TLS), `storage_account_key` (Azure).
 */
const SECRET_PAIRS = new Set([
  'api_key',
  'access_key',
  'private_key',
  'secret_key',
  'client_key',
  'signing_key',
  'encryption_key',
  'master_key',
  'account_key',
]);

/**
 * Words also used for plain settings (`token: 5`, `auth: true`,
 * `cookie: none`): their values are kept when obviously not a secret.
 */
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

/**
 * Endings that make a glued-together word a secret name (PGPASSWORD,
 * MYSQLPASSWD, APPSECRET, GITHUBTOKEN, SERVICEAPIKEY). `pwd`, `pass` and `auth`
 * are left out: OLDPWD is a directory, bypass and oauth are ordinary words.
 */
const SECRET_ENDINGS = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'token',
  'apikey',
  'accesskey',
  'privatekey',
] as const;

/**
 * A value the ambiguous words keep: judged by its first word, so
 * `auth: failed for user bob` is kept too. A number is kept up to five
 * digits before any fraction (`token: 5`, `session: 300s`): a longer one
 * is as likely a one-time code, a numeric password or a session id as a
 * count (`token: 839201`, `pass: 12345678`), and the rules err toward
 * hiding.
 */
const HARMLESS_VALUE =
  /^(?:-?\d{1,5}(?:\.\d+)?[a-z]{0,2}|true|false|yes|no|on|off|none|null|nil|empty|enabled|disabled|required|optional|failed|invalid|expired|missing|ok|unset|n\/a)$/i;

/**
 * A cheap first look: every secret name holds one of these, so a text
 * without any needs no name-based rule at all (most log lines).
 */
export const MAY_NAME_SECRET =
  /pass|pwd|secret|key|token|auth|bearer|session|cookie|credential/i;

/** The name's words: camelCase split, `-` `.` `_` as separators, lower case. */
export function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .split(/[-._\s]+/)
    .filter((word) => word !== '');
}

/**
 * Names already judged, and how (null: an ordinary name). The same few
 * names come back on line after line of a log (`level`, `msg`, `ts`,
 * `password`), and splitting a name into its words was a quarter of the
 * sanitizer's time; the judgement depends on the name alone, so it is
 * kept for the process. Bounded: past {@link JUDGED_MAX} names it starts
 * over, and a name longer than {@link JUDGED_KEY_MAX} is never kept.
 */
const judged = new Map<string, SecretKeyKind | null>();
export const JUDGED_MAX = 4096;
export const JUDGED_KEY_MAX = 128;

/** How many names are kept judged now (tests). */
export function judgedNames(): number {
  return judged.size;
}

/**
 * Whether a name carries a secret (`secret`), may carry one (`ambiguous`:
 * keep obviously harmless values), or is an ordinary name (`undefined`).
 * A path-like name (`example.com/api-token`) counts by its last segment;
 * Helm's `checksum/<file>` names carry digests, never secrets.
 */
export function secretKeyKind(key: string): SecretKeyKind | undefined {
  if (key.length > JUDGED_KEY_MAX) return judgeKey(key);
  const known = judged.get(key);
  if (known !== undefined) return known ?? undefined;
  const kind = judgeKey(key);
  if (judged.size >= JUDGED_MAX) judged.clear();
  judged.set(key, kind ?? null);
  return kind;
}

function judgeKey(key: string): SecretKeyKind | undefined {
  const slash = key.lastIndexOf('/');
  if (slash !== -1) {
    if (/^checksum\//i.test(key)) return undefined;
    return judgeKey(key.slice(slash + 1));
  }
  const words = keyWords(key);
  // `password2`, `token4`: a numbered copy of the same name.
  const last = words.at(-1)?.replace(/\d+$/, '');
  if (last === undefined || last === '') return undefined;
  words[words.length - 1] = last;
  if (SECRET_PAIRS.has(words.slice(-2).join('_'))) return 'secret';
  if (SECRET_WORDS.has(last)) {
    return AMBIGUOUS_WORDS.has(last) ? 'ambiguous' : 'secret';
  }
  for (const ending of SECRET_ENDINGS) {
    if (last.length > ending.length && last.endsWith(ending)) {
      return ending === 'token' ? 'ambiguous' : 'secret';
    }
  }
  return undefined;
}

/** Whether an ambiguous name's value is obviously not a secret. */
export function isHarmlessValue(value: string): boolean {
  const first = value.trim().split(/\s+/)[0] ?? '';
  return HARMLESS_VALUE.test(first.replace(/[^\w./-]+$/, ''));
}

/** Whether a name's value must be hidden. */
export function hidesValue(key: string, value: string): boolean {
  const kind = secretKeyKind(key);
  if (kind === undefined) return false;
  return kind === 'secret' || !isHarmlessValue(value);
}
