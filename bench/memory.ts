/**
 * `npm run bench -- memory [--quick]`: the peak resident memory of reading
 * one message of the largest size the ingest accepts, and of refusing ones
 * past it, each in a fresh process (the peak is a process's high-water
 * mark: `process.resourceUsage().maxRSS`). Cases:
 *
 * - `max-message`: a valid inventory of 8 MiB less 4 KiB of JSON, the
 *   largest message the local stack's nats-server (`max_payload` 8 MB) takes
 *   with its headers, queued inline;
 * - `max-inflated`: gzip of a valid inventory just under MAX_INFLATED_BYTES
 *   (64 MiB), the largest payload accepted at all (skipped by `--quick`);
 * - `gzip-bomb`: gzip of 1 GiB of spaces (about 1 MB), refused at the cap;
 * - `gzip-too-large`: gzip of valid JSON 1 MiB past the cap, refused.
 *
 * Each child (bench/memory-child.ts), started as Lambda starts the sync
 * function (the runtime's Node major, the heap options its bootstrap gives
 * Node for the function's memory), reads the body from a file, then decodes the queued record
 * (decodeQueuedInventory: base64, the capped gunzip) and parses and
 * validates it (parseInventoryJson), the sync's in-memory part before its
 * transaction. The figures are the peak RSS, the RSS just before the message
 * was handled, and their difference. Memory, not time: a busy machine does
 * not change them much (the garbage collector may run later, so a bound
 * needs a margin).
 */
import { loadavg } from 'node:os';
import { measureInChild, memoryCases } from './memory-child.ts';

const mib = (kib: number) => (kib / 1024).toFixed(1);

async function main() {
  const quick = process.argv.includes('--quick');
  const [load1, load5] = loadavg();
  console.log(
    `peak RSS per message, each in a fresh process (load average ${load1!.toFixed(2)}, ${load5!.toFixed(2)})`,
  );
  for (const c of await memoryCases({ quick })) {
    const f = measureInChild(c.name, c.body, c.gzip);
    console.log(
      `${f.case.padEnd(15)} body ${(f.bodyBytes / 1e6).toFixed(2).padStart(6)} MB${f.gzip ? ' gzip' : '     '}  peak ${mib(f.peakRssKiB).padStart(7)} MiB  before ${mib(f.rssBeforeKiB).padStart(6)} MiB  added ${mib(f.addedKiB).padStart(7)} MiB  cpu ${String(f.cpuMs).padStart(6)} ms  ${f.outcome.slice(0, 90)}`,
    );
  }
}

await main();
