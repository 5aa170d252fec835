/**
 * `npm run bench -- agent-memory [pod counts...]` (default 5000 10000 12000
 * 15000 20000 25000): does one `--once` cycle of the agent fit the heap its
 * Deployment gives it? infra/agent/deployment.yaml limits the container to
 * 512Mi with no NODE_OPTIONS, where node:22 sizes its old space at about
 * 256 MiB; the agent must list everything before it cuts pods to
 * PROXIMA_K8S_POD_LIMIT (5000), so what it keeps per listed object decides
 * how large a cluster it survives.
 *
 * The agent is bundled as functions/agent/Dockerfile bundles it (its own
 * esbuild arguments) and run as `node --max-old-space-size=256
 * --max-semi-space-size=1 main.mjs --once` against a fake apiserver
 * (test/helpers/fake-kube.ts) serving every real fixture plus N copies of
 * the real kube-system pods (about 8.5 KB each, managedFields included),
 * 500 ReplicaSets and 1000 Events, publishing to a real nats-server.
 *
 * Per count it prints the exit (0, or the code or signal with the last
 * line of stderr), the peak RSS (GNU time's maximum resident set) and the
 * peak V8 heap (the largest "used before" of `--trace-gc`'s lines: sampled
 * at collections, so a little under the true peak), and what was published.
 * Memory, not time: the wall time is printed only as a hint. AGENT_NODE
 * names another node binary to run the agent with (the image runs node 22).
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { jetstreamManager } from '@nats-io/jetstream';
import type { ClusterObjects } from '../shared/collector/collect.ts';
import type { K8sObject } from '../shared/collector/k8s.ts';
import {
  connectNats,
  STREAM_SUBJECTS,
} from '../shared/ingest/bridge/nats-setup.ts';
import { inventorySubject } from '../shared/wire/subject.ts';
import { bundleAgentImage } from '../test/helpers/agent-pod.ts';
import { serveCluster, startFakeKube } from '../test/helpers/fake-kube.ts';
import { startNatsServer } from '../test/helpers/nats.ts';
import { allRealObjects, realObjects } from '../test/helpers/real-fixtures.ts';

/** The Node that runs the agent: AGENT_NODE (the image's is node:22), else this one. */
const NODE = process.env.AGENT_NODE ?? process.execPath;
const HEAP_FLAGS = ['--max-old-space-size=256', '--max-semi-space-size=1'];
const REPLICASETS = 500;
const EVENTS = 1000;
const counts = process.argv
  .slice(2)
  .filter((a) => /^\d+$/.test(a))
  .map(Number);
const COUNTS =
  counts.length > 0 ? counts : [5000, 10000, 12000, 15000, 20000, 25000];

/** Copies of `shapes`, each renamed (and so a distinct object to the agent). */
function copies(shapes: K8sObject[], n: number, tag: string): K8sObject[] {
  return Array.from({ length: n }, (_, i) => {
    const shape = shapes[i % shapes.length];
    return {
      ...shape,
      metadata: {
        ...shape.metadata,
        name: `${shape.metadata.name}-${tag}${i}`,
        uid: randomUUID(),
      },
    };
  });
}

function cluster(pods: number): ClusterObjects {
  const objects = allRealObjects();
  const replicasets = objects.replicasets ?? [];
  const events = objects.events ?? [];
  return {
    ...objects,
    pods: [
      ...(objects.pods ?? []),
      ...copies(
        realObjects('podlist-kind-v1-36-kube-system-raw-apiserver.json'),
        pods,
        'p',
      ),
    ],
    replicasets: [...replicasets, ...copies(replicasets, REPLICASETS, 'r')],
    events: [...events, ...copies(events, EVENTS, 'e')],
  };
}

interface Outcome {
  exit: string;
  peakRssMiB: number | undefined;
  peakHeapMiB: number | undefined;
  seconds: number;
}

