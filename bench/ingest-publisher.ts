/**
 * The steady ingest benchmark's agents, in a process of their own (as real
 * agents are on their own machines): bench/ingest-steady.ts forks it, so
 * its CPU is neither counted as the backend's nor taken from the process
 * that measures it.
 *
 * Each publish is a fresh snapshot (newer stamp, its cluster's agent id and
 * name) of one of a few pre-generated variants, gzip as agents send it. The
 * fields that change per publish all sit in the JSON's first few hundred
 * bytes (envelope and cluster name): each variant's text is split after
 * them, the rest is compressed once here, and a publish compresses only the
 * re-stamped head and sends the two gzip members one after the other. A
 * gzip stream may hold several members (RFC 1952, 2.2) and the sync's
 * gunzip reads them as one body (tested in test/unit/ingest and
 * test/integration/ingest), so the backend decodes exactly what one
 * whole-body gzip would give it, at no compression cost to anyone.
 *
 * Messages: in `{ type: 'first' }` (every cluster's first sync, one after
 * another) and `{ type: 'steady' }` (the resync loop); out `ready`,
 * `published` per acked publish, `first-done` and `steady-done`.
 */
import { gzipSync } from 'node:zlib';
import { jetstream } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import {
  generateInventory,
  mutateInventory,
  type SizeName,
} from '../test/fixtures/generate.ts';
import { agentOf, BASE_AGENT } from './ingest-agents.ts';

export interface PublisherConfig {
  natsUrl: string;
  clusters: number;
  size: SizeName;
  variants: number;
  changeFraction: number;
  intervalS: number;
  durationS: number;
}

export type PublisherMessage =
  | {
      type: 'ready';
      jsonBytes: number;
      wireBytes: number;
      headBytes: number;
      /** A steady-state body as published, base64 (decode calibration). */
      sample: string;
      /**
       * The bodies of one more cluster (agentOf(clusters)), base64: its
       * first sync, then resyncs of the changed variants, stamped a second
       * apart in the past (one sync worker timed alone).
       */
      alone: string[];
    }
  | { type: 'published'; seq: number; at: number }
  | { type: 'first-done' }
  | {
      type: 'steady-done';
      sent: number;
      retries: number;
      failures: number;
      startedAt: number;
      publishedUntil: number;
      /** This process's CPU over the steady loop, and of it the bodies'. */
      cpuMs: number;
      bodyCpuMs: number;
    };

/** Resyncs of the cluster a sync worker applies alone (see `alone`). */
const ALONE_RESYNCS = 30;

const send = (message: PublisherMessage) => process.send?.(message);
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

/** A variant: the head that changes per publish, the rest compressed once. */
interface Variant {
  head: string;
  tail: Buffer;
}

