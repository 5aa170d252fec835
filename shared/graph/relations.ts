/**
 * The relations between stored objects (issue 32's table), each as SQL over
 * two aliases: `f`, the object at the edge's `from` end, and `g`, the one at
 * its `to` end. A walk asks every relation both ways from a whole frontier
 * at once (the frontier's rows of each table, read once by their key), all
 * in one statement per hop (hopSql), never one per object; each relation's
 * part is bounded in what it reads (MAX_MATCHES) and returns.
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
   * walk extends, over the tables it is given (`f` the `from` end's, `g`
   * the `to` end's): the near end's is the hop's frontier rows, the far
   * end's the stored table. A pair that needs another plan one way gives
   * both.
   */
  join: Join | { forward: Join; backward: Join };
  /** A jsonb object of the edge's own facts, over the join's aliases. */
  attrs?: string;
  /** Only from the root Namespace, on the first hop (and never backward). */
  rootOnly?: true;
}

/** A link's rows, over the tables of its `from` (f) and `to` (g) ends. */
type Join = (f: string, g: string) => string;

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

/**
 * Whether `manages` can match anything in cluster `$1`: an Application on
 * it that deploys to it (the join below asks the same). Read with the root,
 * so a cluster without one never plans manages' parts, one per table.
 */
export const MANAGES_ANY = `exists (select 1 from argocd_applications a
  where a.cluster_id = $1 and a.mapped_cluster_id = a.cluster_id)`;

const manages: Link[] = [
  ...NAMESPACED_GROUPS.map(
    (to): Link => ({
      relation: 'manages',
      from: ['Application'],
      to,
      // An Application deploying to another cluster manages nothing here:
      // its resources are that cluster's, which this graph does not read.
      join: (f, g) => `from ${f} f
        join argocd_application_resources r on r.application_id = f.id
        join ${g} g on g.cluster_id = f.cluster_id
          and r.kind = ${kindOfRow(to, 'g')}
          and r.namespace = g.namespace and r.name = g.name
        where f.cluster_id = $1 and f.mapped_cluster_id = f.cluster_id`,
    }),
  ),
  {
    relation: 'manages',
    from: ['Application'],
    to: ['Namespace'],
    join: (f, g) => `from ${f} f
      join argocd_application_resources r on r.application_id = f.id
      join ${g} g on g.cluster_id = f.cluster_id
        and r.kind = 'Namespace' and r.name = g.name
      where f.cluster_id = $1 and f.mapped_cluster_id = f.cluster_id`,
  },
];

const contains: Link[] = NAMESPACED_GROUPS.map((to) => ({
  relation: 'contains',
  from: ['Namespace'],
  to,
  join: (f, g) => `from ${f} f
    join ${g} g on g.cluster_id = f.cluster_id and g.namespace = f.name
    where f.cluster_id = $1`,
  rootOnly: true,
}));

