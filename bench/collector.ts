/**
 * `npm run bench -- collector`: a 5,000-pod cluster's objects, as the agent
 * holds them after listing, to the gzipped wire message (shared/collector
 * buildInventory, then JSON and gzip as the agent publishes it). The
 * objects are copies of the captured fixtures' shapes (test/fixtures/real/),
 * renamed per copy: 250 Deployments of 20 pods each with their
 * ReplicaSets, Services and EndpointSlices, 25 StatefulSets, 10 Rollouts,
 * 1,500 events (1,000 kept), 50 nodes and the smaller kinds.
 *
 * Prints the CPU time of a build (and its wall time: on a loaded machine
 * the wall counts other processes' work), the process's peak RSS through
 * one build and after all runs, and checks that two runs on the same input
 * give the same bytes. Target: within 1 s and 300 MB. Exits 1 when a
 * target is missed or the bytes differ.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { encodeInventory } from '../shared/agent/publish.ts';
import { AGENT_VERSION } from '../shared/agent/version.ts';
import {
  buildInventory,
  type ClusterObjects,
} from '../shared/collector/collect.ts';
import type { K8sObject } from '../shared/collector/k8s.ts';
import { allRealObjects } from '../test/helpers/real-fixtures.ts';

const PODS = 5000;
const DEPLOYMENTS = 250;
const NAMESPACES = 25;
const TARGET_MS = 1000;
const TARGET_MB = 300;

/** A deterministic UUID per object. */
const uid = (n: number) =>
  `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

let serial = 0;
function copy(shape: K8sObject, name: string, namespace?: string): K8sObject {
  const o = structuredClone(shape);
  o.metadata = { ...o.metadata, name, uid: uid(++serial) };
  if (namespace === undefined) delete o.metadata.namespace;
  else o.metadata.namespace = namespace;
  return o;
}

function cycle<T>(list: T[] | undefined, i: number): T {
  if (!list || list.length === 0) throw new Error('a fixture shape is missing');
  return list[i % list.length] as T;
}

/** The cluster: every list built from the fixtures' objects of that kind. */
function syntheticCluster(): ClusterObjects {
  const shapes = allRealObjects();
  const ns = (i: number) => `team-${i % NAMESPACES}`;
  const out: ClusterObjects = {
    version: { gitVersion: 'v1.30.2-eks-1234567' },
    namespaces: Array.from({ length: NAMESPACES }, (_, i) =>
      copy(cycle(shapes.namespaces, i), `team-${i}`),
    ),
    nodes: Array.from({ length: 50 }, (_, i) =>
      copy(cycle(shapes.nodes, i), `node-${i}`),
    ),
    deployments: [],
    replicasets: [],
    pods: [],
    services: [],
    endpointSlices: [],
  };
  for (let d = 0; d < DEPLOYMENTS; d += 1) {
    const namespace = ns(d);
    const name = `app-${d}`;
    const deployment = copy(cycle(shapes.deployments, d), name, namespace);
    const rs = copy(
      cycle(shapes.replicasets, d),
      `${name}-7d9f8c5b4`,
      namespace,
    );
    rs.metadata.ownerReferences = [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name,
        uid: deployment.metadata.uid,
        controller: true,
      },
    ];
    out.deployments?.push(deployment);
    out.replicasets?.push(rs);
    for (let p = 0; p < PODS / DEPLOYMENTS; p += 1) {
      const i = d * (PODS / DEPLOYMENTS) + p;
      const pod = copy(
        cycle(shapes.pods, i),
        `${rs.metadata.name}-${p}`,
        namespace,
      );
      pod.metadata.ownerReferences = [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: rs.metadata.name,
          uid: rs.metadata.uid,
          controller: true,
        },
      ];
      pod.spec = { ...pod.spec, nodeName: `node-${i % 50}` };
      out.pods?.push(pod);
    }
    const service = copy(cycle(shapes.services, d), name, namespace);
    out.services?.push(service);
    const slice = copy(
      cycle(shapes.endpointSlices, d),
      `${name}-abcde`,
      namespace,
    );
    slice.metadata.labels = { 'kubernetes.io/service-name': name };
    out.endpointSlices?.push(slice);
  }
  const many = (
    field: Exclude<keyof ClusterObjects, 'version'>,
    n: number,
    prefix: string,
  ) => {
    out[field] = Array.from({ length: n }, (_, i) =>
      copy(cycle(shapes[field], i), `${prefix}-${i}`, ns(i)),
    );
  };
  many('statefulsets', 25, 'db');
  many('rollouts', 10, 'canary');
  many('events', 1500, 'event');
  many('pvcs', 100, 'data');
  many('jobs', 50, 'job');
  many('cronjobs', 10, 'cron');
  many('hpas', 50, 'hpa');
  many('networkPolicies', 25, 'policy');
  // Events at distinct times, so the cap keeps a well-defined newest 1,000.
  out.events?.forEach((e, i) => {
    e.lastTimestamp = new Date(Date.UTC(2026, 9, 1, 0, 0, i)).toISOString();
  });
  return out;
}

/** One build; only figures are kept, so runs do not hold each other's messages. */
function run(objects: ClusterObjects) {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const message = buildInventory(objects, {
    agentId: '6a1f0c3e-2b7d-4e59-8c1a-3d5e7f9b0a24',
    agentVersion: AGENT_VERSION,
    timestamp: '2026-10-01T12:00:00Z',
    clusterName: 'bench-5000',
  });
  const encoded = encodeInventory(message);
  const used = process.cpuUsage(cpu);
  return {
    ms: performance.now() - started,
    cpuMs: (used.user + used.system) / 1000,
    sha: createHash('sha256').update(encoded.body).digest('hex'),
    jsonBytes: encoded.jsonBytes,
    gzipBytes: encoded.body.byteLength,
    workloads: message.workloads?.length,
    events: message.events?.length,
  };
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

const rssLoaded = process.memoryUsage().rss;
const objects = syntheticCluster();
const rssObjects = process.memoryUsage().rss;
const first = run(objects);
// The agent builds one message per interval: the peak of one build is its
// figure; the later runs (timing, the identity check) only add GC slack.
const peakOneMb = process.resourceUsage().maxRSS / 1024;
const second = run(objects);
const runs = [first, second];
for (let i = 0; i < 3; i += 1) runs.push(run(objects));
const peakMb = process.resourceUsage().maxRSS / 1024;
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ??
  Number.NaN;
const wallMedian = median(runs.map((r) => r.ms));
const cpuMedian = median(runs.map((r) => r.cpuMs));
const identical = first.sha === second.sha;

console.log('collector: 5,000-pod cluster → gzipped message');
console.log(
  `  input     ${objects.pods?.length} pods, ${first.workloads} workloads, ${objects.events?.length} events (${first.events} kept), ${objects.nodes?.length} nodes`,
);
console.log(
  `  message   ${mb(first.jsonBytes)} MB JSON, ${mb(first.gzipBytes)} MB gzipped`,
);
// CPU time is this process's own: on a loaded machine, wall time counts
// other processes' work too.
console.log(
  `  time      first ${first.cpuMs.toFixed(0)} ms CPU (${first.ms.toFixed(0)} ms wall), median of ${runs.length} ${cpuMedian.toFixed(0)} ms CPU (${wallMedian.toFixed(0)} ms wall); target ≤ ${TARGET_MS} ms`,
);
console.log(
  `  memory    peak RSS ${peakOneMb.toFixed(0)} MB through one build (target ≤ ${TARGET_MB} MB), ${peakMb.toFixed(0)} MB after ${runs.length}; ${mb(rssLoaded)} MB with the code loaded, ${mb(rssObjects)} MB holding the listed objects`,
);
console.log(
  `  output    ${identical ? 'byte-identical' : 'DIFFERENT'} across two runs (sha256 ${first.sha.slice(0, 16)}…)`,
);
if (!identical || cpuMedian > TARGET_MS || peakOneMb > TARGET_MB) {
  process.exitCode = 1;
}
