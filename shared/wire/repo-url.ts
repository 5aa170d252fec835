/**
 * Repository URLs without credentials (wire contract v1.1, argocd_applications
 * `source.repo_url`): the agent removes any userinfo before sending, and the
 * backend refuses a message whose repo_url still carries one. Both ends use
 * these two functions, so they agree on what userinfo is.
 *
 * Userinfo is everything before the last `@` of the authority: in a URL with
 * a scheme (`https://user:token@host/x`, `ssh://git@host/x`) the authority
 * runs to the first `/`, `?` or `#`; in git's scp-like form
 * (`git@host:org/repo.git`) it is the part before the first `:`. An `@` in
 * a path (`https://host/org/repo@v1`) is not userinfo.
 *
 * Both are read as a URL parser reads them: leading and trailing spaces and
 * control characters, and tabs and newlines anywhere, do not count (WHATWG
 * URL drops them), so ` https://user:token@host/x` is not a way past the
 * check. And what the WHATWG parser itself takes for userinfo counts too
 * (`https:user:token@host/x` is `https://user:token@host/x` to it): a
 * repo_url either reading finds credentials in carries credentials.
 */

const WITH_SCHEME = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is;
/** `[user@]host:path`, with no `/` before the `:` (git's scp-like syntax). */
const SCP_LIKE = /^([^/:]*):(.*)$/s;

/** The URL's userinfo, or undefined when it has none. */
function split(
  url: string,
): { before: string; userinfo: string; after: string } | undefined {
  const schemed = WITH_SCHEME.exec(url);
  if (schemed) {
    const [, scheme = '', authority = '', rest = ''] = schemed;
    const at = authority.lastIndexOf('@');
    if (at === -1) return undefined;
    return {
      before: scheme,
      userinfo: authority.slice(0, at + 1),
      after: authority.slice(at + 1) + rest,
    };
  }
  const scp = SCP_LIKE.exec(url);
  if (scp) {
    const [, authority = '', path = ''] = scp;
    const at = authority.lastIndexOf('@');
    if (at === -1) return undefined;
    return {
      before: '',
      userinfo: authority.slice(0, at + 1),
      after: `${authority.slice(at + 1)}:${path}`,
    };
  }
  return undefined;
}

/** The URL as a WHATWG parser reads it (see the module's comment). */
function asParsed(url: string): string {
  const inner = url.replace(/[\t\n\r]/g, '');
  let start = 0;
  let end = inner.length;
  while (start < end && inner.charCodeAt(start) <= 0x20) start++;
  while (end > start && inner.charCodeAt(end - 1) <= 0x20) end--;
  return inner.slice(start, end);
}

/** Whether the WHATWG URL parser finds a user name or password in `url`. */
function parserFindsUserinfo(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const parsed = new URL(url);
  return parsed.username !== '' || parsed.password !== '';
}

/** True when the URL carries a user name or password. */
export function repoUrlHasUserinfo(url: string): boolean {
  return split(asParsed(url)) !== undefined || parserFindsUserinfo(url);
}

/**
 * The URL (as a parser reads it) with its userinfo removed, or undefined
 * when what is left would still carry one (then the caller sends nothing
 * for it: fail closed).
 */
export function stripRepoUrlUserinfo(url: string): string | undefined {
  const plain = asParsed(url);
  const parts = split(plain);
  const stripped = parts === undefined ? plain : parts.before + parts.after;
  return repoUrlHasUserinfo(stripped) ? undefined : stripped;
}
