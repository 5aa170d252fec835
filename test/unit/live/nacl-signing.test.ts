/**
 * The bundles' stand-in for tweetnacl (shared/live/nacl-signing.ts) gives
 * what tweetnacl gives, byte for byte, for what a `.creds` login asks of it;
 * and the NATS client's own authenticator signs a nonce the server then
 * checks with the user's public key.
 */
import { credsAuthenticator } from '@nats-io/transport-node';
import fc from 'fast-check';
import tweetnacl from 'tweetnacl';
import { describe, expect, it } from 'vitest';
import nacl from '../../../shared/live/nacl-signing.ts';
import { natsAccounts } from '../../helpers/nats-creds.ts';

const seeds = fc.uint8Array({ minLength: 32, maxLength: 32 });
const messages = fc.uint8Array({ maxLength: 512 });

describe('nacl-signing, in tweetnacl’s place', () => {
  it('derives tweetnacl’s key pair from any seed', () => {
    fc.assert(
      fc.property(seeds, (seed) => {
        expect(nacl.sign.keyPair.fromSeed(seed)).toEqual(
          tweetnacl.sign.keyPair.fromSeed(seed),
        );
      }),
    );
  });

  it('signs any message as tweetnacl does, and each checks the other’s signature', () => {
    fc.assert(
      fc.property(seeds, messages, (seed, message) => {
        const { publicKey, secretKey } = tweetnacl.sign.keyPair.fromSeed(seed);
        const signature = nacl.sign.detached(message, secretKey);
        expect(signature).toEqual(tweetnacl.sign.detached(message, secretKey));
        expect(nacl.sign.detached.verify(message, signature, publicKey)).toBe(
          true,
        );
        expect(
          tweetnacl.sign.detached.verify(message, signature, publicKey),
        ).toBe(true);
      }),
      // tweetnacl's arithmetic is slow: ~70 ms a pair of runs.
      { numRuns: 25 },
    );
  });

  it('refuses a signature of another message or key', () => {
    fc.assert(
      fc.property(seeds, seeds, messages, (seed, other, message) => {
        fc.pre(Buffer.compare(seed, other) !== 0);
        const mine = nacl.sign.keyPair.fromSeed(seed);
        const theirs = nacl.sign.keyPair.fromSeed(other);
        const signature = nacl.sign.detached(message, mine.secretKey);
        expect(
          nacl.sign.detached.verify(message, signature, theirs.publicKey),
        ).toBe(false);
        const altered = Uint8Array.from([...message, 1]);
        expect(
          nacl.sign.detached.verify(altered, signature, mine.publicKey),
        ).toBe(false);
      }),
    );
  });

  it('gives random bytes of the length asked, and refuses keys of the wrong size', () => {
    expect(nacl.randomBytes(24)).toHaveLength(24);
    expect(() => nacl.sign.keyPair.fromSeed(new Uint8Array(31))).toThrow(
      'bad seed size',
    );
    expect(() =>
      nacl.sign.detached(new Uint8Array(1), new Uint8Array(32)),
    ).toThrow('bad secret key size');
    expect(() => nacl.box()).toThrow(/curve \(xkey\) encryption/);
  });

  it('signs a server nonce as the NATS client’s creds login does with tweetnacl', async () => {
    // Prepare: a user's .creds, and its seed as the login reads it.
    const creds = await (await natsAccounts()).userCreds('api');
    const { fromSeed } = await import('@nats-io/nkeys');
    const seedLine = creds.match(/^SU[A-Z2-7]+$/m)![0];
    const user = fromSeed(new TextEncoder().encode(seedLine));
    const nonce = 'Gw8T1pkLRcCUmw';

    // Act: the client's authenticator, whose nkeys reach tweetnacl here.
    const auth = credsAuthenticator(new TextEncoder().encode(creds))(nonce) as {
      nkey: string;
      sig: string;
    };

    // Assess: the same signature through the stand-in.
    // The 32 seed bytes the .creds seed encodes (nkeys' KeyPair has them,
    // its type does not say so).
    const seed = (user as unknown as { getRawSeed(): Uint8Array }).getRawSeed();
    const { secretKey } = nacl.sign.keyPair.fromSeed(seed);
    const ours = nacl.sign.detached(new TextEncoder().encode(nonce), secretKey);
    expect(auth.nkey).toBe(user.getPublicKey());
    expect(new Uint8Array(Buffer.from(auth.sig, 'base64'))).toEqual(ours);
  });
});
