/**
 * The relations between stored objects (issue 32's table), each as SQL over
 * two aliases: `f`, the object at the edge's `from` end, and `g`, the one at
 * its `to` end. A walk asks every relation both ways from a whole frontier
 * at once (`$2`, the frontier's row ids; `$1`, the cluster), all in one
 * statement per hop (hopSql), never one per object; each relation's part
 * is bounded in what it reads (MAX_MATCHES) and returns.
 *
 * | relation      | from → to                                   | stored as                        |
 * |---------------|---------------------------------------------|----------------------------------|
 * | owns          | workload → Pod, Job → Pod, CronJob → Job    | pod.workload_id, pod owner, job.owner_cronjob |
 * | runs_on       | Pod → Node                                  | pod.node_id                      |
 * | is_host       | Node → Host                                 | node.host_id                     |
 * | selects       | Service → Pod                               | labels @> selector (none: none)  |
 * | has_endpoints | Service → EndpointSlice                     | slice.service_name               |
 * | targets       | EndpointSlice → Pod (ready)                 | endpoints[].target_ref           |
 * | routes_to     | Ingress → Service                           | rules[].paths[].service, default_backend.service |
 * | scales        | HorizontalPodAutoscaler → workload          | hpa.target_kind/target_name      |
 * | mounts        | workload → PersistentVolumeClaim            | spec_facts volume_refs           |
 * | applies_to    | NetworkPolicy → Pod (policy_types)          | pod_selector against labels      |
 * | limits        | ResourceQuota → Namespace                   | quota.namespace_id               |
 * | manages       | Application → its resources                 | argocd_application_resources     |
 * | contains      | Namespace → its objects (root, first hop)   | namespace                        |
 */
import { WORKLOAD_KINDS } from '../events/workload-match.ts';
import {
  GRAPH_KINDS,
  type GraphKind,
  kindFilter,
  nodeColumns,
} from './kinds.ts';

export const RELATION_NAMES = [
  'owns',
  'runs_on',
  'is_host',
  'selects',
  'has_endpoints',
  'targets',
  'routes_to',
  'scales',
  'mounts',
  'applies_to',
  'limits',
  'manages',
  'contains',
] as const;

export type RelationName = (typeof RELATION_NAMES)[number];

/** One table pair of a relation. */
export interface Link {
  relation: RelationName;
  /** The kinds at the `from` end (one table). */
  from: readonly GraphKind[];
  /** The kinds at the `to` end (one table). */
  to: readonly GraphKind[];
  /**
   * `from … f … g … where …`: the pair's rows, ending in a WHERE clause the
   * walk extends. A pair that needs another plan one way gives both.
   */
  join: string | { forward: string; backward: string };
  /** A jsonb object of the edge's own facts, over the join's aliases. */
  attrs?: string;
  /** Only from the root Namespace, on the first hop (and never backward). */
  rootOnly?: true;
}

const WORKLOADS = WORKLOAD_KINDS;

/**
 * A Kubernetes label selector (`matchLabels`, `matchExpressions` with In,
 * NotIn, Exists, DoesNotExist) stored as jsonb, tested against labels in
 * SQL. An empty selector selects everything; an expression it cannot read
 * (unknown operator, no key) selects nothing, as the API server would refuse
 * such a policy.
 */
export function selectorMatches(selector: string, labels: string): string {
  const key = `(x->>'key')`;
  const inValues = `(${labels} ? ${key} and coalesce(x->'values', '[]'::jsonb) ? (${labels}->>${key}))`;
  // Written as a CASE so that an empty matchLabels (`@> '{}'`, true for
  // every row) never becomes a scan of the whole labels GIN index: the
  // pods are bounded by their namespace instead.
  return `((case when jsonb_typeof(${selector}->'matchLabels') = 'object'
               then ${labels} @> (${selector}->'matchLabels') else true end)
    and not exists (
      select 1 from jsonb_array_elements(
        case when jsonb_typeof(${selector}->'matchExpressions') = 'array'
             then ${selector}->'matchExpressions' else '[]'::jsonb end) x
      where not coalesce(case x->>'operator'
        when 'In' then ${inValues}
        when 'NotIn' then not ${inValues}
        when 'Exists' then ${labels} ? ${key}
        when 'DoesNotExist' then not (${labels} ? ${key})
        else false end, false)))`;
}

