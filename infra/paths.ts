/** Where the repository's parts are, independent of the working directory. */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Absolute path of a repository-relative path. */
export function fromRoot(relative: string): string {
  return join(repoRoot, relative);
}
