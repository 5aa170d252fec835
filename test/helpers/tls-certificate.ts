/**
 * A certificate for one run of a TLS server the tests stand up (the RDS
 * Proxy stand-in, nats-server), issued by an authority made for the run, as
 * a private authority issues a server's: a client verifies the server only
 * when told to trust the authority's file, and it checks a chain, not a
 * certificate it was handed itself.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export interface TestCertificate {
  /** The server's key, PEM. */
  keyFile: string;
  /** The server's certificate for localhost and 127.0.0.1, PEM. */
  certFile: string;
  /** The authority that issued it, PEM: what a client is told to trust. */
  caFile: string;
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: 'ignore' });
}

/** Writes an authority, and a key and certificate it issued, into `dir`. */
export function makeCertificate(dir: string): TestCertificate {
  const caKey = join(dir, 'ca-key.pem');
  const caFile = join(dir, 'ca.pem');
  const keyFile = join(dir, 'key.pem');
  const request = join(dir, 'server.csr');
  const certFile = join(dir, 'cert.pem');
  openssl([
    'req',
    '-x509',
    ...EC_KEY,
    '-nodes',
    '-keyout',
    caKey,
    '-out',
    caFile,
    '-days',
    '2',
    '-subj',
    '/CN=k8s-inventory test authority',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  openssl([
    'req',
    '-new',
    ...EC_KEY,
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    request,
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
  ]);
  openssl([
    'x509',
    '-req',
    '-in',
    request,
    '-CA',
    caFile,
    '-CAkey',
    caKey,
    '-CAcreateserial',
    '-copy_extensions',
    'copy',
    '-days',
    '2',
    '-out',
    certFile,
  ]);
  return { keyFile, certFile, caFile };
}
