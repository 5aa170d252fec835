/**
 * A cluster whose health digest is computed by hand (the figures are in
 * test/integration/api/summary.test.ts, each with its arithmetic). Times are
 * relative to the insert, so the "past hour" and "more than 5 minutes"
 * windows hold however long the test takes to reach the read (minutes).
 */
import type { Db } from '../../shared/db/pool.ts';
import {
  GiB,
  insertCluster,
  insertEvent,
  insertHost,
  insertNamespace,
  insertNode,
  insertPod,
  insertWorkload,
  MiB,
  secondsAgo,
} from './api-fixtures.ts';

export interface HealthFixture {
  clusterId: string;
  workloads: Record<'web' | 'api' | 'db' | 'node-agent', string>;
}

export async function insertHealthFixture(
  db: Db,
  tenant: {
    clientId: string;
    environmentId: string;
    otherEnvironmentId: string;
  },
  name = 'alpha',
): Promise<HealthFixture> {
  const { clientId, environmentId, otherEnvironmentId } = tenant;
  const clusterId = await insertCluster(db, {
    clientId,
    environmentId,
    name,
    status: 'degraded',
  });
  const host = (hostname: string, env: string) =>
    insertHost(db, {
      clientId,
      environmentId: env,
      hostname: `${name}-${hostname}`,
    });

  // Nodes. usage 0 is a legacy "no data", never reporting.
  const nodes = [
    // name, status, cpu, mem, pods, usage cpu, usage mem, host environment
    ['n1', 'Ready', 4000, 16 * GiB, 110, 1500, 8 * GiB, environmentId],
    // Linked to a host since moved to another environment: no metrics.
    ['n2', 'Ready', 4000, 16 * GiB, 110, 500, 2 * GiB, otherEnvironmentId],
    ['n3', 'NotReady', 2000, 8 * GiB, 110, null, null, null],
    // Linked, agent down: linkage still counts.
    ['n4', 'Unknown', 2000, 8 * GiB, 110, 0, 0, environmentId],
    ['n5', 'Ready', 8000, 32 * GiB, 250, 2000, null, environmentId],
  ] as const;
  for (const [
    node,
    status,
    cpu,
    mem,
    pods,
    usageCpu,
    usageMem,
    hostEnv,
  ] of nodes) {
    await insertNode(db, clusterId, {
      name: node,
      status,
      allocatable_cpu_millicores: cpu,
      allocatable_memory_bytes: mem,
      allocatable_pods: pods,
      capacity_cpu_millicores: cpu,
      capacity_memory_bytes: mem,
      capacity_pods: pods,
      usage_cpu_millicores: usageCpu,
      usage_memory_bytes: usageMem,
      host_id: hostEnv === null ? null : await host(node, hostEnv),
    });
  }

  const shop = await insertNamespace(db, clusterId, 'shop');
  const kubeSystem = await insertNamespace(db, clusterId, 'kube-system');

  const workload = (
    namespace: 'shop' | 'kube-system',
    kind: string,
    workloadName: string,
    desired: number | null,
    ready: number | null,
  ) =>
    insertWorkload(db, clusterId, {
      namespace_id: namespace === 'shop' ? shop : kubeSystem,
      namespace,
      kind,
      name: workloadName,
      replicas_desired: desired,
      replicas_ready: ready,
    });
  const workloads = {
    web: await workload('shop', 'Deployment', 'web', 3, 2),
    api: await workload('shop', 'Deployment', 'api', 2, 0),
    db: await workload('shop', 'StatefulSet', 'db', 1, null),
    'node-agent': await workload(
      'kube-system',
      'DaemonSet',
      'node-agent',
      5,
      4,
    ),
  };
  await workload('shop', 'Deployment', 'worker', 2, 2);
  await workload('shop', 'Deployment', 'scaled-to-zero', 0, 0);
  await workload('shop', 'Deployment', 'no-desired', null, null);

  const pod = (
    namespace: 'shop' | 'kube-system',
    podName: string,
    fields: Record<string, unknown>,
  ) =>
    insertPod(db, clusterId, {
      namespace_id: namespace === 'shop' ? shop : kubeSystem,
      namespace,
      name: podName,
      restart_count: 0,
      ...fields,
    });
  const resources = (
    cpuReq: number | null,
    memReq: number | null,
    cpuLim: number | null,
    memLim: number | null,
  ) => ({
    cpu_requests_millicores: cpuReq,
    memory_requests_bytes: memReq,
    cpu_limits_millicores: cpuLim,
    memory_limits_bytes: memLim,
  });
  const owner = (kind: string, workloadName: string) => ({
    workload_kind: kind,
    workload_name: workloadName,
  });

  await pod('shop', 'web-1', {
    phase: 'Running',
    ...resources(250, 256 * MiB, 500, 512 * MiB),
    ...owner('Deployment', 'web'),
    workload_id: workloads.web,
    containers: [{ name: 'web', state: 'running' }],
  });
  await pod('shop', 'web-2', {
    phase: 'Running',
    restart_count: 3,
    ...resources(250, 256 * MiB, 500, 512 * MiB),
    ...owner('Deployment', 'web'),
    workload_id: workloads.web,
    containers: [{ name: 'web', state: 'running', restart_count: 3 }],
  });
  await pod('shop', 'worker-1', {
    phase: 'Pending',
    pending_since: secondsAgo(600),
    ...resources(100, 128 * MiB, null, null),
    ...owner('Deployment', 'worker'),
    containers: [
      { name: 'worker', state: 'waiting', waiting_reason: 'ImagePullBackOff' },
    ],
  });
  await pod('shop', 'worker-2', {
    phase: 'Pending',
    pending_since: secondsAgo(120),
    ...resources(100, 128 * MiB, null, null),
    ...owner('Deployment', 'worker'),
    containers: [
      { name: 'worker', state: 'waiting', waiting_reason: 'ContainerCreating' },
    ],
  });
  await pod('shop', 'api-1', {
    phase: 'Running',
    restart_count: 12,
    ...resources(500, 1024 * MiB, 1000, 2048 * MiB),
    ...owner('Deployment', 'api'),
    workload_id: workloads.api,
    containers: [
      {
        name: 'api',
        state: 'waiting',
        waiting_reason: 'CrashLoopBackOff',
        restart_count: 8,
      },
      {
        name: 'sidecar',
        state: 'waiting',
        waiting_reason: 'CrashLoopBackOff',
        restart_count: 4,
      },
    ],
  });
  await pod('shop', 'job-1', {
    phase: 'Succeeded',
    ...resources(1000, 1024 * MiB, 1000, 1024 * MiB),
    ...owner('CronJob', 'nightly'),
    containers: [{ name: 'job', state: 'terminated' }],
  });
  await pod('shop', 'job-2', {
    phase: 'Failed',
    restart_count: 1,
    ...resources(2000, 2048 * MiB, 2000, 2048 * MiB),
    ...owner('CronJob', 'nightly'),
    containers: [{ name: 'job', state: 'terminated', restart_count: 1 }],
  });
  await pod('kube-system', 'odd', {
    phase: null,
    ...resources(50, 64 * MiB, 100, 128 * MiB),
  });
  await pod('kube-system', 'pend-old', {
    phase: 'Pending',
    pending_since: secondsAgo(3600),
    ...resources(null, null, null, null),
    containers: [
      {
        name: 'init-config',
        init: true,
        state: 'waiting',
        waiting_reason: null,
      },
      { name: 'app', state: 'waiting', waiting_reason: 'ImagePullBackOff' },
    ],
  });
  await pod('kube-system', 'unk', {
    phase: 'Unknown',
    ...resources(10, 10 * MiB, null, null),
  });

  const event = (
    eventName: string,
    type: string,
    reason: string | null,
    seenSecondsAgo: number,
    count = 1,
  ) =>
    insertEvent(db, clusterId, {
      namespace_id: shop,
      namespace: 'shop',
      name: eventName,
      type,
      reason,
      count,
      last_seen: secondsAgo(seenSecondsAgo),
    });
  await event('e1', 'Warning', 'BackOff', 600);
  await event('e2', 'Warning', 'BackOff', 1200, 50);
  await event('e3', 'Warning', 'FailedScheduling', 1800);
  await event('e4', 'Warning', 'FailedMount', 7200);
  await event('e5', 'Normal', 'Pulled', 300);
  await event('e6', 'Warning', null, 2400);

  return { clusterId, workloads };
}
