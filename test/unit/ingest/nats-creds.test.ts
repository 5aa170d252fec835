/**
 * One rule reads a NATS login's `.creds` for the agent, the bridge and the
 * live reads: the content or a file's path, none when blank.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credsBytes } from '../../../shared/nats-creds.ts';

const CREDS = `-----BEGIN NATS USER JWT-----
eyJ0eXAiOiJKV1QifQ.e30.c2ln
------END NATS USER JWT------

-----BEGIN USER NKEY SEED-----
SUAEXAMPLE
------END USER NKEY SEED------
`;
const text = (bytes: Uint8Array | undefined) =>
  bytes === undefined ? undefined : new TextDecoder().decode(bytes);

describe('credsBytes', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nats-creds-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('takes none when the creds are absent or blank (the secret’s "")', async () => {
    expect(await credsBytes(undefined)).toBeUndefined();
    expect(await credsBytes('')).toBeUndefined();
    expect(await credsBytes(' \n')).toBeUndefined();
  });

  it('takes the content as it is, with the final newline a store dropped put back', async () => {
    expect(text(await credsBytes(CREDS))).toBe(CREDS);
    expect(text(await credsBytes(CREDS.trimEnd()))).toBe(CREDS);
  });

  it('reads a path, and names neither the path nor its content when it cannot', async () => {
    // Prepare
    const file = join(dir, 'user.creds');
    await writeFile(file, CREDS.trimEnd(), { mode: 0o600 });

    // Act / Assess
    expect(text(await credsBytes(` ${file}\n`))).toBe(CREDS);
    await expect(credsBytes(join(dir, 'missing.creds'))).rejects.toThrow(
      "the NATS credentials are neither a .creds file's content nor a file that can be read (ENOENT)",
    );
  });
});