export const LINKS: readonly Link[] = [
  {
    relation: 'owns',
    from: WORKLOADS,
    to: ['Pod'],
    join: (f, g) => `from ${f} f join ${g} g on g.workload_id = f.id
      where f.cluster_id = $1`,
  },
  {
    // A Job's pods by their direct owner: a CronJob's Job is not their top
    // controller (the CronJob is), so workload_id does not reach it.
    relation: 'owns',
    from: ['Job'],
    to: ['Pod'],
    join: (f, g) => `from ${f} f join ${g} g on g.cluster_id = f.cluster_id
        and g.namespace = f.namespace and g.owner_kind = 'Job'
        and g.owner_name = f.name
      where f.cluster_id = $1`,
  },
  {
    relation: 'owns',
    from: ['CronJob'],
    to: ['Job'],
    join: (f, g) => `from ${f} f join ${g} g on g.cluster_id = f.cluster_id
        and g.namespace = f.namespace and g.owner_cronjob = f.name
      where f.cluster_id = $1`,
  },
  {
    relation: 'runs_on',
    from: ['Pod'],
    to: ['Node'],
    join: (f, g) => `from ${f} f join ${g} g on g.id = f.node_id
      where f.cluster_id = $1`,
  },
  {
    relation: 'is_host',
    from: ['Node'],
    to: ['Host'],
    join: (f, g) => `from ${f} f join ${g} g on g.id = f.host_id
      where f.cluster_id = $1`,
  },
  {
    // jsonb_contains, the function behind `@>`, which no index matches: the
    // labels' GIN index spans every cluster (a common `app: api` matched
    // the pods of all 200 clusters), the namespace's pods are a bounded
    // read.
    relation: 'selects',
    from: ['Service'],
    to: ['Pod'],
    join: (f, g) => `from ${f} f join ${g} g on g.cluster_id = f.cluster_id
        and g.namespace = f.namespace and jsonb_contains(g.labels, f.selector)
      where f.cluster_id = $1 and f.selector is not null
        and f.selector <> '{}'::jsonb`,
  },
  {
    relation: 'has_endpoints',
    from: ['Service'],
    to: ['EndpointSlice'],
    join: (f, g) => `from ${f} f join ${g} g
        on g.cluster_id = f.cluster_id and g.service_name = f.name
        and g.namespace = f.namespace
      where f.cluster_id = $1`,
  },
  {
    relation: 'targets',
    from: ['EndpointSlice'],
    to: ['Pod'],
    join: {
      forward: (f, g) => `from ${f} f
        cross join lateral jsonb_array_elements(f.endpoints) ep
        join ${g} g on g.cluster_id = f.cluster_id
          and g.namespace = f.namespace
          and g.name = ep->'target_ref'->>'name'
        where f.cluster_id = $1 and ep->'target_ref'->>'kind' = 'Pod'`,
      // From pods: the slices of their namespaces, each unnested once, and
      // each endpoint's pod found by name in an object of the frontier's
      // pods (a sorted key search, per namespace) instead of a join: the
      // planner cannot know how few endpoints match, and joined, each met
      // every pod of the frontier (1,000 endpoints × 110 pods: 50 ms).
      // `offset 0` keeps the slices planned on their own: folded in, the
      // planner unnested every slice once per pod. Per pod through a GIN
      // index on endpoints would be a probe per pod and per cluster whose
      // pods share the name.
      backward: (f, g) => `from (
          select s.*, e as ep,
                 (ns.pods->>(e->'target_ref'->>'name'))::uuid as pod_id
          from (select p.cluster_id, p.namespace,
                       jsonb_object_agg(p.name, p.id) as pods
                from ${g} p group by p.cluster_id, p.namespace) ns
          join ${f} s on s.cluster_id = ns.cluster_id
            and s.namespace = ns.namespace
          cross join lateral jsonb_array_elements(s.endpoints) e
          where s.cluster_id = $1 and e->'target_ref'->>'kind' = 'Pod'
            and ns.pods ? (e->'target_ref'->>'name')
          offset 0) f
        cross join lateral (select f.pod_id as id) g
        where f.cluster_id = $1`,
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
      forward: (f, g) => `from ${f} f
        cross join lateral (
          select p->>'service' as service
          from jsonb_array_elements(f.rules) rl
          cross join lateral jsonb_array_elements(rl->'paths') p
          union
          select f.default_backend->>'service') b
        join ${g} g on g.cluster_id = f.cluster_id
          and g.namespace = f.namespace and g.name = b.service
        where f.cluster_id = $1`,
      backward: (f, g) => `from ${g} g
        join ${f} f on f.namespace_id = g.namespace_id
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
    join: (f, g) => `from ${f} f join ${g} g on g.cluster_id = f.cluster_id
        and g.kind = f.target_kind and g.namespace = f.namespace
        and g.name = f.target_name
      where f.cluster_id = $1`,
  },
  {
    relation: 'mounts',
    from: WORKLOADS,
    to: ['PersistentVolumeClaim'],
    join: (f, g) => `from ${f} f join ${g} g on g.namespace_id = f.namespace_id
      where f.cluster_id = $1 and ${mountsClaim('f', 'g')}`,
  },
  {
    relation: 'applies_to',
    from: ['NetworkPolicy'],
    to: ['Pod'],
    join: (f, g) => `from ${f} f join ${g} g
        on g.cluster_id = f.cluster_id and g.namespace = f.namespace
      where f.cluster_id = $1 and ${selectorMatches('f.pod_selector', 'g.labels')}`,
    attrs: `jsonb_build_object('policy_types', to_jsonb(f.policy_types))`,
  },
  {
    relation: 'limits',
    from: ['ResourceQuota'],
    to: ['Namespace'],
    join: (f, g) => `from ${f} f join ${g} g on g.id = f.namespace_id
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

/** The hop's rows of a table the frontier holds (its CTE's name). */
const nearTable = (table: string) => `near_${table}`;

/** The kinds at a link's end a hop leaves from, and at the end it reaches. */
export const nearOf = (link: Link, direction: Direction) =>
  direction === 'forward' ? link.from : link.to;
const farOf = (link: Link, direction: Direction) =>
  direction === 'forward' ? link.to : link.from;

function groupSql(group: HopGroup): string {
  const { direction } = group;
  return group.links
    .map((link) => {
      const join =
        typeof link.join === 'function' ? link.join : link.join[direction];
      const near = nearOf(link, direction);
      const far = farOf(link, direction);
      const [farAlias, nearAlias] =
        direction === 'forward' ? ['g', 'f'] : ['f', 'g'];
      const sql =
        direction === 'forward'
          ? join(nearTable(tableOf(near)), tableOf(far))
          : join(tableOf(far), nearTable(tableOf(near)));
      const farKind = far[0] as GraphKind;
      return `select ${nearAlias}.id as src,
              ${nodeColumns(farKind, farAlias, { statusLater: GRAPH_KINDS[farKind].statusPerObject })},
              ${link.attrs ?? 'null::jsonb'} as attrs
            ${sql}
              and ${kindFilter(near, nearAlias)}
              and ${kindFilter(far, farAlias)}`;
    })
    .join('\n      union all\n      ');
}

/** One hop's statement and the tables its frontier's ids are given for. */
export interface HopStatement {
  sql: string;
  /** `$3`, `$4`…: the frontier's row ids in each of these tables. */
  nearTables: readonly string[];
}

/**
 * One hop in one statement, so a hop is one round trip whatever the
 * relations: `$1` the cluster, `$2` the rows kept per group, then the
 * frontier's row ids of each near table (`nearTables`), read once by their
 * key into a CTE every part joins. Each group (a relation asked one way)
 * reads at most MAX_MATCHES + 1 matches, counts them (`total`: the part
 * past the kept rows is what the limit left out) and keeps its first `$2`
 * by kind, namespace and name; rows come back by group (`grp`, the index
 * in `groups`), then in that order. A status that costs
 * (`statusPerObject`) is read last, once per object kept.
 */
export function hopSql(groups: readonly HopGroup[]): HopStatement {
  const links = groups.flatMap((group) =>
    group.links.map((link) => ({ link, direction: group.direction })),
  );
  const tablesOf = (side: typeof nearOf) =>
    new Map(
      links.map(({ link, direction }) => {
        const kind = side(link, direction)[0] as GraphKind;
        return [GRAPH_KINDS[kind].table, kind] as const;
      }),
    );
  const nearKinds = tablesOf(nearOf);
  const nearTables = [...nearKinds.keys()];
  // Joined to the ids unnested, not `id = any(<ids>)`: the planner
  // estimated that condition element by element (200 pod ids: 1.3 ms of
  // CPU, 0.3 ms this way), and an InitPlan's array, as cheap, hid how
  // many rows the frontier holds (1 estimated for 200: nested loops over
  // it where a hash join belongs). No cluster condition, which would cut
  // the estimate as much: the ids are the walk's own, each read from this
  // cluster by the hop before, and every part bounds its far end by it.
  const near = nearTables.map(
    (table, i) => `${nearTable(table)} as materialized (
      select t.* from unnest($${i + 3}::uuid[]) n(id) join ${table} t on t.id = n.id)`,
  );
  const matched = groups.map(
    (group, i) => `m${i} as (
      select ${i} as grp, u.* from (${groupSql(group)}) u
      limit ${MAX_MATCHES + 1})`,
  );
  const later = [...tablesOf(farOf)]
    .filter(([, kind]) => GRAPH_KINDS[kind].statusPerObject)
    .map(
      ([
        table,
        kind,
      ]) => `select t.id, (${GRAPH_KINDS[kind].status('t')})::text as status
        from (select distinct id from kept) k join ${table} t on t.id = k.id`,
    );
  return {
    sql: `with ${[...near, ...matched].join(',\n    ')},
    kept as (
      select * from (
        select m.*, count(*) over (partition by m.grp)::int as total,
               row_number() over (partition by m.grp
                 order by m.kind, m.namespace nulls first, m.name, m.src) as rn
        from (${groups.map((_, i) => `select * from m${i}`).join(' union all ')}) m
      ) x
      where x.rn <= $2)
    ${
      later.length === 0
        ? 'select * from kept'
        : `, later as materialized (${later.join(' union all ')})
       select kept.grp, kept.src, kept.id, kept.kind, kept.namespace,
              kept.name, coalesce(later.status, kept.status) as status,
              kept.attrs, kept.total, kept.rn
       from kept left join later on later.id = kept.id`
    }
    order by grp, rn`,
    nearTables,
  };
}
