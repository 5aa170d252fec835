/**
 * Each kind is one definition: its columns are the keys its row mapping
 * sets, for every row, and the SQL generated from it is pinned here so a
 * change to it shows in review.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  KIND_ORDER,
  KINDS,
  type KindDefinition,
  type KindKey,
} from '../../../shared/sync/kinds.ts';
import {
  storedRowsStatement,
  upsertStatement,
} from '../../../shared/sync/repo.ts';
import { parseInventory, ROW_SCHEMAS } from '../../../shared/wire/inventory.ts';
import { generateInventory, mutateInventory } from '../../fixtures/generate.ts';

const def = (kind: KindKey) => KINDS[kind] as KindDefinition;

/** The fields a wire row cannot do without (its natural key). */
const REQUIRED = new Set(['name', 'namespace', 'kind']);

describe('kind definitions', () => {
  it("maps every generated row to exactly the kind's columns, in order", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.constantFrom('small' as const, 'medium' as const),
        (seed, size) => {
          // Prepare
          const inventory = generateInventory({ seed, size });

          for (const kind of KIND_ORDER) {
            // Act
            const keys = (inventory[kind] ?? []).map((row) =>
              Object.keys(def(kind).toRow(row as never)),
            );

            // Assert
            for (const rowKeys of keys)
              expect(rowKeys).toEqual(def(kind).columns);
          }
        },
      ),
      { numRuns: 5 },
    );
  });

  it('maps a row that left out any optional field to the same columns', () => {
    const inventory = generateInventory({ seed: 7, size: 'small' });
    const envelope = Object.fromEntries(
      Object.entries(inventory).filter(
        ([k]) => !(KIND_ORDER as readonly string[]).includes(k),
      ),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...KIND_ORDER.filter((k) => inventory[k]?.length)),
        fc.nat(),
        fc.func(fc.boolean()),
        (kind, index, keep) => {
          // Prepare: a generated row with a random subset of its optional
          // fields, still a valid wire row.
          const rows = inventory[kind] as Record<string, unknown>[];
          const full = rows[index % rows.length] as Record<string, unknown>;
          const sparse = Object.fromEntries(
            Object.entries(full).filter(([k]) => REQUIRED.has(k) || keep(k)),
          );
          const parsed = parseInventory({ ...envelope, [kind]: [sparse] });

          // Act
          const row = def(kind).toRow((parsed[kind] as never[])[0] as never);

          // Assert
          expect(Object.keys(row)).toEqual(def(kind).columns);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('maps a row to the same table row whatever its unstored members hold, each a field of its row schema', () => {
    // Prepare
    const inventory = parseInventory(
      mutateInventory(generateInventory({ seed: 3, size: 'small' }), {
        changeFraction: 0,
        removeFraction: 0,
      }),
    );
    const withUnstored = KIND_ORDER.filter((k) => def(k).unstored);
    expect(withUnstored).toEqual(['pods']);

    for (const kind of withUnstored) {
      const names = def(kind).unstored ?? [];
      const shape = (ROW_SCHEMAS[kind] as { shape: Record<string, unknown> })
        .shape;
      for (const name of names) expect(shape[name]).toBeDefined();
      for (const row of inventory[kind] ?? []) {
        const other = { ...(row as object) } as Record<string, unknown>;
        for (const name of names) other[name] = { cpu_millicores: 42 };

        // Act, Assert
        expect(def(kind).toRow(other as never)).toEqual(
          def(kind).toRow(row as never),
        );
      }
    }
  });

  it('keys every kind by columns of its own', () => {
    for (const kind of KIND_ORDER) {
      for (const key of def(kind).keyColumns) {
        expect(def(kind).columns).toContain(key);
      }
    }
  });

  it('generates the upsert statements pinned here', () => {
    const statements = Object.fromEntries(
      KIND_ORDER.map((kind) => [kind, upsertStatement(kind)]),
    );
    expect(statements).toMatchInlineSnapshot(`
      {
        "endpoint_slices": "insert into k8s_endpoint_slices as t (cluster_id, namespace_id, namespace, name, uid, labels, created_at, service_name, address_type, endpoints, ports, content_hash)
          select $1, ns.id, r.namespace, r.name, r.uid, r.labels, r.created_at, r.service_name, r.address_type, r.endpoints, r.ports, r.content_hash
          from jsonb_populate_recordset(null::k8s_endpoint_slices, $2::jsonb) r
          left join k8s_namespaces ns on ns.cluster_id = $1 and ns.name = r.namespace
          on conflict (cluster_id, namespace, name) do update set
            namespace_id = excluded.namespace_id,
            uid = excluded.uid,
            labels = excluded.labels,
            created_at = excluded.created_at,
            service_name = excluded.service_name,
            address_type = excluded.address_type,
            endpoints = excluded.endpoints,
            ports = excluded.ports,
            content_hash = excluded.content_hash,
            updated_at = now()
          where t.content_hash is distinct from excluded.content_hash",
        "events": "insert into k8s_events as t (cluster_id, namespace_id, namespace, name, uid, labels, created_at, type, reason, message, involved_kind, involved_name, involved_namespace, involved_uid, count, first_seen, last_seen, source_component, reporting_controller, content_hash)
          select $1, ns.id, r.namespace, r.name, r.uid, r.labels, r.created_at, r.type, r.reason, r.message, r.involved_kind, r.involved_name, r.involved_namespace, r.involved_uid, r.count, r.first_seen, r.last_seen, r.source_component, r.reporting_controller, r.content_hash
          from jsonb_populate_recordset(null::k8s_events, $2::jsonb) r
          left join k8s_namespaces ns on ns.cluster_id = $1 and ns.name = r.namespace
          on conflict (cluster_id, namespace, name) do update set
            namespace_id = excluded.namespace_id,
            uid = excluded.uid,
            labels = excluded.labels,
            created_at = excluded.created_at,
            type = excluded.type,
            reason = excluded.reason,
            message = excluded.message,
            involved_kind = excluded.involved_kind,
            involved_name = excluded.involved_name,
            involved_namespace = excluded.involved_namespace,
            involved_uid = excluded.involved_uid,
            count = excluded.count,
            first_seen = excluded.first_seen,
            last_seen = excluded.last_seen,
            source_component = excluded.source_component,
            reporting_controller = excluded.reporting_controller,
            content_hash = excluded.content_hash,
            updated_at = now()
          where t.content_hash is distinct from excluded.content_hash",
        "hpas": "insert into k8s_hpas as t (cluster_id, namespace_id, namespace, name, uid, labels, created_at, target_kind, target_name, target_api_version, min_replicas, max_replicas, current_replicas, desired_replicas, metrics, conditions, content_hash)
          select $1, ns.id, r.namespace, r.name, r.uid, r.labels, r.created_at, r.target_kind, r.target_name, r.target_api_version, r.min_replicas, r.max_replicas, r.current_replicas, r.desired_replicas, r.metrics, r.conditions, r.content_hash
          from jsonb_populate_recordset(null::k8s_hpas, $2::jsonb) r
          left join k8s_namespaces ns on ns.cluster_id = $1 and ns.name = r.namespace
          on conflict (cluster_id, namespace, name) do update set
            namespace_id = excluded.namespace_id,
            uid = excluded.uid,
            labels = excluded.labels,
            created_at = excluded.created_at,
            target_kind = excluded.target_kind,
            target_name = excluded.target_name,
            target_api_version = excluded.target_api_version,
            min_replicas = excluded.min_replicas,
            max_replicas = excluded.max_replicas,
            current_replicas = excluded.current_replicas,
            desired_replicas = excluded.desired_replicas,
            metrics = excluded.metrics,
            conditions = excluded.conditions,
            content_hash = excluded.content_hash,
            updated_at = now()
          where t.content_hash is distinct from excluded.content_hash",
        "ingresses": "insert into k8s_ingresses as t (cluster_id, namespace_id, namespace, name, uid, labels, created_at, ingress_class, rules, default_backend, tls, load_balancer, annotations, content_hash)
          select $1, ns.id, r.namespace, r.name, r.uid, r.labels, r.created_at, r.ingress_class, r.rules, r.default_backend, r.tls, r.load_balancer, r.annotations, r.content_hash
          from jsonb_populate_recordset(null::k8s_ingresses, $2::jsonb) r
          left join k8s_namespaces ns on ns.cluster_id = $1 and ns.name = r.namespace
          on conflict (cluster_id, namespace, name) do update set
            namespace_id = excluded.namespace_id,
            uid = excluded.uid,
            labels = excluded.labels,
            created_at = excluded.created_at,
            ingress_class = excluded.ingress_class,
            rules = excluded.rules,
            default_backend = excluded.default_backend,
            tls = excluded.tls,
            load_balancer = excluded.load_balancer,
            annotations = excluded.annotations,
            content_hash = excluded.content_hash,
            updated_at = now()
          where t.content_hash is distinct from excluded.content_hash",
        "jobs": "insert into k8s_jobs as t (cluster_id, namespace_id, namespace, name, uid, labels, created_at, kind, schedule, suspend, active, succeeded, failed, completions, parallelism, start_time, completion_time, last_schedule_time, status, owner_cronjob, containers, annotations, content_hash)
          select $1, ns.id, r.namespace, r.name, r.uid, r.labels, r.created_at, r.kind, r.schedule, r.suspend, r.active, r.succeeded, r.failed, r.completions, r.parallelism, r.start_time, r.completion_time, r.last_schedule_time, r.status, r.owner_cronjob, r.containers, r.annotations, r.content_hash
          from jsonb_populate_recordset(null::k8s_jobs, $2::jsonb) r
          left join k8s_namespaces ns on ns.cluster_id = $1 and ns.name = r.namespace
          on conflict (cluster_id, kind, namespace, name) do update set
            namespace_id = excluded.namespace_id,
            uid = excluded.uid,
            labels = excluded.labels,
            created_at = excluded.created_at,
            schedule = excluded.schedule,
            suspend = excluded.suspend,
            active = excluded.active,
            succeeded = excluded.succeeded,
            failed = excluded.failed,
            completions = excluded.completions,
            parallelism = excluded.parallelism,
            start_time = excluded.start_time,
            completion_time = excluded.completion_time,
            last_schedule_time = excluded.last_schedule_time,
            status = excluded.status,
            owner_cronjob = excluded.owner_cronjob,
            containers = excluded.containers,
            annotations = excluded.annotations,
            content_hash = excluded.content_hash,
            updated_at = now()
          where t.content_hash is distinct from excluded.content_hash",
        "namespaces": "insert into k8s_namespaces as t (cluster_id, name, uid, status, labels, created_at, content_hash)
          select $1, r.name, r.uid, r.status, r.labels, r.created_at, r.content_hash
          from jsonb_populate_recordset(null::k8s_namespaces, $2::jsonb) r
          
          on conflict (cluster_id, name) do update set
            uid = excluded.uid,
            status = excluded.status,
            labels = excluded.labels,
            created_at = excluded.created_at,
            content_hash = excluded.content_hash,
            updated_at = now()
          where t.content_hash is distinct from excluded.content_hash",
        "network_policies": "insert into k8s_network_policies as t (cluster_id, namespace_id, namespace, name, uid, labels, created_at, pod_selector, policy_types, ingress, egress, annotations, content_hash)
          select $1, ns.id, r.namespace, r.name, r.uid, r.labels, r.created_at, r.pod_selector, r.policy_types, r.ingress, r.egress, r.annotations, r.content_hash
          from jsonb_populate_recordset(null::k8s_network_policies, $2::jsonb) r
          left join k8s_namespaces ns on ns.cluster_id = $1 and ns.name = r.namespace
          on conflict (cluster_id, namespace, name) do update set
            namespace_id = excluded.namespace_id,
            uid = excluded.uid,
            labels = excluded.labels,
            created_at = excluded.created_at,
            pod_selector = excluded.pod_selector,
            policy_types = excluded.policy_types,
            ingress = excluded.ingress,
            egress = excluded.egress,
            annotations = excluded.annotations,
            content_hash = excluded.content_hash,
            updated_at = now()
          where t.content_hash is distinct from excluded.content_hash",
        "nodes": "insert into k8s_nodes as t (cluster_id, name, uid, roles, labels, taints, status, conditions, unschedulable, kubelet_version, container_runtime, os_image, kernel_version, capacity_cpu_millicores, capacity_memory_bytes, capacity_pods, allocatable_cpu_millicores, allocatable_memory_bytes, allocatable_pods, usage_cpu_millicores, usage_memory_bytes, pod_count, addresses, provider_id, instance_type, zone, created_at, content_hash)
          select $1, r.name, r.uid, r.roles, r.labels, r.taints, r.status, r.conditions, r.unschedulable, r.kubelet_version, r.container_runtime, r.os_image, r.kernel_version, r.capacity_cpu_millicores, r.capacity_memory_bytes, r.capacity_pods, r.allocatable_cpu_millicores, r.allocatable_memory_bytes, r.allocatable_pods, r.usage_cpu_millicores, r.usage_memory_bytes, r.pod_count, r.addresses, r.provider_id, r.instance_type, r.zone, r.created_at, r.content_hash
          from jsonb_populate_recordset(null::k8s_nodes, $2::jsonb) r
          
          on conflict (cluster_id, name) do update set
            uid = excluded.uid,
            roles = excluded.roles,
            labels = excluded.labels,
            taints = excluded.taints,
            status = excluded.status,
            conditions = excluded.conditions,
            unschedulable = excluded.unschedulable,
            kubelet_version = excluded.kubelet_version,
            container_runtime = excluded.container_runtime,
            os_image = excluded.os_image,
            kernel_version = excluded.kernel_version,
            capacity_cpu_millicores = excluded.capacity_cpu_millicores,
            capacity_memory_bytes = excluded.capacity_memory_bytes,
            capacity_pods = excluded.capacity_pods,
            allocatable_cpu_millicores = excluded.allocatable_cpu_millicores,
            allocatable_memory_bytes = excluded.allocatable_memory_bytes,
            allocatable_pods = excluded.allocatable_pods,
            usage_cpu_millicores = excluded.usage_cpu_millicores,
            usage_memory_bytes = excluded.usage_memory_bytes,
            pod_count = excluded.pod_count,
            addresses = excluded.addresses,
            provider_id = excluded.provider_id,
            instance_type = excluded.instance_type,
            zone = excluded.zone,
            created_at = excluded.created_at,
            content_hash = excluded.content_hash,
            updated_at = now()
          where t.content_hash is distinct from excluded.content_hash",
        "pods": "insert into k8s_pods as t (cluster_id, namespace_id, node_id, workload_id, namespace, name, uid, labels, created_at, phase, node_name, pod_ip, host_ip, qos_class, owner_kind, owner_name, workload_kind, workload_name, containers, restart_count, ready_containers, total_containers, cpu_requests_millicores, memory_requests_bytes, cpu_limits_millicores, memory_limits_bytes, started_at, pending_since, content_hash)
          select $1, ns.id, nd.id, wl.id, r.namespace, r.name, r.uid, r.labels, r.created_at, r.phase, r.node_name, r.pod_ip, r.host_ip, r.qos_class, r.owner_kind, r.owner_name, r.workload_kind, r.workload_name, r.containers, r.restart_count, r.ready_containers, r.total_containers, r.cpu_requests_millicores, r.memory_requests_bytes, r.cpu_limits_millicores, r.memory_limits_bytes, r.started_at, r.pending_since, r.content_hash
          from jsonb_populate_recordset(null::k8s_pods, $2::jsonb) r
          left join k8s_namespaces ns on ns.cluster_id = $1 and ns.name = r.namespace
          left join k8s_nodes nd on nd.cluster_id = $1 and nd.name = r.node_name
          left join k8s_workloads wl on wl.cluster_id = $1
            and wl.kind = r.workload_kind and wl.namespace = r.namespace
            and wl.name = r.workload_name
          on conflict (cluster_id, namespace, name) do update set
            namespace_id = excluded.namespace_id,
            node_id = excluded.node_id,
            workload_id = excluded.workload_id,
            uid = excluded.uid,
            labels = excluded.labels,
            created_at = excluded.created_at,
            phase = excluded.phase,
            node_name = excluded.node_name,
            pod_ip = excluded.pod_ip,
            host_ip = excluded.host_ip,
            qos_class = excluded.qos_class,
            owner_kind = excluded.owner_kind,
            owner_name = excluded.owner_name,
            workload_kind = excluded.workload_kind,
            workload_name = excluded.workload_name,
            containers = excluded.containers,
            restart_count = excluded.restart_count,
            ready_containers = excluded.ready_containers,
            total_containers = excluded.total_containers,
            cpu_requests_millicores = excluded.cpu_requests_millicores,
            memory_requests_bytes = excluded.memory_requests_bytes,
            cpu_limits_millicores = excluded.cpu_limits_millicores,
            memory_limits_bytes = excluded.memory_limits_bytes,
            started_at = excluded.started_at,
            pending_since = excluded.pending_since,
            content_hash = excluded.content_hash,
            updated_at = now()
          where t.content_hash is distinct from excluded.content_hash",
        "pvcs": "insert into k8s_pvcs as t (cluster_id, namespace_id, namespace, name, uid, labels, created_at, phase, storage_class, capacity_bytes, requested_bytes, access_modes, volume_name, volume_mode, annotations, content_hash)
          select $1, ns.id, r.namespace, r.name, r.uid, r.labels, r.created_at, r.phase, r.storage_class, r.capacity_bytes, r.requested_bytes, r.access_modes, r.volume_name, r.volume_mode, r.annotations, r.content_hash
          from jsonb_populate_recordset(null::k8s_pvcs, $2::jsonb) r
          left join k8s_namespaces ns on ns.cluster_id = $1 and ns.name = r.namespace
          on conflict (cluster_id, namespace, name) do update set
            namespace_id = excluded.namespace_id,
            uid = excluded.uid,
            labels = excluded.labels,
            created_at = excluded.created_at,
            phase = excluded.phase,
            storage_class = excluded.storage_class,
            capacity_bytes = excluded.capacity_bytes,
            requested_bytes = excluded.requested_bytes,
            access_modes = excluded.access_modes,
            volume_name = excluded.volume_name,
            volume_mode = excluded.volume_mode,
            annotations = excluded.annotations,
            content_hash = excluded.content_hash,
            updated_at = now()
          where t.content_hash is distinct from excluded.content_hash",
        "resource_quotas": "insert into k8s_resource_quotas as t (cluster_id, namespace_id, namespace, name, uid, labels, created_at, hard, used, scopes, content_hash)
          select $1, ns.id, r.namespace, r.name, r.uid, r.labels, r.created_at, r.hard, r.used, r.scopes, r.content_hash
          from jsonb_populate_recordset(null::k8s_resource_quotas, $2::jsonb) r
          left join k8s_namespaces ns on ns.cluster_id = $1 and ns.name = r.namespace
          on conflict (cluster_id, namespace, name) do update set
            namespace_id = excluded.namespace_id,
            uid = excluded.uid,
            labels = excluded.labels,
            created_at = excluded.created_at,
            hard = excluded.hard,
            used = excluded.used,
            scopes = excluded.scopes,
            content_hash = excluded.content_hash,
            updated_at = now()
          where t.content_hash is distinct from excluded.content_hash",
        "services": "insert into k8s_services as t (cluster_id, namespace_id, namespace, name, uid, labels, created_at, type, cluster_ip, cluster_ip_v4, cluster_ips, external_ips, load_balancer_ingress, ports, selector, endpoint_count, annotations, content_hash)
          select $1, ns.id, r.namespace, r.name, r.uid, r.labels, r.created_at, r.type, r.cluster_ip, r.cluster_ip_v4, r.cluster_ips, r.external_ips, r.load_balancer_ingress, r.ports, r.selector, r.endpoint_count, r.annotations, r.content_hash
          from jsonb_populate_recordset(null::k8s_services, $2::jsonb) r
          left join k8s_namespaces ns on ns.cluster_id = $1 and ns.name = r.namespace
          on conflict (cluster_id, namespace, name) do update set
            namespace_id = excluded.namespace_id,
            uid = excluded.uid,
            labels = excluded.labels,
            created_at = excluded.created_at,
            type = excluded.type,
            cluster_ip = excluded.cluster_ip,
            cluster_ip_v4 = excluded.cluster_ip_v4,
            cluster_ips = excluded.cluster_ips,
            external_ips = excluded.external_ips,
            load_balancer_ingress = excluded.load_balancer_ingress,
            ports = excluded.ports,
            selector = excluded.selector,
            endpoint_count = excluded.endpoint_count,
            annotations = excluded.annotations,
            content_hash = excluded.content_hash,
            updated_at = now()
          where t.content_hash is distinct from excluded.content_hash",
        "workloads": "insert into k8s_workloads as t (cluster_id, namespace_id, namespace, name, uid, labels, created_at, kind, replicas_desired, replicas_ready, replicas_available, conditions, strategy, service_account, containers, annotations, helm_release, helm_chart, helm_chart_version, spec_facts, spec_facts_hash, spec_facts_at, content_hash, spec_facts_wire_hash)
          select $1, ns.id, r.namespace, r.name, r.uid, r.labels, r.created_at, r.kind, r.replicas_desired, r.replicas_ready, r.replicas_available, r.conditions, r.strategy, r.service_account, r.containers, r.annotations, r.helm_release, r.helm_chart, r.helm_chart_version, r.spec_facts, r.spec_facts_hash, r.spec_facts_at, r.content_hash, r.spec_facts_wire_hash
          from jsonb_populate_recordset(null::k8s_workloads, $2::jsonb) r
          left join k8s_namespaces ns on ns.cluster_id = $1 and ns.name = r.namespace
          on conflict (cluster_id, kind, namespace, name) do update set
            namespace_id = excluded.namespace_id,
            uid = excluded.uid,
            labels = excluded.labels,
            created_at = excluded.created_at,
            replicas_desired = excluded.replicas_desired,
            replicas_ready = excluded.replicas_ready,
            replicas_available = excluded.replicas_available,
            conditions = excluded.conditions,
            strategy = excluded.strategy,
            service_account = excluded.service_account,
            containers = excluded.containers,
            annotations = excluded.annotations,
            helm_release = excluded.helm_release,
            helm_chart = excluded.helm_chart,
            helm_chart_version = excluded.helm_chart_version,
            content_hash = excluded.content_hash,
            spec_facts_wire_hash = excluded.spec_facts_wire_hash,
            updated_at = now()
          where t.content_hash is distinct from excluded.content_hash",
      }
    `);
  });

  it("generates the stored rows' listing pinned here", () => {
    expect(storedRowsStatement(KIND_ORDER)).toMatchInlineSnapshot(`
      "select 'nodes' as kind, id, name as key, content_hash, null::json as facts
             from k8s_nodes where cluster_id = $1
      union all
      select 'namespaces' as kind, id, name as key, content_hash, null::json as facts
             from k8s_namespaces where cluster_id = $1
      union all
      select 'workloads' as kind, id, kind || chr(1) || namespace || chr(1) || name as key, content_hash, json_build_object('spec_facts_hash', spec_facts_hash, 'spec_facts_at', spec_facts_at, 'spec_facts_wire_hash', spec_facts_wire_hash) as facts
             from k8s_workloads where cluster_id = $1
      union all
      select 'pods' as kind, id, namespace || chr(1) || name as key, content_hash, null::json as facts
             from k8s_pods where cluster_id = $1
      union all
      select 'services' as kind, id, namespace || chr(1) || name as key, content_hash, null::json as facts
             from k8s_services where cluster_id = $1
      union all
      select 'ingresses' as kind, id, namespace || chr(1) || name as key, content_hash, null::json as facts
             from k8s_ingresses where cluster_id = $1
      union all
      select 'pvcs' as kind, id, namespace || chr(1) || name as key, content_hash, null::json as facts
             from k8s_pvcs where cluster_id = $1
      union all
      select 'events' as kind, id, namespace || chr(1) || name as key, content_hash, null::json as facts
             from k8s_events where cluster_id = $1
      union all
      select 'jobs' as kind, id, kind || chr(1) || namespace || chr(1) || name as key, content_hash, null::json as facts
             from k8s_jobs where cluster_id = $1
      union all
      select 'hpas' as kind, id, namespace || chr(1) || name as key, content_hash, null::json as facts
             from k8s_hpas where cluster_id = $1
      union all
      select 'network_policies' as kind, id, namespace || chr(1) || name as key, content_hash, null::json as facts
             from k8s_network_policies where cluster_id = $1
      union all
      select 'resource_quotas' as kind, id, namespace || chr(1) || name as key, content_hash, null::json as facts
             from k8s_resource_quotas where cluster_id = $1
      union all
      select 'endpoint_slices' as kind, id, namespace || chr(1) || name as key, content_hash, null::json as facts
             from k8s_endpoint_slices where cluster_id = $1"
    `);
  });
});
