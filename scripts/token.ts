/**
 * Prints a bearer token the local stack accepts:
 *   npm run token -- --email alice@example.com [--sub ID] [--ttl 1h]
 * Signed with the local key in DATA_DIR (created if missing, so the token
 * works against a local stack started later). `--sub` defaults to
 * `local:<email>`; `--ttl` takes 90s, 30m, 1h, 1d (default 1h, at most a
 * day: a longer one is refused).
 */
import { parseArgs } from 'node:util';
import {
  loadLocalJwtKey,
  parseTtl,
  signLocalToken,
} from '../shared/auth/local-jwt.ts';
import { getConfig } from '../shared/config.ts';

const { values } = parseArgs({
  options: {
    email: { type: 'string' },
    sub: { type: 'string' },
    ttl: { type: 'string', default: '1h' },
  },
});

if (!values.email && !values.sub) {
  process.stderr.write(
    'usage: npm run token -- --email alice@example.com [--sub ID] [--ttl 1h]\n',
  );
  process.exit(2);
}

let ttlSeconds: number;
try {
  ttlSeconds = parseTtl(values.ttl);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}

const config = getConfig();
const key = await loadLocalJwtKey(config.DATA_DIR, {
  issuer: config.JWT_ISSUER,
  audience: config.JWT_AUDIENCE,
});
const token = await signLocalToken(key, {
  email: values.email,
  sub: values.sub ?? `local:${values.email}`,
  ttlSeconds,
});
process.stdout.write(`${token}\n`);