/** One `--once` under GNU time, with `--trace-gc` for the heap's peak. */
function runAgent(
  bundle: string,
  env: Record<string, string>,
): Promise<Outcome> {
  const started = Date.now();
  const child = spawn(
    '/usr/bin/time',
    [
      '-f',
      'maxrss_kib=%M',
      NODE,
      ...HEAP_FLAGS,
      '--trace-gc',
      bundle,
      '--once',
    ],
    {
      cwd: dirname(bundle),
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', ...env },
    },
  );
  let peakHeap: number | undefined;
  let stderr = '';
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      // `Mark-Compact 250.3 (262.1) -> 249.9 (262.1) MB`: used before (V8's
      // MB is MiB).
      const m = /: [\w-]+(?: \([^)]*\))? ([\d.]+) \([\d.]+\) ->/.exec(line);
      if (m) peakHeap = Math.max(peakHeap ?? 0, Number(m[1]));
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve) =>
    child.on('close', (code) => {
      const rss = /maxrss_kib=(\d+)/.exec(stderr);
      const signal = /terminated by signal (\d+)/.exec(stderr);
      const reason = stderr
        .split('\n')
        .filter((l) => l.trim() && !/maxrss_kib=|terminated by signal/.test(l))
        .find((l) => /FATAL|heap|failed|Error/.test(l));
      resolve({
        exit: signal
          ? `signal ${signal[1]}${reason ? ` (${reason.trim().slice(0, 70)})` : ''}`
          : code === 0
            ? '0'
            : `code ${code}${reason ? ` (${reason.trim().slice(0, 70)})` : ''}`,
        peakRssMiB: rss ? Number(rss[1]) / 1024 : undefined,
        peakHeapMiB: peakHeap,
        seconds: (Date.now() - started) / 1000,
      });
    }),
  );
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'agent-memory-'));
  const nats = await startNatsServer();
  try {
    const bundle = await bundleAgentImage(dir);
    const nc = await connectNats({ url: nats.url });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'BENCH', subjects: STREAM_SUBJECTS });
    /** What the agent published: pods sent of pods listed. */
    const published = async (agentId: string) => {
      const stored = await jsm.streams
        .getMessage('BENCH', {
          last_by_subj: inventorySubject('bench', 'memory', agentId),
        })
        .catch(() => null);
      if (stored === null) return 'nothing published';
      const message = JSON.parse(gunzipSync(stored.data).toString());
      return `published ${message.pods.length} of ${message.collection.pods_total} pods`;
    };
    console.log(
      `agent --once, node ${spawnSync(NODE, ['--version'], { encoding: 'utf8' }).stdout.trim()} ${HEAP_FLAGS.join(' ')}; ${REPLICASETS} ReplicaSets, ${EVENTS} Events, pod limit 5000`,
    );
    for (const pods of COUNTS) {
      const kube = await startFakeKube();
      serveCluster(kube, cluster(pods));
      const kubeconfig = join(dir, 'kubeconfig');
      await writeFile(kubeconfig, kube.kubeConfig.exportConfig());
      const agentId = randomUUID();
      const o = await runAgent(bundle, {
        KUBECONFIG: kubeconfig,
        NATS_URL: nats.url,
        PROXIMA_CLIENT: 'bench',
        PROXIMA_ENVIRONMENT: 'memory',
        PROXIMA_AGENT_ID: agentId,
        LOG_LEVEL: 'WARN',
      });
      await kube.stop();
      const mib = (v: number | undefined) =>
        (v === undefined ? '?' : v.toFixed(0)).padStart(5);
      console.log(
        `pods ${String(pods).padStart(6)}  peak RSS ${mib(o.peakRssMiB)} MiB  peak heap ${mib(o.peakHeapMiB)} MiB  ${o.seconds.toFixed(1).padStart(5)} s  exit ${o.exit}; ${await published(agentId)}`,
      );
    }
    await nc.close();
  } finally {
    await nats.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
