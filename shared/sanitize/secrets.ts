/**
 * The secret sanitizer for every text the API passes through from a
 * cluster: Kubernetes event messages, log lines, an agent's error text,
 * annotation values. It implements the spec's live-logs rules ("Live
 * Reads": chat.SanitizeSecrets) plus the shapes real logs carry that the
 * list implies:
 *
 * - by shape (shapes.ts): PEM private-key blocks; credentials in URLs of any
 *   scheme, an empty user included, and in a Go MySQL DSN
 *   (`user:pw@tcp(…)`); Slack and Discord webhook URLs; JWTs,
 *   Slack `xox?-`, AWS `AKIA…`/`ASIA…`, Vault `hvs.`/`hvb.`, `sk-`, GitHub
 *   `ghp_`/`github_pat_`, GitLab `glpat-`, Google `AIza`, npm `npm_`,
 *   Hugging Face `hf_`, Stripe `sk_live_`; an auth scheme and its credential
 *   as one unit (`Bearer …`, `Basic …`, URL-encoded `Bearer%20…` too);
 * - by name (pairs.ts, names judged by keys.ts): `key: value`, `key=value`,
 *   JSON keys (escaped JSON inside strings and escaped docker `auths`
 *   too), Ruby/PHP `=>`, Go `:=`, subscripts (`$_POST['password'] = …`),
 *   a name and its value as two fields (Kubernetes env vars dumped as
 *   JSON, YAML or Go's %+v), XML elements (`<password>…</password>`),
 *   Authorization in header, JSON, assignment, Go header-map,
 *   json.Marshal(http.Header) and %#v dumps and their escaped forms, Cookie
 *   and Set-Cookie, URL-encoded pairs, nested key=value values re-sanitized
 *   two levels deep, secret command-line flags in both forms by their last
 *   segment, and the one-letter password flags of the MySQL and MariaDB
 *   clients (`-pS3cret`), redis-cli (`-a S3cret`), a registry or cloud
 *   `login` and sshpass (`-p S3cret`);
 * - the high-entropy backstop (shapes.ts) for long random runs in any
 *   other shape, and for a line of base64 on its own (a PEM body line, as
 *   log lines reach the sanitizer one at a time).
 *
 * Survivors, by design: the ambiguous names' obvious non-secrets
 * (`token: 5`, `auth: true`, `cookie: none`, `auth: failed for user bob`),
 * names that only resemble secret names (`token_count`, `auth_method`,
 * `password_policy`, `--token-ttl`, `--password-file`), image digests,
 * commit SHAs, UUIDs, Helm `checksum/…` annotations, `WWW-Authenticate`
 * challenges, and values already redacted (`[REDACTED]`, `********`).
 *
 * Known gaps (tested as such): the continuation lines of a YAML block
 * scalar (`password: |`), doubly escaped JSON (`{\\\"password\\\":…}`), a
 * mid-line `x password = hunter2`, a password piped to a login
 * (`echo x | docker login --password-stdin`) or given by position
 * (`htpasswd -b file user x`), a command line as a JSON array
 * (`["mysql","-ux","-px"]`), a compound assignment (`ENV['TOKEN'] ||= x`),
 * and a short secret in a shape no rule knows. It is a pattern sanitizer,
 * not a guarantee; the rules err toward hiding (`failed to get secret:
 * secrets "foo" not found` becomes `failed to get secret: [REDACTED]`).
 * Sanitizing twice changes nothing more.
 */

import { hidesValue, MAY_NAME_SECRET, secretKeyKind } from './keys.ts';
import {
  redactCommandPasswords,
  redactEncodedPairs,
  redactFlags,
  redactNamedValues,
  redactPairs,
  redactSecretElements,
  redactUserFlags,
} from './pairs.ts';
import { REDACTED, redactHighEntropy, redactShapes } from './shapes.ts';

export { REDACTED, secretKeyKind };

/**
 * The text with every secret the rules recognize replaced by `[REDACTED]`.
 * For one message or one log line (a PEM block within the text is hidden
 * whole; across separately sanitized lines it cannot be).
 */
export function sanitizeMessage(text: string): string {
  // The rules read each other's marks: a mark one rule leaves can complete
  // what another looks for (the backstop hides `//k9Xb…` in `A://://k9Xb…!@`
  // and leaves `A://:[REDACTED]!@`, a URL's password). So a text that
  // changed is sanitized again until it no longer changes, and sanitizing
  // the result changes nothing more (text read back from storage, sanitized
  // when it was collected, is sanitized again when served). Each pass only
  // hides more; most lines hide nothing and take one pass.
  let before = text;
  let out = applyRules(text);
  for (let pass = 1; out !== before && pass < MAX_PASSES; pass += 1) {
    before = out;
    out = applyRules(out);
  }
  return out;
}

/**
 * A bound, should a rule ever keep changing its own output. Of 22 million
 * texts the idempotence property's generator made, a fifth changed, and
 * none took more than three passes (the third confirming the second).
 */
const MAX_PASSES = 4;

/** One pass of every rule. */
function applyRules(text: string): string {
  if (text === '') return text;
  let out = redactShapes(text);
  out = redactUserFlags(out);
  out = redactCommandPasswords(out);
  if (MAY_NAME_SECRET.test(out)) {
    out = redactFlags(out);
    out = redactEncodedPairs(out);
    out = redactNamedValues(out);
    out = redactSecretElements(out);
    out = redactPairs(out);
  }
  return redactHighEntropy(out);
}

/** One log line at a time, as the live logs route reads them. */
export function sanitizeLogLines(lines: readonly string[]): string[] {
  return lines.map(sanitizeMessage);
}

/**
 * An annotation's (or label's, or env var's) value judged with its key: a
 * secret key (`example.com/api-token`, `db-password`) hides the whole value,
 * an ambiguous one (`…/auth`) keeps an obvious non-secret, and any other
 * value (a last-applied configuration, a description) is sanitized as text.
 * Helm's `checksum/…` digests stay.
 */
export function sanitizeAnnotationValue(key: string, value: string): string {
  if (value === '' || value === REDACTED) return value;
  if (hidesValue(key, value)) return REDACTED;
  return sanitizeMessage(value);
}