/**
 * Whether workload `w` mounts claim `c`: a container's `pvc:<claim>`, or a
 * StatefulSet's `pvc-template:T` and a claim `T-<name>-<ordinal>`.
 */
function mountsClaim(w: string, c: string): string {
  const prefix = `(substr(r.ref, 14) || '-' || ${w}.name || '-')`;
  return `exists (
    select 1
    from jsonb_array_elements(case when jsonb_typeof(${w}.spec_facts->'containers') = 'array'
                                   then ${w}.spec_facts->'containers' else '[]'::jsonb end) ct
    cross join lateral jsonb_array_elements_text(
      case when jsonb_typeof(ct->'volume_refs') = 'array'
           then ct->'volume_refs' else '[]'::jsonb end) r(ref)
    where r.ref = 'pvc:' || ${c}.name
       or (${w}.kind = 'StatefulSet' and starts_with(r.ref, 'pvc-template:')
           and starts_with(${c}.name, ${prefix})
           and substr(${c}.name, length(${prefix}) + 1) ~ '^[0-9]+$'))`;
}

/** Every namespaced table the `contains` and `manages` relations reach. */
const NAMESPACED_GROUPS: readonly (readonly GraphKind[])[] = [
  ['Pod'],
  WORKLOADS,
  ['Job', 'CronJob'],
  ['Service'],
  ['EndpointSlice'],
  ['Ingress'],
  ['PersistentVolumeClaim'],
  ['HorizontalPodAutoscaler'],
  ['NetworkPolicy'],
  ['ResourceQuota'],
  ['Application'],
];

function tableOf(kinds: readonly GraphKind[]): string {
  return GRAPH_KINDS[kinds[0] as GraphKind].table;
}

/** The resource's kind as the row says it (a shared table's own column). */
function kindOfRow(kinds: readonly GraphKind[], g: string): string {
  return GRAPH_KINDS[kinds[0] as GraphKind].sharedTable
    ? `${g}.kind`
    : `'${kinds[0]}'`;
}

const manages: Link[] = [
  ...NAMESPACED_GROUPS.map(
    (to): Link => ({
      relation: 'manages',
      from: ['Application'],
      to,
      // An Application deploying to another cluster manages nothing here:
      // its resources are that cluster's, which this graph does not read.
      join: `from argocd_applications f
        join argocd_application_resources r on r.application_id = f.id
        join ${tableOf(to)} g on g.cluster_id = f.cluster_id
          and r.kind = ${kindOfRow(to, 'g')}
          and r.namespace = g.namespace and r.name = g.name
        where f.cluster_id = $1 and f.mapped_cluster_id = f.cluster_id`,
    }),
  ),
  {
    relation: 'manages',
    from: ['Application'],
    to: ['Namespace'],
    join: `from argocd_applications f
      join argocd_application_resources r on r.application_id = f.id
      join k8s_namespaces g on g.cluster_id = f.cluster_id
        and r.kind = 'Namespace' and r.name = g.name
      where f.cluster_id = $1 and f.mapped_cluster_id = f.cluster_id`,
  },
];

const contains: Link[] = NAMESPACED_GROUPS.map((to) => ({
  relation: 'contains',
  from: ['Namespace'],
  to,
  join: `from k8s_namespaces f
    join ${tableOf(to)} g on g.cluster_id = f.cluster_id and g.namespace = f.name
    where f.cluster_id = $1`,
  rootOnly: true,
}));

