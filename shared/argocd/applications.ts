/**
 * Argo CD Applications from the agent (wire v1.1 `argocd_applications`):
 * stored per reporting cluster, upsert then prune, in the sync's
 * transaction; a snapshot without the array was not collected and prunes
 * nothing. A repo_url that still carries credentials never gets here: the
 * wire schema refuses the whole message (shared/wire/repo-url.ts). Each Application's resources are rows of their own, rewritten
 * only for an Application whose content changed.
 *
 * An Application is mapped to the cluster it deploys to: the cluster of the
 * same client whose api_server_url equals its destination server (a
 * trailing slash aside), or the reporting cluster for
 * `https://kubernetes.default.svc`. The what-changed timeline attributes
 * deploys through that mapping.
 */
import { createHash } from 'node:crypto';
import { execute, type Queryable, query } from '../db/pool.ts';
import type { ArgocdApplication } from '../wire/inventory.ts';

/** The in-cluster destination: the cluster Argo CD itself runs in. */
export const IN_CLUSTER_SERVER = 'https://kubernetes.default.svc';

function rowOf(app: ArgocdApplication) {
  const row = {
    namespace: app.namespace,
    name: app.name,
    uid: app.uid ?? null,
    project: app.project ?? null,
    destination_server: app.destination?.server ?? null,
    destination_name: app.destination?.name ?? null,
    destination_namespace: app.destination?.namespace ?? null,
    repo_url: app.source?.repo_url ?? null,
    source_path: app.source?.path ?? null,
    chart: app.source?.chart ?? null,
    target_revision: app.source?.target_revision ?? null,
    sync_status: app.sync_status ?? null,
    health_status: app.health_status ?? null,
    revision: app.revision ?? null,
    operation: app.operation ?? null,
    resources: (app.resources ?? []).flatMap((r) =>
      r.kind && r.name
        ? [
            {
              api_group: r.group ?? '',
              kind: r.kind,
              namespace: r.namespace ?? '',
              name: r.name,
            },
          ]
        : [],
    ),
  };
  const content_hash = createHash('sha1')
    .update(JSON.stringify(row))
    .digest('base64');
  return { ...row, content_hash };
}

const UPSERT_APPLICATIONS = `
  insert into argocd_applications
    (cluster_id, client_id, namespace, name, uid, project, destination_server,
     destination_name, destination_namespace, repo_url, source_path, chart,
     target_revision, sync_status, health_status, revision, operation,
     mapped_cluster_id, content_hash)
  select $1, $2, x.namespace, x.name, x.uid, x.project, x.destination_server,
         x.destination_name, x.destination_namespace, x.repo_url, x.source_path,
         x.chart, x.target_revision, x.sync_status, x.health_status, x.revision,
         x.operation,
         case
           when rtrim(x.destination_server, '/') = '${IN_CLUSTER_SERVER}' then $1
           else (select c.id from clusters c
                 where c.client_id = $2 and x.destination_server is not null
                   and rtrim(c.api_server_url, '/') = rtrim(x.destination_server, '/')
                 order by c.created_at, c.id limit 1)
         end,
         x.content_hash
  from jsonb_to_recordset($3::jsonb) as x(
    namespace text, name text, uid text, project text, destination_server text,
    destination_name text, destination_namespace text, repo_url text,
    source_path text, chart text, target_revision text, sync_status text,
    health_status text, revision text, operation jsonb, content_hash text)
  on conflict (cluster_id, namespace, name) do update set
    uid = excluded.uid, project = excluded.project,
    destination_server = excluded.destination_server,
    destination_name = excluded.destination_name,
    destination_namespace = excluded.destination_namespace,
    repo_url = excluded.repo_url, source_path = excluded.source_path,
    chart = excluded.chart, target_revision = excluded.target_revision,
    sync_status = excluded.sync_status, health_status = excluded.health_status,
    revision = excluded.revision, operation = excluded.operation,
    mapped_cluster_id = excluded.mapped_cluster_id,
    content_hash = excluded.content_hash, updated_at = now()
  where (argocd_applications.content_hash, argocd_applications.mapped_cluster_id)
    is distinct from (excluded.content_hash, excluded.mapped_cluster_id)
  returning id, namespace, name`;

const DELETE_RESOURCES = `
  delete from argocd_application_resources where application_id = any($1::uuid[])`;

const INSERT_RESOURCES = `
  insert into argocd_application_resources (application_id, api_group, kind, namespace, name)
  select distinct x.application_id, x.api_group, x.kind, x.namespace, x.name
  from jsonb_to_recordset($1::jsonb)
    as x(application_id uuid, api_group text, kind text, namespace text, name text)`;

const PRUNE_APPLICATIONS = `
  delete from argocd_applications a
  where a.cluster_id = $1
    and not exists (
      select 1 from jsonb_to_recordset($2::jsonb) as x(namespace text, name text)
      where x.namespace = a.namespace and x.name = a.name)`;

export interface ApplicationsResult {
  received: number;
  written: number;
  pruned: number;
}

/** Upserts the reported Applications, then prunes the ones gone. */
export async function syncArgocdApplications(
  tx: Queryable,
  cluster: { id: string; clientId: string },
  applications: readonly ArgocdApplication[] | undefined,
): Promise<ApplicationsResult | undefined> {
  if (applications === undefined) return undefined;
  // One row per (namespace, name): the last entry wins, as for every kind.
  const rows = [
    ...new Map(
      applications.map((a) => [
        JSON.stringify([a.namespace, a.name]),
        rowOf(a),
      ]),
    ).values(),
  ];
  const written = await query<{
    id: string;
    namespace: string;
    name: string;
  }>(tx, UPSERT_APPLICATIONS, [
    cluster.id,
    cluster.clientId,
    JSON.stringify(rows.map(({ resources: _r, ...row }) => row)),
  ]);
  if (written.length > 0) {
    const ids = new Map(
      written.map((r) => [JSON.stringify([r.namespace, r.name]), r.id]),
    );
    const resources = rows.flatMap((row) => {
      const id = ids.get(JSON.stringify([row.namespace, row.name]));
      return id === undefined
        ? []
        : row.resources.map((r) => ({ application_id: id, ...r }));
    });
    await execute(tx, DELETE_RESOURCES, [[...ids.values()]]);
    if (resources.length > 0) {
      await execute(tx, INSERT_RESOURCES, [JSON.stringify(resources)]);
    }
  }
  const pruned = await execute(tx, PRUNE_APPLICATIONS, [
    cluster.id,
    JSON.stringify(rows.map((r) => ({ namespace: r.namespace, name: r.name }))),
  ]);
  return {
    received: rows.length,
    written: written.length,
    pruned,
  };
}