async function main(config: PublisherConfig) {
  const first = generateInventory({
    size: config.size,
    seed: 'bench',
    agentId: BASE_AGENT,
    clusterName: 'bench-base',
    timestamp: new Date(Date.now() - 3_600_000).toISOString(),
  });
  // Variants of the same cluster, each changed from the first in
  // changeFraction of its rows: a resync sends one of them, so about that
  // share of rows differs from the stored ones.
  const texts = [
    first,
    ...Array.from({ length: config.variants - 1 }, (_, v) =>
      mutateInventory(first, {
        seed: v + 1,
        changeFraction: config.changeFraction,
        removeFraction: 0,
        timestamp: first.timestamp,
      }),
    ),
  ].map((inv) => JSON.stringify(inv));
  const stamp = `"timestamp":"${first.timestamp}"`;
  const name = '"name":"bench-base"';
  const variants = texts.map((text): Variant => {
    // The head ends after the last per-publish field; none is past it.
    let end = 0;
    for (const token of [BASE_AGENT, stamp, name]) {
      const at = text.indexOf(token);
      if (at < 0) throw new Error(`${token} is not in the generated body`);
      end = Math.max(end, at + token.length);
    }
    const head = text.slice(0, end);
    const tail = text.slice(end);
    for (const token of [BASE_AGENT, stamp, name]) {
      if (
        tail.includes(token) ||
        head.indexOf(token) !== head.lastIndexOf(token)
      ) {
        throw new Error(`${token} is not once in the body's head`);
      }
    }
    // The default level, as the agent compresses (shared/agent/publish.ts).
    return { head, tail: gzipSync(tail) };
  });
  const body = (variant: number, cluster: number, at: Date) => {
    const v = variants[variant] as Variant;
    const head = v.head
      .replace(BASE_AGENT, agentOf(cluster))
      .replace(stamp, `"timestamp":"${at.toISOString()}"`)
      .replace(name, `"name":"bench-${cluster}"`);
    return Buffer.concat([gzipSync(head), v.tail]);
  };

  const nc = await connect({ servers: config.natsUrl, name: 'bench-agents' });
  const js = jetstream(nc);
  const h = headers();
  h.set('Content-Encoding', 'gzip');
  let bodyCpuMs = 0;
  let retries = 0;
  let failures = 0;
  const publish = async (variant: number, cluster: number) => {
    const cpu = performance.now();
    const payload = body(variant, cluster, new Date());
    bodyCpuMs += performance.now() - cpu;
    const at = Date.now();
    const subject = `proxima.bench.production.${agentOf(cluster)}.kubernetes`;
    // As an agent does: a publish whose ack does not come in time is sent
    // again under the same message id (the stream keeps one copy).
    const msgID = `${cluster}-${at}`;
    for (let attempt = 1; ; attempt++) {
      try {
        const ack = await js.publish(subject, payload, {
          headers: h,
          msgID,
          timeout: 30_000,
        });
        send({ type: 'published', seq: ack.seq, at });
        return;
      } catch (error) {
        retries++;
        if (attempt === 3) {
          failures++;
          console.error(`publish for cluster ${cluster} failed: ${error}`);
          return;
        }
      }
    }
  };

  const firstBody = body(1 % variants.length, 0, new Date());
  const aloneFrom = Date.now() - (ALONE_RESYNCS + 2) * 1000;
  const alone = Array.from({ length: ALONE_RESYNCS + 1 }, (_, i) =>
    body(
      i === 0 ? 0 : 1 + ((i - 1) % (variants.length - 1)),
      config.clusters,
      new Date(aloneFrom + i * 1000),
    ).toString('base64'),
  );
  send({
    type: 'ready',
    jsonBytes: Buffer.byteLength(texts[0] as string),
    wireBytes: firstBody.byteLength,
    headBytes: (variants[0] as Variant).head.length,
    sample: firstBody.toString('base64'),
    alone,
  });

  const firstSyncs = async () => {
    for (let i = 0; i < config.clusters; i++) await publish(0, i);
    send({ type: 'first-done' });
  };

  const steady = async () => {
    const cpuBefore = process.cpuUsage();
    bodyCpuMs = 0;
    retries = 0;
    failures = 0;
    const startedAt = Date.now();
    const gap = (config.intervalS * 1000) / config.clusters;
    let sent = 0;
    const inFlight: Promise<void>[] = [];
    while (Date.now() - startedAt < config.durationS * 1000) {
      const due = startedAt + sent * gap;
      if (due > Date.now()) await sleep(due - Date.now());
      const cluster = sent % config.clusters;
      const round = Math.floor(sent / config.clusters);
      inFlight.push(publish(1 + (round % (variants.length - 1)), cluster));
      sent++;
    }
    await Promise.all(inFlight);
    const cpu = process.cpuUsage(cpuBefore);
    send({
      type: 'steady-done',
      sent,
      retries,
      failures,
      startedAt,
      publishedUntil: Date.now(),
      cpuMs: (cpu.user + cpu.system) / 1000,
      bodyCpuMs,
    });
  };

  process.on('message', (m: { type?: string }) => {
    if (m.type === 'first') void firstSyncs();
    else if (m.type === 'steady') void steady();
    else if (m.type === 'stop') void nc.close().then(() => process.exit(0));
  });
}

process.on('disconnect', () => process.exit(0));
await main(JSON.parse(process.argv[2] ?? '{}') as PublisherConfig);