export const LINKS: readonly Link[] = [
  {
    relation: 'owns',
    from: WORKLOADS,
    to: ['Pod'],
    join: `from k8s_workloads f join k8s_pods g on g.workload_id = f.id
      where f.cluster_id = $1`,
  },
  {
    // A Job's pods by their direct owner: a CronJob's Job is not their top
    // controller (the CronJob is), so workload_id does not reach it.
    relation: 'owns',
    from: ['Job'],
    to: ['Pod'],
    join: `from k8s_jobs f join k8s_pods g on g.cluster_id = f.cluster_id
        and g.namespace = f.namespace and g.owner_kind = 'Job'
        and g.owner_name = f.name
      where f.cluster_id = $1`,
  },
  {
    relation: 'owns',
    from: ['CronJob'],
    to: ['Job'],
    join: `from k8s_jobs f join k8s_jobs g on g.cluster_id = f.cluster_id
        and g.namespace = f.namespace and g.owner_cronjob = f.name
      where f.cluster_id = $1`,
  },
  {
    relation: 'runs_on',
    from: ['Pod'],
    to: ['Node'],
    join: `from k8s_pods f join k8s_nodes g on g.id = f.node_id
      where f.cluster_id = $1`,
  },
  {
    relation: 'is_host',
    from: ['Node'],
    to: ['Host'],
    join: `from k8s_nodes f join hosts g on g.id = f.host_id
      where f.cluster_id = $1`,
  },
  {
    relation: 'selects',
    from: ['Service'],
    to: ['Pod'],
    join: `from k8s_services f join k8s_pods g on g.cluster_id = f.cluster_id
        and g.namespace = f.namespace and g.labels @> f.selector
      where f.cluster_id = $1 and f.selector is not null
        and f.selector <> '{}'::jsonb`,
  },
  {
    relation: 'has_endpoints',
    from: ['Service'],
    to: ['EndpointSlice'],
    join: `from k8s_services f join k8s_endpoint_slices g
        on g.cluster_id = f.cluster_id and g.service_name = f.name
        and g.namespace = f.namespace
      where f.cluster_id = $1`,
  },
  {
    relation: 'targets',
    from: ['EndpointSlice'],
    to: ['Pod'],
    join: {
      forward: `from k8s_endpoint_slices f
        cross join lateral jsonb_array_elements(f.endpoints) ep
        join k8s_pods g on g.cluster_id = f.cluster_id
          and g.namespace = f.namespace
          and g.name = ep->'target_ref'->>'name'
        where f.cluster_id = $1 and ep->'target_ref'->>'kind' = 'Pod'`,
      // From pods: the slices of their namespaces, each unnested once and
      // joined to the pods by name. `offset 0` keeps that subquery planned
      // on its own: folded into the join, the planner unnested every slice
      // once per pod (200 pods of a 1,000-endpoint service: 200,000
      // endpoints, 0.4-0.6 s). Per pod through a GIN index on endpoints
      // would be a probe per pod and per cluster whose pods share the name.
      backward: `from (
          select s.*, e as ep
          from (select distinct p.cluster_id, p.namespace from k8s_pods p
                where p.cluster_id = $1 and p.id = any($2::uuid[])) ns
          join k8s_endpoint_slices s on s.cluster_id = ns.cluster_id
            and s.namespace = ns.namespace
          cross join lateral jsonb_array_elements(s.endpoints) e
          where e->'target_ref'->>'kind' = 'Pod'
          offset 0) f
        join k8s_pods g on g.cluster_id = f.cluster_id
          and g.namespace = f.namespace
          and g.name = f.ep->'target_ref'->>'name'
        where true`,
    },
    attrs: `jsonb_build_object('ready', (ep->>'ready')::boolean)`,
  },
  {
    // Every rule path's backend service and the default backend's, once
    // each; a resource backend (no service) routes to no Service.
    relation: 'routes_to',
    from: ['Ingress'],
    to: ['Service'],
    join: {
      forward: `from k8s_ingresses f
        cross join lateral (
          select p->>'service' as service
          from jsonb_array_elements(f.rules) rl
          cross join lateral jsonb_array_elements(rl->'paths') p
          union
          select f.default_backend->>'service') b
        join k8s_services g on g.cluster_id = f.cluster_id
          and g.namespace = f.namespace and g.name = b.service
        where f.cluster_id = $1`,
      backward: `from k8s_services g
        join k8s_ingresses f on f.namespace_id = g.namespace_id
          and (f.rules @> jsonb_build_array(jsonb_build_object('paths',
                 jsonb_build_array(jsonb_build_object('service', g.name))))
               or f.default_backend->>'service' = g.name)
        where g.cluster_id = $1`,
    },
  },
  {
    relation: 'scales',
    from: ['HorizontalPodAutoscaler'],
    to: WORKLOADS,
    join: `from k8s_hpas f join k8s_workloads g on g.cluster_id = f.cluster_id
        and g.kind = f.target_kind and g.namespace = f.namespace
        and g.name = f.target_name
      where f.cluster_id = $1`,
  },
  {
    relation: 'mounts',
    from: WORKLOADS,
    to: ['PersistentVolumeClaim'],
    join: `from k8s_workloads f join k8s_pvcs g on g.namespace_id = f.namespace_id
      where f.cluster_id = $1 and ${mountsClaim('f', 'g')}`,
  },
  {
    relation: 'applies_to',
    from: ['NetworkPolicy'],
    to: ['Pod'],
    join: `from k8s_network_policies f join k8s_pods g
        on g.cluster_id = f.cluster_id and g.namespace = f.namespace
      where f.cluster_id = $1 and ${selectorMatches('f.pod_selector', 'g.labels')}`,
    attrs: `jsonb_build_object('policy_types', to_jsonb(f.policy_types))`,
  },
  {
    relation: 'limits',
    from: ['ResourceQuota'],
    to: ['Namespace'],
    join: `from k8s_resource_quotas f join k8s_namespaces g on g.id = f.namespace_id
      where f.cluster_id = $1`,
  },
  ...manages,
  ...contains,
];

