/**
 * Recorded changes, deploys and alert groups over the clusters a bench
 * database holds, spread over 90 days: the what-changed bench's world
 * (bench/changes.ts) and the scale curve's (bench/scale.ts).
 */
import { type Db, query } from '../shared/db/pool.ts';

/**
 * A CTE `name` holding `table`'s rows as arrays (ids, clients, envs) and
 * their count n: row i of a generated series goes to element 1 + i % n,
 * spreading the rows evenly over the table's.
 */
const spread = (name: string, table: 'clusters' | 'webhook_sources') =>
  `${name} as (
       select array_agg(id order by id) as ids,
              array_agg(client_id order by id) as clients,
              array_agg(environment_id order by id) as envs,
              count(*)::int as n
       from ${table})`;

/** `count` change rows over every cluster. */
export async function seedChangeRows(db: Db, count: number): Promise<void> {
  // 70% recorded changes, 30% deploys; namespaces ns-0..ns-19, workloads
  // w-0..w-49 (each drawn from other digits of the row number than its
  // cluster, so every cluster gets every kind), times spread over 90 days
  // (129,600 minutes).
  await query(
    db,
    `with ${spread('cs', 'clusters')}
     insert into change_events (source, event_type, client_id, environment_id,
       scanned_at, severity, summary, details)
     select case when (i / 100) % 10 < 7 then 'k8s-config' else 'deployment' end,
            case when (i / 100) % 10 < 7 then 'workload_changed' else 'sync' end,
            cs.clients[1 + i % cs.n], cs.envs[1 + i % cs.n],
            now() - (i::bigint * 7919 % 129600) * interval '1 minute', 'info', 'bench change',
            case when (i / 100) % 10 < 7 then jsonb_build_object(
                   'cluster_id', cs.ids[1 + i % cs.n], 'kind', 'Deployment',
                   'namespace', 'ns-' || ((i / 1000) % 20),
                   'name', 'w-' || ((i / 20000) % 50),
                   'changes', '[]'::jsonb, 'truncated', false)
                 else jsonb_build_object(
                   'provider', 'argocd', 'app_name', 'app-' || ((i / 100) % 30),
                   'namespace', 'ns-' || ((i / 1000) % 20), 'revision', md5(i::text))
            end
     from cs, generate_series(1, $1) i`,
    [count],
  );
}

/** An Alertmanager source per environment, and `count` alert groups over them. */
export async function seedAlertGroups(db: Db, count: number): Promise<void> {
  await query(
    db,
    `insert into webhook_sources (client_id, environment_id, kind, secret_sha256)
     select client_id, id, 'alertmanager', sha256(id::text::bytea) from environments`,
  );
  await query(
    db,
    `with ${spread('ss', 'webhook_sources')}
     insert into alert_groups (source_id, client_id, environment_id, group_key,
       status, severity, title, detail, labels, alert_labels, first_fired_at,
       last_notified_at, resolved_at)
     select ss.ids[1 + i % ss.n], ss.clients[1 + i % ss.n], ss.envs[1 + i % ss.n],
            'g' || i, 'resolved', 'warning', 'KubePodCrashLooping',
            'crash-looping', '{}',
            jsonb_build_array(jsonb_build_object(
              'alertname', 'KubePodCrashLooping', 'namespace', 'ns-' || ((i / 50) % 20),
              'pod', 'w-' || ((i / 1000) % 50) || '-7d9f8c5b4-x2x9k')),
            now() - (i::bigint * 7919 % 129600) * interval '1 minute',
            now() - (i::bigint * 7919 % 129600) * interval '1 minute',
            now() - (i::bigint * 7919 % 129600 - 10) * interval '1 minute'
     from ss, generate_series(1, $1) i`,
    [count],
  );
}
