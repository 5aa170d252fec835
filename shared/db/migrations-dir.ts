/**
 * Finds the migrations folder among candidates: a bundle carries it beside
 * its entry file, the source tree at the repository root.
 */
import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export class MigrationsDirError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MigrationsDirError';
  }
}

/** The first candidate holding NNNN_*.sql files (a relative path is from the cwd). */
export function findMigrationsDir(
  candidates: readonly (string | URL)[],
): string {
  const tried: string[] = [];
  for (const candidate of candidates) {
    const dir =
      candidate instanceof URL ? fileURLToPath(candidate) : resolve(candidate);
    tried.push(dir);
    if (
      existsSync(dir) &&
      readdirSync(dir).some((name) => /^\d{4}_.+\.sql$/.test(name))
    ) {
      return dir;
    }
  }
  throw new MigrationsDirError(
    `no migrations found; looked in ${tried.join(', ')}`,
  );
}
