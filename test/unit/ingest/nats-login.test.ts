/**
 * One rule reads how the agent, the bridge and the live reads reach NATS:
 * a login's `.creds` and the server's certificate authority (the content
 * or a file's path, none when blank), the NATS secret's JSON, and the
 * configuration's NATS_URL, NATS_CREDS, NATS_CA and NATS_SECRET.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../shared/config.ts';
import {
  caPem,
  credsBytes,
  natsLoginOptions,
  natsTargetOf,
  parseNatsSecret,
} from '../../../shared/nats-login.ts';

const CREDS = `-----BEGIN NATS USER JWT-----
eyJ0eXAiOiJKV1QifQ.e30.c2ln
------END NATS USER JWT------

-----BEGIN USER NKEY SEED-----
SUAEXAMPLE
------END USER NKEY SEED------
`;
const text = (bytes: Uint8Array | undefined) =>
  bytes === undefined ? undefined : new TextDecoder().decode(bytes);

/** Holds the files read by path. */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nats-login-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('credsBytes', () => {
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

// Any certificate's armour will do: the client verifies it, not this rule.
const CA = `-----BEGIN CERTIFICATE-----
MIIBfzCCASWgAwIBAgIUEXAMPLE
-----END CERTIFICATE-----
`;

describe('caPem', () => {
  it('takes none when the authority is absent or blank', async () => {
    expect(await caPem(undefined)).toBeUndefined();
    expect(await caPem('')).toBeUndefined();
    expect(await caPem(' \n')).toBeUndefined();
  });

  it('takes the PEM as it is, or reads it from a path', async () => {
    // Prepare
    const file = join(dir, 'ca.pem');
    await writeFile(file, CA);

    // Act / Assess
    expect(await caPem(CA)).toBe(CA);
    expect(await caPem(` ${file}\n`)).toBe(CA);
  });

  it('refuses a file that cannot be read, or holds no certificate, naming neither path nor content', async () => {
    // Prepare
    const notPem = join(dir, 'not.pem');
    await writeFile(notPem, 'secret-looking text');
    const what =
      'the NATS certificate authority is neither a PEM certificate nor a file that holds one';

    // Act / Assess
    await expect(caPem(join(dir, 'missing.pem'))).rejects.toThrow(
      `${what} (ENOENT)`,
    );
    await expect(caPem(notPem)).rejects.toThrow(`${what} (no certificate)`);
    await expect(caPem(notPem)).rejects.not.toThrow(/secret-looking|not\.pem/);
  });
});

describe('natsLoginOptions', () => {
  const authenticator = (creds: Uint8Array) => () => ({
    jwt: new TextDecoder().decode(creds).slice(0, 10),
  });

  it('logs in with the creds and verifies TLS against the authority when each is set', async () => {
    // Act
    const options = await natsLoginOptions(
      { url: 'nats://nats.example:4222', creds: CREDS, ca: CA },
      authenticator,
    );

    // Assess
    expect(options.servers).toBe('nats://nats.example:4222');
    expect(options.tls).toEqual({ ca: CA });
    expect(options.authenticator?.()).toEqual({ jwt: '-----BEGIN' });
  });

  it('adds neither for a server without a login or a private authority', async () => {
    expect(
      await natsLoginOptions(
        { url: 'nats://127.0.0.1:4222', creds: '', ca: '' },
        authenticator,
      ),
    ).toEqual({ servers: 'nats://127.0.0.1:4222' });
  });
});

describe('parseNatsSecret', () => {
  it('reads url, creds and ca; creds and ca may be absent or null', () => {
    expect(
      parseNatsSecret(
        JSON.stringify({
          url: 'tls://nats.example:4222',
          creds: CREDS,
          ca: CA,
        }),
      ),
    ).toEqual({ url: 'tls://nats.example:4222', creds: CREDS, ca: CA });
    expect(
      parseNatsSecret(JSON.stringify({ url: 'nats://n:4222', ca: null })),
    ).toEqual({ url: 'nats://n:4222' });
  });

  it.each([
    ['not JSON', 'url=nats://n:4222', 'the NATS secret is not JSON'],
    [
      'not an object',
      '["nats://n:4222"]',
      'the NATS secret is not a JSON object',
    ],
    ['no url', JSON.stringify({ creds: CREDS }), 'the NATS secret has no url'],
    ['a blank url', JSON.stringify({ url: ' ' }), 'the NATS secret has no url'],
    [
      'creds not a string',
      JSON.stringify({ url: 'nats://n:4222', creds: { jwt: 'x' } }),
      "the NATS secret's creds is not a string",
    ],
    [
      'ca not a string',
      JSON.stringify({ url: 'nats://n:4222', ca: 42 }),
      "the NATS secret's ca is not a string",
    ],
  ])('refuses a secret with %s, naming the field', (_, text, message) => {
    expect(() => parseNatsSecret(text)).toThrow(message);
  });

  it('never repeats a value it refuses', () => {
    expect(() => parseNatsSecret('{"url": "nats://user:hunter2@n"')).toThrow(
      /^the NATS secret is not JSON$/,
    );
  });
});

describe('natsTargetOf', () => {
  it('takes NATS_URL with NATS_CREDS and NATS_CA', () => {
    expect(
      natsTargetOf(
        parseConfig({
          NATS_URL: 'nats://127.0.0.1:4222',
          NATS_CREDS: '/etc/nats/user.creds',
          NATS_CA: '/etc/nats/ca.pem',
        }),
      ),
    ).toEqual({
      url: 'nats://127.0.0.1:4222',
      creds: '/etc/nats/user.creds',
      ca: '/etc/nats/ca.pem',
    });
  });

  it('takes NATS_SECRET, the secret as ECS injects it', () => {
    expect(
      natsTargetOf(
        parseConfig({
          NATS_SECRET: JSON.stringify({
            url: 'tls://n:4222',
            creds: CREDS,
            ca: CA,
          }),
        }),
      ),
    ).toEqual({ url: 'tls://n:4222', creds: CREDS, ca: CA });
  });

  it('is none when neither is set', () => {
    expect(natsTargetOf(parseConfig({}))).toBeUndefined();
  });

  it('refuses both, and a NATS_SECRET it cannot read, naming the variable', () => {
    const both = parseConfig({
      NATS_URL: 'nats://127.0.0.1:4222',
      NATS_SECRET: JSON.stringify({ url: 'nats://other:4222' }),
    });
    expect(() => natsTargetOf(both)).toThrow(ConfigError);
    expect(() => natsTargetOf(both)).toThrow(
      'NATS_SECRET: set NATS_URL (with NATS_CREDS and NATS_CA) or NATS_SECRET, not both',
    );
    expect(() =>
      natsTargetOf(parseConfig({ NATS_SECRET: '{"creds": ""}' })),
    ).toThrow('NATS_SECRET: the NATS secret has no url');
  });
});
