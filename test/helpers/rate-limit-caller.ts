/**
 * A separate process for the rate limiter's concurrency test: makes `calls`
 * concurrent calls of one subject in one family against DATABASE_URL, with
 * its own pool, and prints how many were allowed.
 *
 * argv: <subject> <family> <limit> <calls>
 */
import { createPool } from '../../shared/db/pool.ts';
import { countCall } from '../../shared/http/rate-limit.ts';

const [subject = '', family = '', limit = '0', calls = '0'] =
  process.argv.slice(2);
const db = createPool({
  connectionString: process.env.DATABASE_URL ?? '',
  max: 10,
});
const rule = { family, limit: Number(limit), windowSeconds: 60, message: '' };
const decisions = await Promise.all(
  Array.from({ length: Number(calls) }, () => countCall(db, subject, rule)),
);
await db.end();
console.log(
  JSON.stringify({ allowed: decisions.filter((d) => d.allowed).length }),
);
