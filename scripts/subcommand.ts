/**
 * What the operator scripts with subcommands share (`npm run webhook`,
 * `npm run host`): reading `<command> --option value ...` against a usage
 * text, and running the command on one connection to the local database
 * (DATABASE_URL, else the local stack's), with a failure printed as one
 * line and exit code 1. A usage error exits 2.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { getConfig } from '../shared/config.ts';
import { localDatabaseUrl } from '../shared/db/local-url.ts';
import { createPool } from '../shared/db/pool.ts';

/**
 * The command and its options; the usage text and exit 2 for anything
 * else, an option a command requires missing included.
 */
export function parseSubcommand<
  const O extends NonNullable<ParseArgsConfig['options']>,
  const C extends string,
>(
  usage: string,
  commands: readonly C[],
  options: O,
  required: Partial<Record<C, readonly (keyof O & string)[]>> = {},
) {
  const { values, positionals } = parseArgs({
    options,
    allowPositionals: true,
    strict: true,
  });
  const command = commands.find((known) => known === positionals[0]);
  const present = values as Record<string, unknown>;
  if (
    positionals.length !== 1 ||
    command === undefined ||
    (required[command] ?? []).some((name) => !present[name])
  ) {
    console.error(usage);
    process.exit(2);
  }
  return { command, values };
}

/** Runs `run` on one connection named `script`, then closes it. */
export async function withLocalDatabase(
  script: string,
  command: string,
  run: (db: ReturnType<typeof createPool>) => Promise<void>,
): Promise<void> {
  const db = createPool({
    connectionString: localDatabaseUrl(getConfig()),
    max: 1,
    applicationName: script,
  });
  try {
    await run(db);
  } catch (error) {
    console.error(
      `${script} ${command} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
    process.exitCode = 1;
  } finally {
    await db.end();
  }
}
