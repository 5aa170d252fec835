/**
 * The part of tweetnacl's API that `@nats-io/nkeys` calls for a `.creds`
 * login (an Ed25519 key pair from a seed, a detached signature of the
 * server's nonce, its check, random bytes), over node:crypto (OpenSSL).
 * The Lambda bundles take this module in tweetnacl's place (esbuild's
 * alias, `BUNDLE_ALIAS` in infra/constructs/service-function.ts): a live
 * read's cold start logs in to NATS, and tweetnacl's pure-JavaScript
 * arithmetic on a cold VM made that ~60 ms of it.
 *
 * Ed25519 is deterministic (RFC 8032): the keys and signatures are
 * tweetnacl's byte for byte, which a property test holds. Curve (xkey)
 * encryption, which nkeys also reaches tweetnacl for, is never used by the
 * NATS client and throws here.
 */
import {
  createPrivateKey,
  createPublicKey,
  randomBytes as cryptoRandomBytes,
  type KeyObject,
  sign,
  verify,
} from 'node:crypto';

/** DER prefixes around a raw 32-byte Ed25519 key (RFC 8410). */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const SEED_BYTES = 32;
const PUBLIC_KEY_BYTES = 32;
/** tweetnacl's secret key: the seed, then the public key. */
const SECRET_KEY_BYTES = SEED_BYTES + PUBLIC_KEY_BYTES;

function privateKeyOf(seed: Uint8Array): KeyObject {
  if (seed.length !== SEED_BYTES) throw new Error('bad seed size');
  return createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
}

function fromSeed(seed: Uint8Array): {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
} {
  const spki = createPublicKey(privateKeyOf(seed)).export({
    format: 'der',
    type: 'spki',
  });
  const publicKey = new Uint8Array(spki.subarray(SPKI_PREFIX.length));
  const secretKey = new Uint8Array(SECRET_KEY_BYTES);
  secretKey.set(seed);
  secretKey.set(publicKey, SEED_BYTES);
  return { publicKey, secretKey };
}

function detached(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  if (secretKey.length !== SECRET_KEY_BYTES) {
    throw new Error('bad secret key size');
  }
  return new Uint8Array(
    sign(null, message, privateKeyOf(secretKey.subarray(0, SEED_BYTES))),
  );
}

detached.verify = (
  message: Uint8Array,
  signature: Uint8Array,
  publicKey: Uint8Array,
): boolean => {
  if (publicKey.length !== PUBLIC_KEY_BYTES) {
    throw new Error('bad public key size');
  }
  return verify(
    null,
    message,
    {
      key: Buffer.concat([SPKI_PREFIX, publicKey]),
      format: 'der',
      type: 'spki',
    },
    signature,
  );
};

function curveUnavailable(): never {
  throw new Error(
    'curve (xkey) encryption is not available here: the NATS client never uses it',
  );
}

const nacl = {
  randomBytes: (length: number): Uint8Array =>
    new Uint8Array(cryptoRandomBytes(length)),
  sign: { detached, keyPair: { fromSeed } },
  box: Object.assign(curveUnavailable, { open: curveUnavailable }),
  scalarMult: { base: curveUnavailable },
};

export default nacl;
