/**
 * Bodies past the ingest's size limits, for the fault histories and the
 * memory benchmark: gzip that inflates past MAX_INFLATED_BYTES (a bomb of
 * spaces, and an inventory-shaped JSON document one padding string too
 * large). Each is compressed from a stream of 1 MiB chunks, so building one
 * never holds its inflated size in memory; each is built once per process.
 */
import { createGzip } from 'node:zlib';
import { MAX_INFLATED_BYTES } from '../../shared/ingest/queue-message.ts';

const CHUNK = 1024 * 1024;

/** Gzip of `head`, then `fill` repeated to `bytes` in all, then `tail`. */
async function gzipStream(
  head: string,
  bytes: number,
  fill: number,
  tail: string,
): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gzip.on('data', (c: Buffer) => out.push(c));
  const done = new Promise<void>((resolve, reject) => {
    gzip.once('end', resolve);
    gzip.once('error', reject);
  });
  const write = (chunk: Buffer) =>
    new Promise<void>((resolve, reject) =>
      gzip.write(chunk, (error) => (error ? reject(error) : resolve())),
    );
  await write(Buffer.from(head));
  const chunk = Buffer.alloc(CHUNK, fill);
  let left = bytes - head.length - tail.length;
  while (left > 0) {
    const n = Math.min(left, CHUNK);
    await write(n === CHUNK ? chunk : chunk.subarray(0, n));
    left -= n;
  }
  await write(Buffer.from(tail));
  gzip.end();
  await done;
  return Buffer.concat(out);
}

let bomb: Promise<Buffer> | undefined;
let tooLarge: Promise<Buffer> | undefined;

/** Gzip of twice MAX_INFLATED_BYTES of spaces: about 130 KB compressed. */
export function gzipBomb(): Promise<Buffer> {
  bomb ??= gzipStream('', 2 * MAX_INFLATED_BYTES, 0x20, '');
  return bomb;
}

/**
 * Gzip of an inventory-shaped JSON document of MAX_INFLATED_BYTES + 1 MiB:
 * valid JSON, refused for its size alone (about 65 KB compressed).
 */
export function gzipTooLargeJson(): Promise<Buffer> {
  tooLarge ??= gzipStream(
    '{"type":"kubernetes","schema_version":1,"pad":"',
    MAX_INFLATED_BYTES + CHUNK,
    0x61,
    '"}',
  );
  return tooLarge;
}