/** At most this many matches of one relation are read (and counted). */
export const MAX_MATCHES = 10_000;

export type Direction = 'forward' | 'backward';

/** One relation asked one way: the links whose near end the frontier has. */
export interface HopGroup {
  links: readonly Link[];
  direction: Direction;
}

function groupSql(group: HopGroup): string {
  const { direction } = group;
  return group.links
    .map((link) => {
      const join =
        typeof link.join === 'string' ? link.join : link.join[direction];
      const [near, far, farAlias, nearAlias] =
        direction === 'forward'
          ? [link.from, link.to, 'g', 'f']
          : [link.to, link.from, 'f', 'g'];
      return `select ${nearAlias}.id as src, ${nodeColumns(far[0] as GraphKind, farAlias)},
              ${link.attrs ?? 'null::jsonb'} as attrs
            ${join}
              and ${nearAlias}.id = any($2::uuid[])
              and ${kindFilter(near, nearAlias)}
              and ${kindFilter(far, farAlias)}`;
    })
    .join('\n      union all\n      ');
}

/**
 * One hop in one statement, so a hop is one round trip whatever the
 * relations: `$1` the cluster, `$2` the frontier's row ids (each part keeps
 * the ids of its own near kind), `$3` the rows kept per group. Each group
 * (a relation asked one way) reads at most MAX_MATCHES + 1 matches, counts
 * them (`total`: the part past the kept rows is what the limit left out)
 * and keeps its first `$3` by kind, namespace and name; rows come back by
 * group (`grp`, the index in `groups`), then in that order.
 */
export function hopSql(groups: readonly HopGroup[]): string {
  const matched = groups.map(
    (group, i) => `m${i} as (
      select ${i} as grp, u.* from (${groupSql(group)}) u
      limit ${MAX_MATCHES + 1})`,
  );
  return `with ${matched.join(',\n    ')}
    select * from (
      select m.*, count(*) over (partition by m.grp)::int as total,
             row_number() over (partition by m.grp
               order by m.kind, m.namespace nulls first, m.name, m.src) as rn
      from (${groups.map((_, i) => `select * from m${i}`).join(' union all ')}) m
    ) x
    where x.rn <= $3
    order by x.grp, x.rn`;
}
