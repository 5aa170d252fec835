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

/**
 * `scheme://user:password@`, an empty user included (`rediss://:pw@h`).
 * The userinfo runs to the LAST `@` of the authority, as WHATWG URL parsing
 * and shared/wire/repo-url.ts read it, and the user to its first `:`: a
 * password may hold `@` (`p@ssw0rd`), a user too (`smtp://a@corp.io:pw@h`).
 * The authority ends at the first `/`, `?` or `#`, so an `@` in a path or
 * query (`https://h/x@v2`, `https://h:8443?to=a@b`) is not userinfo; it
 * ends at a quote, `<`, `>` or a backtick too, where a URL written in JSON
 * or prose ends, so an email after it is not taken for a host.
 */
const URL_CREDENTIALS =
  /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:/?#"'`<>]*):([^\s/?#"'`<>]+)@/gi;

/**
 * A Go MySQL driver's DSN, `user:password@tcp(host:3306)/db`: a URL's
 * credentials without the scheme. go-sql-driver/mysql splits at the last
 * `@` before the `/dbname` and the user at the first `:`, so the password
 * runs to the `@` that the network's name and `(` follow, `@` and `:`
 * inside it included. Bounded, as no password is that long: unbounded,
 * every `word:` of a long line without blanks would scan to its end.
 */
