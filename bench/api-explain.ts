/**
 * EXPLAIN (ANALYZE, BUFFERS) of every inventory read at a realistic volume:
 * 200 clusters of 2,000 pods (and 20 nodes, 20 namespaces, 300 workloads,
 * 300 services, 1,000 events, ... each), generated set-based in a scratch
 * database. The reads run through the real domain functions on a
 * connection that explains each statement before running it, so what is
 * explained is exactly what the API sends.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/api-explain.ts
 *
 * Prints a markdown report: a summary line per read (indexes used, any
 * sequential scan, execution time) and the full plans.
 */
import type { Queryable, Row } from '../shared/db/pool.ts';
import { query } from '../shared/db/pool.ts';
import {
  listEndpointSlices,
  listEvents,
  listHpas,
  listIngresses,
  listJobs,
  listNetworkPolicies,
  listPods,
  listPvcs,
  listResourceQuotas,
  listServices,
  listWorkloads,
} from '../shared/inventory/lists.ts';
import {
  listNamespaces,
  listNamespaceUsage,
} from '../shared/inventory/namespaces.ts';
import {
  getNode,
  listNodeCapacity,
  listNodePods,
  listNodes,
} from '../shared/inventory/nodes.ts';
import {
  getWorkload,
  listWorkloadPods,
} from '../shared/inventory/workloads.ts';
import { benchDatabase, median, planSummary } from './common.ts';

const CLUSTERS = 200;

