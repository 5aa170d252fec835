/**
 * The memory benchmark's measurement (bench/memory.ts) and the test that
 * bounds it: one message handled in a fresh process, its peak RSS reported.
 * Run as `node --expose-gc --import tsx bench/memory-child.ts --child NAME
 * FILE gzip|identity`, it reads the body from FILE, decodes it as a queued
 * record (decodeQueuedInventory: base64, the capped gunzip), parses and
 * validates it (parseInventoryJson) and prints one JSON line of figures.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import { SYNC_MEMORY_SIZE } from '../infra/function-memory.ts';
import { RejectedInventoryError } from '../shared/errors.ts';
import {
  decodeQueuedInventory,
  MAX_INFLATED_BYTES,
  QueueAttribute,
  type QueuedRecord,
} from '../shared/ingest/queue-message.ts';
import { parseInventoryJson } from '../shared/wire/inventory.ts';
import {
  gzipBomb,
  gzipTooLargeJson,
  inventoryOfSize,
} from '../test/helpers/hostile-bodies.ts';
import {
  bootstrapNodeOptions,
  lambdaNodeBinary,
} from '../test/helpers/lambda-process.ts';

/** The local stack's max_payload (8 MiB) less room for the headers. */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024 - 4096;
const AGENT_ID = '5f0c1e2a-7b3d-4c9e-8a1f-2d3e4f5a6b7c';

export interface MemoryFigures {
  case: string;
  /** The body as published (compressed when gzip). */
  bodyBytes: number;
  gzip: boolean;
  outcome: string;
  /** process.memoryUsage().rss just before the message, KiB. */
  rssBeforeKiB: number;
  /** process.resourceUsage().maxRSS after it, KiB. */
  peakRssKiB: number;
  /** peak − before: what handling the message added at its peak, KiB. */
  addedKiB: number;
  cpuMs: number;
}

/**
 * Runs one case in a child process (this file with `--child`) and returns
 * its figures. The body is written to a file the child reads first.
 */
export function measureInChild(
  name: string,
  body: Buffer,
  gzip: boolean,
): MemoryFigures {
  const dir = mkdtempSync(join(tmpdir(), 'bench-memory-'));
  try {
    const file = join(dir, 'body');
    writeFileSync(file, body);
    const result = spawnSync(
      lambdaNodeBinary(),
      [
        ...bootstrapNodeOptions(SYNC_MEMORY_SIZE),
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        '--child',
        name,
        file,
        gzip ? 'gzip' : 'identity',
      ],
      { encoding: 'utf8', maxBuffer: 1024 * 1024 },
    );
    const line = result.stdout.split('\n').find((l) => l.startsWith('{"case"'));
    if (result.status !== 0 || line === undefined) {
      throw new Error(
        `memory child ${name} failed (${result.status}): ${result.stderr.slice(-2000)}`,
      );
    }
    return JSON.parse(line) as MemoryFigures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The child: one message read back and parsed, its memory reported. */
async function child(name: string, file: string, encoding: string) {
  const body = readFileSync(file);
  const gzip = encoding === 'gzip';
  const subject = `proxima.bench.memory.${AGENT_ID}.kubernetes`;
  // As the bridge queues it inline; a claim check's GetObject reads the
  // same bytes into one buffer (its size is checked before it is read).
  const record: QueuedRecord = {
    body: gzip ? body.toString('base64') : body.toString('utf8'),
    messageAttributes: {
      [QueueAttribute.subject]: { dataType: 'String', stringValue: subject },
      [QueueAttribute.streamSeq]: { dataType: 'Number', stringValue: '1' },
      ...(gzip
        ? {
            [QueueAttribute.contentEncoding]: {
              dataType: 'String',
              stringValue: 'gzip',
            },
            [QueueAttribute.bodyEncoding]: {
              dataType: 'String',
              stringValue: 'base64',
            },
          }
        : {}),
    },
  };
  const noS3 = {} as S3Client;
  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const cpu = process.cpuUsage();
  let outcome: string;
  try {
    const queued = await decodeQueuedInventory(record, noS3);
    const inventory = parseInventoryJson(queued.json);
    outcome = `parsed: ${queued.json.byteLength} bytes, ${inventory.pods?.length ?? 0} pods`;
  } catch (error) {
    if (!(error instanceof RejectedInventoryError)) throw error;
    outcome = `refused: ${error.reason}`;
  }
  const used = process.cpuUsage(cpu);
  const peakKiB = process.resourceUsage().maxRSS;
  const figures: MemoryFigures = {
    case: name,
    bodyBytes: body.byteLength,
    gzip,
    outcome,
    rssBeforeKiB: Math.round(rssBefore / 1024),
    peakRssKiB: peakKiB,
    addedKiB: peakKiB - Math.round(rssBefore / 1024),
    cpuMs: Math.round((used.user + used.system) / 1000),
  };
  console.log(JSON.stringify(figures));
}

/** The cases' bodies, built in this (the parent) process. */
export async function memoryCases(
  options: { quick?: boolean } = {},
): Promise<{ name: string; body: Buffer; gzip: boolean }[]> {
  const cases = [
    {
      name: 'max-message',
      body: inventoryOfSize(AGENT_ID, MAX_MESSAGE_BYTES),
      gzip: false,
    },
  ];
  if (!options.quick) {
    cases.push({
      name: 'max-inflated',
      body: gzipSync(inventoryOfSize(AGENT_ID, MAX_INFLATED_BYTES - 65_536)),
      gzip: true,
    });
  }
  cases.push(
    { name: 'gzip-bomb', body: await gzipBomb(1024 ** 3), gzip: true },
    { name: 'gzip-too-large', body: await gzipTooLargeJson(), gzip: true },
  );
  return cases;
}

const childAt = process.argv.indexOf('--child');
if (childAt >= 0) {
  const [name, file, encoding] = process.argv.slice(childAt + 1);
  await child(name!, file!, encoding!);
}
