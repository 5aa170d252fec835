/**
 * Bodies at and past the ingest's size limits, for the fault histories, the
 * memory benchmark and its test: gzip that inflates past MAX_INFLATED_BYTES
 * (a bomb of spaces, and an inventory-shaped JSON document one padding
 * string too large), compressed from a stream of 1 MiB chunks so building
 * one never holds its inflated size; and a valid inventory of a given size.
 */
import { createGzip } from 'node:zlib';
import { MAX_INFLATED_BYTES } from '../../shared/ingest/queue-message.ts';
import type { Inventory } from '../../shared/wire/inventory.ts';
import { generateInventory, SIZES } from '../fixtures/generate.ts';

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

const bombs = new Map<number, Promise<Buffer>>();
let tooLarge: Promise<Buffer> | undefined;

/**
 * Gzip of `inflatedBytes` of spaces (twice MAX_INFLATED_BYTES by default:
 * about 130 KB compressed; 1 GiB is about 1 MB).
 */
export function gzipBomb(
  inflatedBytes = 2 * MAX_INFLATED_BYTES,
): Promise<Buffer> {
  let bomb = bombs.get(inflatedBytes);
  if (bomb === undefined) {
    bomb = gzipStream('', inflatedBytes, 0x20, '');
    bombs.set(inflatedBytes, bomb);
  }
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

/** The medium fixture's JSON size, from which the scale is guessed. */
const MEDIUM_BYTES = 4_800_000;
const PAD_CHUNK = 200 * 1024;

/**
 * A valid inventory whose JSON is `targetBytes` long (within a few bytes):
 * the medium fixture scaled up by its namespaces, then padded to the size
 * with workload annotations (each under the schema's 256 KiB).
 */
export function inventoryOfSize(
  agentId: string,
  targetBytes: number,
  at = new Date(),
): Buffer {
  let scale = (targetBytes * 0.9) / MEDIUM_BYTES;
  for (;;) {
    const inventory: Inventory = generateInventory({
      ...SIZES.medium,
      namespaces: Math.max(1, Math.round(SIZES.medium.namespaces * scale)),
      seed: agentId,
      agentId,
      clusterName: `max-${agentId.slice(0, 8)}`,
      timestamp: at.toISOString(),
      specFacts: true,
    });
    let size = Buffer.byteLength(JSON.stringify(inventory));
    if (size > targetBytes) {
      scale *= 0.9;
      continue;
    }
    const workloads = inventory.workloads ?? [];
    for (let i = 0; size < targetBytes && workloads.length > 0; i++) {
      const w = workloads[i % workloads.length]!;
      const key = `bench.local/pad-${i}`;
      // "key":"value" plus a comma (or the braces of a first annotation).
      const overhead = key.length + 6;
      const value = 'p'.repeat(
        Math.max(0, Math.min(PAD_CHUNK, targetBytes - size - overhead)),
      );
      w.annotations = { ...w.annotations, [key]: value };
      size = Buffer.byteLength(JSON.stringify(inventory));
    }
    return Buffer.from(JSON.stringify(inventory));
  }
}