/** Set-based generation; ids are md5-derived so children can point at parents. */
const SEED = [
  `insert into clients (id, slug, name)
   values (md5('client')::uuid, 'bench', 'Bench')`,
  `insert into environments (id, client_id, slug, name)
   values (md5('env')::uuid, md5('client')::uuid, 'production', 'Production')`,
  `insert into assets (id, client_id, environment_id, asset_type, name, status)
   select md5('asset' || c)::uuid, md5('client')::uuid, md5('env')::uuid,
          'cluster', 'cluster-' || c, 'active'
   from generate_series(1, $1::int) c`,
  `insert into clusters (id, asset_id, client_id, environment_id, agent_id, name, slug)
   select md5('cluster' || c)::uuid, md5('asset' || c)::uuid,
          md5('client')::uuid, md5('env')::uuid, gen_random_uuid(),
          'cluster-' || c, 'cluster-' || c
   from generate_series(1, $1::int) c`,
  `insert into k8s_nodes (id, cluster_id, name, uid, roles, labels, status,
     conditions, unschedulable, kubelet_version, capacity_cpu_millicores,
     capacity_memory_bytes, capacity_pods, allocatable_cpu_millicores,
     allocatable_memory_bytes, allocatable_pods, usage_cpu_millicores,
     usage_memory_bytes, pod_count, addresses, instance_type, zone,
     created_at, content_hash)
   select md5('node' || c || '-' || n)::uuid, md5('cluster' || c)::uuid,
          'node-' || lpad(n::text, 3, '0'), md5('node-uid' || c || n),
          case when n <= 3 then '{control-plane}'::text[] else '{worker}' end,
          jsonb_build_object('kubernetes.io/hostname', 'node-' || n),
          case when n % 10 = 0 then 'NotReady' else 'Ready' end,
          jsonb_build_array(jsonb_build_object('type', 'Ready', 'status', 'True')),
          n % 15 = 0, 'v1.29.3', 8000, 34359738368, 110, 7800, 33285996544, 110,
          case when n % 5 = 0 then null else 1000 + n * 10 end,
          case when n % 5 = 0 then null else 8589934592 end,
          100,
          jsonb_build_array(jsonb_build_object('type', 'InternalIP', 'address', '10.0.0.' || n)),
          'm5.2xlarge', 'eu-west-1a', now() - n * interval '1 day', 'h'
   from generate_series(1, $1::int) c, generate_series(1, 20) n`,
  `insert into k8s_namespaces (id, cluster_id, name, uid, status, labels,
     workload_count, pod_count, service_count, created_at, content_hash)
   select md5('ns' || c || '-' || k)::uuid, md5('cluster' || c)::uuid,
          'ns-' || lpad(k::text, 2, '0'), md5('ns-uid' || c || k), 'Active',
          '{}', 15, 100, 15, now() - k * interval '1 day', 'h'
   from generate_series(1, $1::int) c, generate_series(1, 20) k`,
  `insert into k8s_workloads (id, cluster_id, namespace_id, kind, name, uid,
     namespace, replicas_desired, replicas_ready, replicas_available,
     strategy, containers, labels, helm_release, created_at, content_hash)
   select md5('wl' || c || '-' || w)::uuid, md5('cluster' || c)::uuid,
          md5('ns' || c || '-' || (1 + w % 20))::uuid,
          (array['Deployment', 'StatefulSet', 'DaemonSet', 'Rollout'])[1 + w % 4],
          'app-' || w, md5('wl-uid' || c || w),
          'ns-' || lpad((1 + w % 20)::text, 2, '0'),
          w % 7, w % 7, w % 7, 'RollingUpdate',
          jsonb_build_array(jsonb_build_object('name', 'app', 'image',
            'registry.example.com/app-' || w || ':1.' || (w % 10))),
          jsonb_build_object('app', 'app-' || w),
          case when w % 3 = 0 then null else 'release-' || (w % 40) end,
          now() - (w % 90) * interval '1 day', 'h'
   from generate_series(1, $1::int) c, generate_series(1, 300) w`,
  `insert into k8s_pods (id, cluster_id, namespace_id, node_id, workload_id,
     namespace, name, uid, labels, phase, node_name, pod_ip, host_ip,
     qos_class, owner_kind, owner_name, workload_kind, workload_name,
     containers, restart_count, ready_containers, total_containers,
     cpu_requests_millicores, memory_requests_bytes, cpu_limits_millicores,
     memory_limits_bytes, started_at, created_at, content_hash)
   select md5('pod' || c || '-' || p)::uuid, md5('cluster' || c)::uuid,
          md5('ns' || c || '-' || (1 + w % 20))::uuid,
          md5('node' || c || '-' || (1 + p % 20))::uuid,
          md5('wl' || c || '-' || w)::uuid,
          'ns-' || lpad((1 + w % 20)::text, 2, '0'),
          'app-' || w || '-' || substr(md5(p::text), 1, 10),
          md5('pod-uid' || c || p),
          jsonb_build_object('app', 'app-' || w),
          case when p % 50 = 0 then 'Failed' when p % 40 = 0 then 'Succeeded'
               when p % 25 = 0 then 'Pending' else 'Running' end,
          'node-' || lpad((1 + p % 20)::text, 3, '0'),
          '10.244.' || (p / 256) || '.' || (p % 256), '10.0.0.' || (1 + p % 20),
          'Burstable', 'ReplicaSet', 'app-' || w || '-5d4b7',
          'Deployment', 'app-' || w,
          jsonb_build_array(jsonb_build_object('name', 'app', 'image',
            'registry.example.com/app-' || w || ':1.' || (w % 10), 'ready', true,
            'restart_count', p % 13, 'state', 'running',
            'requests', jsonb_build_object('cpu_millicores', (p % 8) * 125,
              'memory_bytes', (p % 8) * 134217728))),
          p % 13, 1, 1,
          case when p % 9 = 0 then null else (p % 8) * 125 end,
          case when p % 9 = 0 then null else (p % 8) * 134217728 end,
          case when p % 9 = 0 then null else (p % 8) * 250 end,
          case when p % 9 = 0 then null else (p % 8) * 268435456 end,
          case when p % 25 = 0 then null else now() - (p % 500) * interval '1 hour' end,
          now() - (p % 600) * interval '1 hour', 'h'
   from generate_series(1, $1::int) c, generate_series(1, 2000) p,
        lateral (select 1 + p % 300 as w) wl`,
  `insert into k8s_services (id, cluster_id, namespace_id, namespace, name,
     uid, type, cluster_ip, cluster_ip_v4, cluster_ips, ports, selector,
     endpoint_count, created_at, content_hash)
   select md5('svc' || c || '-' || s)::uuid, md5('cluster' || c)::uuid,
          md5('ns' || c || '-' || (1 + s % 20))::uuid,
          'ns-' || lpad((1 + s % 20)::text, 2, '0'), 'svc-' || s,
          md5('svc-uid' || c || s),
          (array['ClusterIP', 'NodePort', 'LoadBalancer'])[1 + s % 3],
          ip, case when ip like '10.96.%' then 167837696 + s end,
          array[ip],
          jsonb_build_array(jsonb_build_object('port', 80, 'protocol', 'TCP')),
          jsonb_build_object('app', 'app-' || s), s % 5,
          now() - (s % 90) * interval '1 day', 'h'
   from generate_series(1, $1::int) c, generate_series(1, 300) s,
        lateral (select case when s % 10 = 0 then 'None'
                             when s % 17 = 0 then 'fd00::' || s
                             else '10.96.' || (s / 256) || '.' || (s % 256)
                        end as ip) a`,
  `insert into k8s_ingresses (cluster_id, namespace_id, namespace, name,
     ingress_class, rules, created_at, content_hash)
   select md5('cluster' || c)::uuid, md5('ns' || c || '-' || (1 + i % 20))::uuid,
          'ns-' || lpad((1 + i % 20)::text, 2, '0'), 'ing-' || i,
          case when i % 4 = 0 then null else 'nginx' end,
          jsonb_build_array(jsonb_build_object('host', 'app-' || i || '.example.com')),
          now() - (i % 90) * interval '1 day', 'h'
   from generate_series(1, $1::int) c, generate_series(1, 50) i`,
  `insert into k8s_pvcs (cluster_id, namespace_id, namespace, name, phase,
     storage_class, capacity_bytes, access_modes, created_at, content_hash)
   select md5('cluster' || c)::uuid, md5('ns' || c || '-' || (1 + v % 20))::uuid,
          'ns-' || lpad((1 + v % 20)::text, 2, '0'), 'data-' || v,
          case when v % 10 = 0 then 'Pending' else 'Bound' end, 'gp3',
          (v % 10) * 10737418240, '{ReadWriteOnce}',
          now() - (v % 90) * interval '1 day', 'h'
   from generate_series(1, $1::int) c, generate_series(1, 100) v`,
  `insert into k8s_events (cluster_id, namespace_id, namespace, name, type,
     reason, message, involved_kind, involved_name, count, first_seen,
     last_seen, created_at, content_hash)
   select md5('cluster' || c)::uuid, md5('ns' || c || '-' || (1 + e % 20))::uuid,
          'ns-' || lpad((1 + e % 20)::text, 2, '0'), 'app.' || e,
          case when e % 4 = 0 then 'Warning' else 'Normal' end,
          case when e % 4 = 0 then 'BackOff' else 'Pulled' end,
          'Back-off restarting failed container app in pod app-' || e,
          'Pod', 'app-' || e, 1 + e % 5,
          now() - e * interval '3 minutes', now() - e * interval '2.88 minutes',
          now() - e * interval '3 minutes', 'h'
   from generate_series(1, $1::int) c, generate_series(1, 1000) e`,
  `insert into k8s_jobs (cluster_id, namespace_id, kind, namespace, name,
     schedule, succeeded, status, created_at, content_hash)
   select md5('cluster' || c)::uuid, md5('ns' || c || '-' || (1 + j % 20))::uuid,
          case when j % 5 = 0 then 'CronJob' else 'Job' end,
          'ns-' || lpad((1 + j % 20)::text, 2, '0'), 'job-' || j,
          case when j % 5 = 0 then '*/5 * * * *' end, j % 3,
          (array['Complete', 'Failed', 'Running'])[1 + j % 3],
          now() - (j % 90) * interval '1 hour', 'h'
   from generate_series(1, $1::int) c, generate_series(1, 100) j`,
  `insert into k8s_hpas (cluster_id, namespace_id, namespace, name,
     target_kind, target_name, min_replicas, max_replicas, current_replicas,
     created_at, content_hash)
   select md5('cluster' || c)::uuid, md5('ns' || c || '-' || (1 + h % 20))::uuid,
          'ns-' || lpad((1 + h % 20)::text, 2, '0'), 'hpa-' || h,
          'Deployment', 'app-' || h, 1 + h % 3, 5 + h % 10, 1 + h % 7,
          now() - (h % 90) * interval '1 day', 'h'
   from generate_series(1, $1::int) c, generate_series(1, 50) h`,
  `insert into k8s_network_policies (cluster_id, namespace_id, namespace, name,
     policy_types, created_at, content_hash)
   select md5('cluster' || c)::uuid, md5('ns' || c || '-' || (1 + x % 20))::uuid,
          'ns-' || lpad((1 + x % 20)::text, 2, '0'), 'allow-' || x, '{Ingress}',
          now() - (x % 90) * interval '1 day', 'h'
   from generate_series(1, $1::int) c, generate_series(1, 50) x`,
  `insert into k8s_resource_quotas (cluster_id, namespace_id, namespace, name,
     hard, created_at, content_hash)
   select md5('cluster' || c)::uuid, md5('ns' || c || '-' || q)::uuid,
          'ns-' || lpad(q::text, 2, '0'), 'quota',
          '{"pods": "100"}', now() - q * interval '1 day', 'h'
   from generate_series(1, $1::int) c, generate_series(1, 20) q`,
  `insert into k8s_endpoint_slices (cluster_id, namespace_id, namespace, name,
     service_name, address_type, created_at, content_hash)
   select md5('cluster' || c)::uuid, md5('ns' || c || '-' || (1 + s % 20))::uuid,
          'ns-' || lpad((1 + s % 20)::text, 2, '0'), 'svc-' || s || '-abcde',
          'svc-' || s, case when s % 17 = 0 then 'IPv6' else 'IPv4' end,
          now() - (s % 90) * interval '1 day', 'h'
   from generate_series(1, $1::int) c, generate_series(1, 300) s`,
  // As autovacuum would have left it: statistics current, hint bits set.
  'vacuum analyze',
];

