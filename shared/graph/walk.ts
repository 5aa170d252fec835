/**
 * GET /api/v1/clusters/{clusterID}/graph: what an object is connected to.
 * A breadth-first walk from the root over the relations (relations.ts),
 * both ways, up to `depth` hops: each hop asks every relation that can
 * leave the frontier's kinds, for the whole frontier, in one statement, so
 * the read costs one round trip per hop (plus the root's), whatever the
 * objects and relations.
 *
 * `limit` counts nodes, root included. Nearer hops are kept first: a hop's
 * new objects are taken relation by relation (the table's order), each
 * relation's by kind, namespace and name, until the limit; what is left
 * is counted per relation in a note and `truncated` is true. An edge is
 * kept when both its ends are, once, in its table direction.
 */
import { type Queryable, query, queryMaybeOne } from '../db/pool.ts';
import { NotFoundError } from '../errors.ts';
import {
  GRAPH_KINDS,
  type GraphKind,
  type GraphRootKind,
  nodeIdOf,
  refOf,
  rootQuery,
} from './kinds.ts';
import {
  type HopGroup,
  type HopStatement,
  hopSql,
  LINKS,
  MANAGES_ANY,
  MAX_MATCHES,
  nearOf,
  RELATION_NAMES,
  type RelationName,
} from './relations.ts';

export interface GraphNode {
  id: string;
  kind: string;
  namespace: string | null;
  name: string;
  status: string | null;
  ref?: string;
}

export interface GraphEdge {
  from: string;
  to: string;
  relation: RelationName;
  ready?: boolean | null;
  policy_types?: string[];
}

export interface Graph {
  root: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  truncated: boolean;
  notes: string[];
}

export interface GraphRequest {
  kind: GraphRootKind;
  namespace: string | undefined;
  name: string;
  depth: number;
  limit: number;
}

/** A stored object's columns (nodeColumns): its node, the id its row id. */
type NodeRow = Omit<GraphNode, 'ref'>;

type RelationRow = NodeRow & {
  grp: number;
  src: string;
  attrs: Record<string, unknown> | null;
  total: number;
};

/** A stored object in the walk: its node and its row id. */
interface Visited {
  rowId: string;
  kind: GraphKind;
  node: GraphNode;
}

/** The statement of each set of groups a hop asked, built once. */
const STATEMENTS = new Map<string, HopStatement>();

function statementFor(groups: readonly HopGroup[]): HopStatement {
  const key = groups
    .map((g) => `${g.direction}:${g.links.map((l) => LINKS.indexOf(l))}`)
    .join('|');
  let sql = STATEMENTS.get(key);
  if (sql === undefined) {
    sql = hopSql(groups);
    STATEMENTS.set(key, sql);
  }
  return sql;
}

const LINKS_BY_RELATION = RELATION_NAMES.map(
  (relation) =>
    [relation, LINKS.filter((link) => link.relation === relation)] as const,
);

/** The relations, each way, that can leave this frontier on this hop. */
function groupsOf(
  frontier: readonly Visited[],
  hop: number,
  managesAny: boolean,
): (HopGroup & { relation: RelationName })[] {
  const kinds = new Set(frontier.map((v) => v.kind));
  const groups: (HopGroup & { relation: RelationName })[] = [];
  for (const [relation, links] of LINKS_BY_RELATION) {
    if (relation === 'manages' && !managesAny) continue;
    for (const direction of ['forward', 'backward'] as const) {
      const active = links.filter(
        (link) =>
          !(link.rootOnly && (direction === 'backward' || hop > 1)) &&
          nearOf(link, direction).some((kind) => kinds.has(kind)),
      );
      if (active.length > 0) {
        groups.push({ relation, links: active, direction });
      }
    }
  }
  return groups;
}

export async function readGraph(
  db: Queryable,
  clusterId: string,
  request: GraphRequest,
): Promise<Graph> {
  const { root, managesAny } = await findRoot(db, clusterId, request);
  const visited = new Map<string, Visited>([[root.rowId, root]]);
  const edges = new Map<string, GraphEdge>();
  const leftOut = new Map<RelationName, number>();
  let frontier: Visited[] = [root];

  for (let hop = 1; hop <= request.depth && frontier.length > 0; hop++) {
    const next: Visited[] = [];
    const groups = groupsOf(frontier, hop, managesAny);
    if (groups.length === 0) break;
    const { sql, nearTables } = statementFor(groups);
    const rows = await query<RelationRow>(db, sql, [
      clusterId,
      request.limit,
      ...nearTables.map((table) =>
        frontier
          .filter((v) => GRAPH_KINDS[v.kind].table === table)
          .map((v) => v.rowId),
      ),
    ]);
    const byGroup = groups.map((): RelationRow[] => []);
    for (const row of rows) byGroup[row.grp]?.push(row);
    groups.forEach(({ relation, direction }, grp) => {
      const mine = byGroup[grp] as RelationRow[];
      let missed = Math.max(0, (mine[0]?.total ?? 0) - mine.length);
      const missedIds = new Set<string>();
      for (const row of mine) {
        let far = visited.get(row.id);
        if (far === undefined) {
          if (visited.size >= request.limit) {
            missedIds.add(row.id);
            continue;
          }
          far = visitedOf(row, clusterId);
          visited.set(row.id, far);
          next.push(far);
        }
        const near = visited.get(row.src) as Visited;
        const [from, to] = direction === 'forward' ? [near, far] : [far, near];
        addEdge(edges, relation, from, to, row.attrs);
      }
      missed += missedIds.size;
      if (missed > 0) {
        leftOut.set(relation, (leftOut.get(relation) ?? 0) + missed);
      }
    });
    frontier = next;
  }

  return {
    root: root.node.id,
    nodes: [...visited.values()].map((v) => v.node),
    edges: [...edges.values()],
    truncated: leftOut.size > 0,
    notes: [...leftOut].map(
      ([relation, count]) =>
        `${relation}: ${count >= MAX_MATCHES ? `at least ${MAX_MATCHES}` : count} more left out by the limit of ${request.limit} nodes`,
    ),
  };
}

function visitedOf(row: NodeRow, clusterId: string): Visited {
  const ref = refOf(row.kind, row.id, clusterId);
  return {
    rowId: row.id,
    kind: row.kind as GraphKind,
    node: {
      id: nodeIdOf({ ...row, rowId: row.id }),
      kind: row.kind,
      namespace: row.namespace,
      name: row.name,
      status: row.status,
      ...(ref === undefined ? {} : { ref }),
    },
  };
}

function addEdge(
  edges: Map<string, GraphEdge>,
  relation: RelationName,
  from: Visited,
  to: Visited,
  attrs: Record<string, unknown> | null,
): void {
  const key = `${relation}\u0000${from.node.id}\u0000${to.node.id}`;
  if (edges.has(key)) return;
  edges.set(key, {
    from: from.node.id,
    to: to.node.id,
    relation,
    ...(attrs ?? {}),
  });
}

/** The root, and whether `manages` can reach anything in its cluster. */
async function findRoot(
  db: Queryable,
  clusterId: string,
  request: GraphRequest,
): Promise<{ root: Visited; managesAny: boolean }> {
  const { sql, values } = rootQuery(
    request.kind,
    clusterId,
    request.namespace,
    request.name,
  );
  const row = await queryMaybeOne<NodeRow & { manages_any: boolean }>(
    db,
    `select r.*, ${MANAGES_ANY} as manages_any from (${sql}) r`,
    values,
  );
  if (!row) throw new NotFoundError(`${request.kind} not found`);
  return { root: visitedOf(row, clusterId), managesAny: row.manages_any };
}
