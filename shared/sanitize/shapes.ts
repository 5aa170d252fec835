/**
 * Secrets recognized by their own shape, wherever they stand in a text: no
 * name needed. Each rule replaces the secret part with `[REDACTED]` and keeps
 * what identifies the shape (a URL's scheme and user, the word `Bearer`), so
 * a reader still sees what kind of thing was hidden.
 */

export const REDACTED = '[REDACTED]';

/** PEM private-key blocks, to their END line or to the end of the text. */
const PEM_PRIVATE_KEY =
  /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$)/g;

/** `scheme://user:password@`, an empty user included (`rediss://:pw@h`). */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:@/]*):([^\s@/]+)@/gi;

/** Incoming-webhook URLs are credentials themselves (Slack, Discord). */
const WEBHOOK_URL =
  /\b(https:\/\/(?:hooks\.slack\.com\/(?:services|workflows|triggers)|(?:discord(?:app)?\.com)\/api\/webhooks)\/)(?!\[REDACTED\])[\w/-]+/gi;

/**
 * Tokens whose prefix names their issuer. Lengths follow the issuers'
 * formats loosely (a short fake still has the shape): JWTs; Slack xox?-
 * whose first group is digits (`xoxb-<team>-<bot>-…`; a workload named
 * `xoxb-notifier` is a name, not a token);
 * AWS access key ids; Vault service and batch tokens; OpenAI-style `sk-`
 * keys (an upper-case letter required, so a lower-case Kubernetes name such
 * as `sk-worker-pool-1234567890` stays); GitHub, GitLab, Google API, npm,
 * Hugging Face and Stripe keys.
 */
const PREFIXED_TOKEN =
  /(?<![\w-])(?:eyJ[\w-]{4,}\.eyJ[\w-]{4,}\.[\w-]*|xox[abposr]-(?=\d+(?![A-Za-z]))[A-Za-z0-9-]{8,}|(?:AKIA|ASIA)[0-9A-Z]{16}\b|hv[sb]\.[\w-]{20,}|sk-(?=[\w-]*[A-Z])[\w-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|glpat-[\w-]{20,}|AIza[\w-]{30,}|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,})/g;

/**
 * An auth scheme word and its credential as one unit, wherever they stand.
 * The credential must look like one (a digit, token punctuation or an
 * upper-case letter past its first), so prose such as "bearer token missing"
 * stays; a challenge's auth-params
 * (`Bearer realm="api"`, in WWW-Authenticate) are not a credential and stay.
 */
const SCHEME_CREDENTIAL =
  /\b([Bb]earer|BEARER|Basic|BASIC)([ \t]+)(?!\[REDACTED\])(?![\w-]+=["\w[])(?![Xx*#]{4,}(?![\w~+/=:-]))(?=[\w~+/=:-]*(?:\d|[.~+/=_-][\w~+/=-])|\w+[A-Z])([\w.~+/=:-]{4,})/g;

/**
 * A cheap first look for {@link SCHEME_CREDENTIAL}: its scheme words and
 * the blank after them. Several times faster than the rule itself on a
 * line without them (most lines), and every line it passes has them.
 */
const MAY_HOLD_SCHEME_CREDENTIAL = /\b(?:[Bb]earer|BEARER|Basic|BASIC)[ \t]/;

/** A cheap first look: the prefixes {@link PREFIXED_TOKEN} starts with. */
const MAY_HOLD_PREFIXED_TOKEN =
  /eyJ|xox|AKIA|ASIA|hv[sb]\.|sk-|gh[pousr]_|github_pat_|glpat-|AIza|npm_|hf_|k_(?:live|test)_/;

export function redactShapes(text: string): string {
  let out = text;
  if (out.includes('-----BEGIN')) out = out.replace(PEM_PRIVATE_KEY, REDACTED);
  if (out.includes('://')) {
    out = out.replace(URL_CREDENTIALS, `$1$2:${REDACTED}@`);
    out = out.replace(WEBHOOK_URL, `$1${REDACTED}`);
  }
  if (MAY_HOLD_PREFIXED_TOKEN.test(out)) {
    out = out.replace(PREFIXED_TOKEN, REDACTED);
  }
  if (MAY_HOLD_SCHEME_CREDENTIAL.test(out)) {
    out = out.replace(SCHEME_CREDENTIAL, `$1$2${REDACTED}`);
  }
  return out;
}

/**
 * The backstop: a long run of token characters that mixes upper case, lower
 * case and digits and has a high character entropy is taken for a secret in
 * a shape no other rule knows. Hex runs (digests, commit SHAs, trace ids),
 * UUIDs and lower-case names are never mixed-case, so they stay.
 *
 * A hand-written scan, not a regular expression: it runs over every byte of
 * every log line, and a character loop is several times faster.
 */
const MIN_RUN = 20;
const MIN_ENTROPY_BITS = 3.5;

/** A-Z a-z 0-9 + / _ - (and = as padding at a run's end). */
function isRunChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) ||
    (c >= 65 && c <= 90) ||
    (c >= 48 && c <= 57) ||
    c === 43 ||
    c === 47 ||
    c === 95 ||
    c === 45
  );
}

function looksRandom(run: string): boolean {
  if (!/[A-Z]/.test(run) || !/[a-z]/.test(run)) return false;
  const digits = run.replace(/\D/g, '').length;
  if (digits < 2 && !/[+/]/.test(run)) return false;
  // Paths and identifiers joined by `/`, `_` or `-` are words, not noise:
  // judge the longest piece.
  const longest = run
    .split(/[/_-]/)
    .reduce((a, b) => (b.length > a.length ? b : a), '');
  if (longest.length < 16) return false;
  return entropy(longest) >= MIN_ENTROPY_BITS;
}

function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

export function redactHighEntropy(text: string): string {
  let out = '';
  let copied = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    if (!isRunChar(text.charCodeAt(i))) {
      i += 1;
      continue;
    }
    const start = i;
    while (i < n && isRunChar(text.charCodeAt(i))) i += 1;
    let end = i;
    // Base64 padding; a run glued to `=` and more run characters is a pair.
    if (text[end] === '=') {
      let pad = end;
      while (pad < n && pad - end < 2 && text[pad] === '=') pad += 1;
      if (pad >= n || !isRunChar(text.charCodeAt(pad))) end = pad;
    }
    if (i - start >= MIN_RUN && looksRandom(text.slice(start, i))) {
      out += text.slice(copied, start) + REDACTED;
      copied = end;
    }
    i = Math.max(i, end);
  }
  return copied === 0 ? text : out + text.slice(copied);
}