interface Explained {
  label: string;
  text: string;
  plan: string[];
}

/** Explains each statement (with its parameters), then runs it. */
function explaining(
  db: Queryable,
  into: Explained[],
  label: () => string | undefined,
) {
  return {
    async query<R extends Row = Row>(
      text: string,
      values?: readonly unknown[],
    ) {
      const current = label();
      if (current === undefined)
        return db.query<R>(text, values ? [...values] : []);
      const plan = await db.query<{ 'QUERY PLAN': string }>(
        `explain (analyze, buffers) ${text}`,
        values ? [...values] : [],
      );
      into.push({
        label: current,
        text,
        plan: plan.rows.map((row) => row['QUERY PLAN']),
      });
      return db.query<R>(text, values ? [...values] : []);
    },
  } satisfies Queryable;
}

async function main() {
  const bench = await benchDatabase('k8s_inventory_explain');
  try {
    const started = Date.now();
    for (const statement of SEED) {
      await query(
        bench.db,
        statement,
        statement.includes('$1') ? [CLUSTERS] : [],
      );
    }
    // What a sync keeps beside the rows it writes (migration 0005).
    await query(bench.db, 'select k8s_refresh_rollups(id) from clusters');
    const [counts] = await query<{ pods: number; events: number }>(
      bench.db,
      'select (select count(*) from k8s_pods) as pods, (select count(*) from k8s_events) as events',
    );
    process.stderr.write(
      `seeded ${counts?.pods} pods, ${counts?.events} events in ${Date.now() - started} ms\n`,
    );

    const [target] = await query<{
      id: string;
      node: string;
      workload: string;
    }>(
      bench.db,
      `select md5('cluster100')::uuid as id,
              md5('node100-7')::uuid as node,
              md5('wl100-42')::uuid as workload`,
    );
    const cluster = target!.id;
    const plans: Explained[] = [];
    let current: string | undefined;
    const db = explaining(bench.db, plans, () => current);
    const reads: Array<[string, () => Promise<unknown>]> = [
      ['pods: usual order', () => listPods(db, cluster, {})],
      [
        'pods: q=app-12, sort=-restarts',
        () => listPods(db, cluster, { q: 'app-12', sort: '-restarts' }),
      ],
      [
        'pods: q=app-1, sort=cpu, page 3',
        () => listPods(db, cluster, { q: 'app-1', sort: 'cpu', page: '3' }),
      ],
      [
        'pods: namespace=ns-07, q=app, sort=age',
        () =>
          listPods(db, cluster, { namespace: 'ns-07', q: 'app', sort: 'age' }),
      ],
      [
        'pods: phase=Pending, sort=-memory',
        () => listPods(db, cluster, { phase: 'Pending', sort: '-memory' }),
      ],
      ['workloads: usual order', () => listWorkloads(db, cluster, {})],
      [
        'workloads: kind=StatefulSet, q=app-2, sort=-replicas',
        () =>
          listWorkloads(db, cluster, {
            kind: 'StatefulSet',
            q: 'app-2',
            sort: '-replicas',
          }),
      ],
      [
        'services: sort=cluster_ip',
        () => listServices(db, cluster, { sort: 'cluster_ip' }),
      ],
      [
        'services: q=svc-1, sort=-age',
        () => listServices(db, cluster, { q: 'svc-1', sort: '-age' }),
      ],
      [
        'ingresses: q=ing, sort=class',
        () => listIngresses(db, cluster, { q: 'ing', sort: 'class' }),
      ],
      [
        'pvcs: sort=-capacity',
        () => listPvcs(db, cluster, { sort: '-capacity' }),
      ],
      [
        'jobs: kind=CronJob, sort=schedule',
        () => listJobs(db, cluster, { kind: 'CronJob', sort: 'schedule' }),
      ],
      [
        'hpas: q=hpa-1, sort=-max',
        () => listHpas(db, cluster, { q: 'hpa-1', sort: '-max' }),
      ],
      [
        'network-policies: usual order',
        () => listNetworkPolicies(db, cluster, {}),
      ],
      [
        'resource-quotas: sort=age',
        () => listResourceQuotas(db, cluster, { sort: 'age' }),
      ],
      [
        'endpoint-slices: q=svc-2, sort=service',
        () => listEndpointSlices(db, cluster, { q: 'svc-2', sort: 'service' }),
      ],
      ['events: last 24 h', () => listEvents(db, cluster, {})],
      [
        'events: type=Warning, page 2',
        () => listEvents(db, cluster, { type: 'Warning', page: '2' }),
      ],
      ['nodes: list', () => listNodes(db, cluster)],
      ['nodes: get', () => getNode(db, cluster, target!.node)],
      ['nodes: capacity', () => listNodeCapacity(db, cluster)],
      [
        'nodes: pods of a node, sort=-cpu',
        () => listNodePods(db, cluster, target!.node, { sort: '-cpu' }),
      ],
      ['namespaces: list', () => listNamespaces(db, cluster)],
      ['namespaces: usage', () => listNamespaceUsage(db, cluster)],
      ['workloads: get', () => getWorkload(db, cluster, target!.workload)],
      [
        'workloads: pods of a workload',
        () => listWorkloadPods(db, cluster, target!.workload, {}),
      ],
    ];
    const latency = new Map<string, number>();
    for (const [label, read] of reads) {
      // Warm the cache, time five plain runs, then explain one more.
      current = undefined;
      await read();
      const runs: number[] = [];
      for (let i = 0; i < 5; i += 1) {
        const start = performance.now();
        await read();
        runs.push(performance.now() - start);
      }
      latency.set(label, median(runs));
      current = label;
      await read();
    }

    const out: string[] = [];
    out.push(
      `Volume: ${CLUSTERS} clusters; ${counts?.pods} pods, ${counts?.events} events in total.`,
      '',
    );
    out.push(
      '| read | statement | indexes used | seq scans | execution (EXPLAIN ANALYZE) | read, median of 5 (client) |',
      '|---|---|---|---|---|---|',
    );
    plans.forEach((p, i) => {
      const s = planSummary(p.plan);
      out.push(
        `| ${p.label} | ${i + 1} | ${s.indexes.join(', ') || '—'} | ${s.seqScans.join(', ') || 'none'} | ${s.executionMs} | ${(latency.get(p.label) ?? 0).toFixed(1)} ms |`,
      );
    });
    out.push('');
    plans.forEach((p, i) => {
      out.push(
        `### ${i + 1}. ${p.label}`,
        '',
        '```sql',
        p.text.trim().replace(/\n\s+/g, '\n  '),
        '```',
        '',
        '```',
        ...p.plan,
        '```',
        '',
      );
    });
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    if (process.argv.includes('--keep')) {
      // Leave the scratch database for manual EXPLAINs.
      process.stderr.write(`kept ${bench.url}\n`);
      await bench.db.end();
      process.exit(0);
    }
    await bench.close();
  }
}

await main();
