/**
 * Where the local stack's own nats-server listens, kept in DATA_DIR while the
 * stack runs, so `npm run seed` finds it without NATS_URL even when port 4222
 * was taken and the server got another one.
 */
import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const FILE = 'nats-url';

export async function writeLocalNatsUrl(
  dataDir: string,
  url: string,
): Promise<() => Promise<void>> {
  const path = join(dataDir, FILE);
  await writeFile(path, `${url}\n`);
  return () => rm(path, { force: true });
}

/** The running local stack's NATS URL, if it has one. */
export function readLocalNatsUrl(dataDir: string): string | undefined {
  try {
    return readFileSync(join(dataDir, FILE), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
