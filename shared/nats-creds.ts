/**
 * A NATS login's `.creds` (NATS_CREDS, the NATS secret's `creds`): the
 * file's content, or its path. The agent, the bridge and the live reads
 * read it through here, so one value works for all three.
 */
import { readFile } from 'node:fs/promises';

/** Every `.creds` file holds the user's JWT under this armour line. */
const CREDS_CONTENT = 'BEGIN NATS USER JWT';

/**
 * The `.creds` content as the client's authenticator takes it; undefined
 * when there is none to log in with (absent or blank: a server without
 * authentication, and the NATS secret's `creds` of `""`).
 */
export async function credsBytes(
  creds: string | undefined,
): Promise<Uint8Array | undefined> {
  if (!creds?.trim()) return undefined;
  const text = creds.includes(CREDS_CONTENT)
    ? creds
    : await readCredsFile(creds.trim());
  // The client's parser wants a newline after each block's END line; a
  // file whose seed block comes last (as NATS's jwt.js writes it) ends on
  // that line, and a secret store or a shell can drop the final newline.
  return new TextEncoder().encode(text.endsWith('\n') ? text : `${text}\n`);
}

async function readCredsFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(
      `the NATS credentials are neither a .creds file's content nor a file that can be read (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      { cause: error },
    );
  }
}