const DSN_CREDENTIALS =
  /(?<![\w:/@.-])([\w.-]*):([^\s/"'`<>]{1,256})@(tcp6?|udp|unix|cloudsql)\(/g;

/**
 * A cheap first look for {@link DSN_CREDENTIALS}: an image digest's or an
 * email's `@` alone does not start its scan of every `word:` in the line.
 */
const MAY_HOLD_DSN = /@(?:tcp6?|udp|unix|cloudsql)\(/;

/** Incoming-webhook URLs are credentials themselves (Slack, Discord). */
const WEBHOOK_URL =
  /\b(https:\/\/(?:hooks\.slack\.com\/(?:services|workflows|triggers)|(?:discord(?:app)?\.com)\/api\/webhooks)\/)(?!\[REDACTED\])[\w/-]+/gi;

/**
 * Tokens whose prefix names their issuer. Lengths follow the issuers'
 * formats loosely (a short fake still has the shape): JWTs; Slack xox?-
 * whose first group is digits (`xoxb-<team>-<bot>-…`; a workload named
 * `xoxb-notifier` is a name, not a token);
 * AWS access key ids; Vault service and batch tokens; GitHub, GitLab,
 * Google API, npm, Hugging Face and Stripe keys; and `sk-` keys (OpenAI
 * `sk-…`, `sk-proj-…`, `sk-svcacct-…`, `sk-admin-…`, Anthropic
 * `sk-ant-api03-…`, the many `sk-<32+ hex>` keys), caught by Anthropic's
 * versioned prefix, by an upper-case letter anywhere (OpenAI keys are mixed
 * case), or by an unbroken run of 32 or more letters and digits with a
 * digit in it after an optional issuer prefix. A lower-case Kubernetes name
 * such as `sk-worker-pool-7d9f8c6b5-x2x4z` is cut by dashes into short
 * pieces, so it stays.
 */
const PREFIXED_TOKEN =
  /(?<![\w-])(?:eyJ[\w-]{4,}\.eyJ[\w-]{4,}\.[\w-]*|xox[abposr]-(?=\d+(?![A-Za-z]))[A-Za-z0-9-]{8,}|(?:AKIA|ASIA)[0-9A-Z]{16}\b|hv[sb]\.[\w-]{20,}|sk-(?:ant-[a-z]+\d{2}-[\w-]{20,}|(?=[\w-]*[A-Z])[\w-]{20,}|(?:(?:proj|svcacct|admin)-)?(?=[a-z_]*\d)\w{32,})|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|glpat-[\w-]{20,}|AIza[\w-]{30,}|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,})/g;

/**
 * A URL escape that may stand inside a credential: any but an encoded blank,
 * quote or pair delimiter (`%20`, `%09`, `%0A`, `%0D`, `%22`, `%27`, `%26`,
 * `%2C`, `%3B`), which end it as their decoded characters would.
 */
const CREDENTIAL_ESCAPE = '%(?!2[0267Cc]|3[Bb]|0[9AaDd])[0-9A-Fa-f]{2}';

/**
 * An auth scheme word and its credential as one unit, wherever they stand.
 * The credential must look like one (a digit, token punctuation, an escape
 * or an upper-case letter past its first), so prose such as "bearer token
 * missing" stays; a challenge's auth-params
 * (`Bearer realm="api"`, in WWW-Authenticate) are not a credential and stay.
 * URL-encoded text is held to the same rule as its decoded form: the blank
 * may be `%20` or `+`, the scheme word may follow an escape and the
 * credential may hold escapes, so `Authorization%3A%20Bearer%20x` and
 * `api_key%3DBearer%20x` lose the credential, not just the word.
 */
const SCHEME_CREDENTIAL = new RegExp(
  String.raw`(?:\b|(?<=%[0-9A-Fa-f]{2}))([Bb]earer|BEARER|Basic|BASIC)([ \t]+|(?:%20|\+)+)(?!\[REDACTED\])(?![\w-]+(?:=|%3[Dd])(?:["\w[]|%22))(?![Xx*#]{4,}(?![\w~+/=:-]))(?=[\w~+/=:-]*(?:\d|[.~+/=_-][\w~+/=-]|${CREDENTIAL_ESCAPE})|\w+[A-Z])((?:[\w.~+/=:-]|${CREDENTIAL_ESCAPE}){4,})`,
  'g',
);

/**
 * A cheap first look for {@link SCHEME_CREDENTIAL}: its scheme words and
 * the blank after them. Several times faster than the rule itself on a
 * line without them (most lines), and every line it passes has them.
 */
const MAY_HOLD_SCHEME_CREDENTIAL =
  /(?:[Bb]earer|BEARER|Basic|BASIC)(?:[ \t]|%20|\+)/;

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
  if (MAY_HOLD_DSN.test(out)) {
    out = out.replace(DSN_CREDENTIALS, `$1:${REDACTED}@$3(`);
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
 * a shape no other rule knows, and so is a line of base64 on its own (a PEM
 * body line; see {@link isBase64Line}). Hex runs (digests, commit SHAs,
 * trace ids), UUIDs and lower-case names are never mixed-case, so they stay.
 *
 * One regular expression finds the runs long enough to judge (every byte of
 * every log line passes through it, natively, from the first line a cold
 * process reads); the judging is code.
 */
const MIN_RUN = 20;
const MIN_ENTROPY_BITS = 3.5;

/** A-Z a-z 0-9 + / _ - (and = as padding at a run's end). */
const RUN_CHAR = '[A-Za-z0-9+/_-]';

/**
 * The whole runs of {@link RUN_CHAR} that can reach {@link MIN_RUN}: two
 * `=` of padding at the most make up the rest. A shorter run is never
 * judged, and the leftmost match of a longer one is all of it.
 */
const CANDIDATE_RUN = new RegExp(
  `(?<!${RUN_CHAR})${RUN_CHAR}{${MIN_RUN - 2},}`,
  'g',
);
const IS_RUN_CHAR = new RegExp(`^${RUN_CHAR}$`);

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

/**
 * A line that is one base64 run and nothing else (indentation, quotes and a
 * list comma aside) is judged more strictly than a run inside text. Log
 * lines are sanitized one at a time, so a private key reaches the sanitizer
 * a body line at a time, where the PEM rule cannot see its BEGIN line; and
 * a body line cut by `/` into short pieces, or a short last line, slips past
 * {@link looksRandom}. Base64 padding settles it. Otherwise the line is
 * hidden unless it reads as words: a camelCase name (NodeHasSufficientMemory,
 * AmazonEC2ContainerRegistryReadOnly) or a path of them stays. Lower-case
 * names and paths (coredns-5d78c9869d-x2x4z, /apis/apps/v1/…), digests,
 * UUIDs and URLs never get here: they are not mixed-case base64.
 */
function isBase64Line(run: string, padded: boolean): boolean {
  if (!BASE64_RUN.test(run) || !/[A-Z]/.test(run) || !/[a-z]/.test(run)) {
    return false;
  }
  return padded || !readsAsWords(run);
}

const BASE64_RUN = /^[A-Za-z0-9+/]+$/;

/**
 * A camelCase word or a run of capitals (each with the digits glued to its
 * end, so a version such as V2 or EC2 is one piece), a group of digits, or
 * a `+`.
 */
const WORD_PIECE = /[A-Z]+(?![a-z])\d*|[A-Z]?[a-z]+\d*|\d+|\+/g;

/**
 * Random text is full of pieces words seldom have: digits, a `+`, a lone
 * letter, a word without a vowel, five or more capitals in a row. Words
 * pass with at most one such piece per 32 characters (none on a line under
 * 32). Measured on a million random base64 lines of each length: about 1
 * line of 20 characters in 6,000 reads as words, 1 in 35,000 at 24, none
 * from 48 on. Of some 10,000 mixed-case identifiers and paths taken from
 * type declarations and Kubernetes objects, 94% read as words; what does
 * not is mostly acronym-heavy (RTCRtpSendParameters).
 */
function readsAsWords(run: string): boolean {
  let odd = 0;
  for (const [piece] of run.matchAll(WORD_PIECE)) {
    if (isOddPiece(piece)) odd += 1;
  }
  return odd <= Math.floor(run.length / 32);
}

function isOddPiece(piece: string): boolean {
  if (piece.length === 1 || /[\d+]/.test(piece)) return true;
  if (/[a-z]/.test(piece)) return !/[aeiouy]/i.test(piece);
  return piece.length >= 5;
}

/**
 * Whether the run is all its line holds, but for blanks and the quotes and
 * comma of a list item (`  "MIIE…",` in a JSON array).
 */
function standsAlone(text: string, start: number, end: number): boolean {
  for (let j = start - 1; j >= 0 && text[j] !== '\n'; j -= 1) {
    if (!isFraming(text[j])) return false;
  }
  for (let j = end; j < text.length && text[j] !== '\n'; j += 1) {
    if (!isFraming(text[j])) return false;
  }
  return true;
}

function isFraming(c: string | undefined): boolean {
  return (
    c === ' ' || c === '\t' || c === '\r' || c === '"' || c === "'" || c === ','
  );
}

const HEX_PAIR = /^[0-9A-Fa-f]{2}/;

function startsInsideEscape(text: string, start: number): boolean {
  return text[start - 1] === '%' && HEX_PAIR.test(text.slice(start, start + 2));
}

export function redactHighEntropy(text: string): string {
  let out = '';
  let copied = 0;
  const n = text.length;
  // exec over the one global expression, not matchAll: no iterator and no
  // copy of it per line (matchAll cost ~10% of the sanitizer's throughput).
  // Nothing in the loop calls back here, so its lastIndex is this call's.
  CANDIDATE_RUN.lastIndex = 0;
  for (
    let run = CANDIDATE_RUN.exec(text);
    run !== null;
    run = CANDIDATE_RUN.exec(text)
  ) {
    const start = run.index;
    const i = CANDIDATE_RUN.lastIndex;
    let end = i;
    // Base64 padding; a run glued to `=` and more run characters is a pair.
    if (text[end] === '=') {
      let pad = end;
      while (pad < n && pad - end < 2 && text[pad] === '=') pad += 1;
      if (pad >= n || !IS_RUN_CHAR.test(text[pad]!)) end = pad;
    }
    // A base64 line on its own counts its padding (a PEM body line's length).
    if (
      (i - start >= MIN_RUN && looksRandom(text.slice(start, i))) ||
      (end - start >= MIN_RUN &&
        standsAlone(text, start, end) &&
        isBase64Line(text.slice(start, i), end > i))
    ) {
      // A run that starts inside a URL escape (`%3D…`, `%26…`) leaves the
      // escape whole: its hex digits are the separator or delimiter the
      // value followed, and a second pass must still read them as such.
      const from = startsInsideEscape(text, start) ? start + 2 : start;
      out += text.slice(copied, from) + REDACTED;
      copied = end;
    }
  }
  return copied === 0 ? text : out + text.slice(copied);
}
