/**
 * A certificate for one run of a TLS server the tests stand up (the RDS
 * Proxy stand-in, nats-server): self-signed, so the certificate is its own
 * authority, and a client verifies it only when told to trust that file.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export interface TestCertificate {
  /** The key's PEM file. */
  keyFile: string;
  /** The certificate's PEM file, also its authority's. */
  certFile: string;
}

/** Writes a key and a certificate for localhost and 127.0.0.1 into `dir`. */
export function makeCertificate(dir: string): TestCertificate {
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { keyFile, certFile };
}
