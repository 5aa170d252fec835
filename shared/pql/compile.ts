/**
 * A parsed PQL expression as the statement selecting the hosts it matches:
 * a SQL condition over the aliases `h` (hosts), `e` (the host's
 * environment) and, when the expression names a `cluster.*` field, `c` (a
 * cluster one of the host's nodes belongs to).
 * Field names map to fixed column expressions below; every value goes in
 * through SqlParams as a bound parameter, never into the text.
 *
 * The spec's semantics: the expression is evaluated on each (host, cluster)
 * pair of the join hosts → k8s_nodes → clusters, and a host matches when
 * some pair satisfies it. So an expression naming a cluster field selects
 * the hosts of the pairs that satisfy it, and never matches a host no node
 * links to; one naming none reads the host alone and matches unlinked hosts too.
 */
import type { SqlParams } from '../db/params.ts';
import {
  namesClusterField,
  type PqlExpression,
  type PqlField,
} from './parse.ts';

const COLUMNS: Record<PqlField, string> = {
  'host.hostname': 'h.hostname',
  // host() renders an inet without its /32 (or /128) suffix, as written.
  'host.ip': 'host(h.ip_address)',
  'host.os': 'h.os',
  'host.environment': 'e.slug',
  'cluster.name': 'c.name',
  'cluster.version': 'c.version',
  'cluster.platform': 'c.platform',
  'cluster.status': 'c.status',
};

/** A glob (`*`, `?`, the rest literal) as an ILIKE pattern (escape `\`). */
export function globToLike(glob: string): string {
  let pattern = '';
  for (const ch of glob) {
    if (ch === '*') pattern += '%';
    else if (ch === '?') pattern += '_';
    else if (ch === '%' || ch === '_' || ch === '\\') pattern += `\\${ch}`;
    else pattern += ch;
  }
  return pattern;
}

function condition(expression: PqlExpression, params: SqlParams): string {
  switch (expression.type) {
    case 'compare': {
      const column = COLUMNS[expression.field];
      if (expression.op === '~') {
        return `coalesce(${column} ilike ${params.add(globToLike(expression.value))}, false)`;
      }
      const value = params.add(expression.value);
      // A missing value (no OS known) is not equal to anything, so it is
      // "different from" every value rather than unknown.
      return expression.op === '='
        ? `coalesce(${column} = ${value}::text, false)`
        : `coalesce(${column} <> ${value}::text, true)`;
    }
    case 'not':
      return `not ${condition(expression.operand, params)}`;
    case 'and':
    case 'or':
      return `(${expression.operands
        .map((operand) => condition(operand, params))
        .join(` ${expression.type} `)})`;
  }
}

/**
 * The hosts inside `within` (a condition on `h`: the caller's scope) that
 * the expression matches, as a statement selecting each one's `id` and
 * `sort_name` (lower-case hostname, the list's order). `fromPairs` says
 * whether it reads the pairs: an expression that names no `cluster.*` field
 * reads the host alone; one that names one reads the pairs (at most one a
 * linked node) and keeps their distinct hosts, each pair's host looked up
 * by key (`offset 0` keeps the planner from reading every host in scope to
 * hash them instead: 100k hosts, ~30 ms of ILIKE for ~1,300 pairs). Inside
 * it `h`, `e` and `c`
 * are the pair's host, environment and cluster, so the expression reads
 * the same there.
 */
export function matchingHosts(
  expression: PqlExpression | undefined,
  params: SqlParams,
  within: string,
): { statement: string; fromPairs: boolean } {
  if (expression === undefined || !namesClusterField(expression)) {
    const matches =
      expression === undefined ? 'true' : condition(expression, params);
    return {
      statement: `select h.id, lower(h.hostname) as sort_name
        from hosts h
        left join environments e on e.id = h.environment_id
        where ${within} and ${matches}`,
      fromPairs: false,
    };
  }
  return {
    statement: `select distinct h.id, lower(h.hostname) as sort_name
      from k8s_nodes pn
      join clusters c on c.id = pn.cluster_id
      cross join lateral (
        select * from hosts h where h.id = pn.host_id offset 0
      ) h
      left join environments e on e.id = h.environment_id
      where ${within} and ${condition(expression, params)}`,
    fromPairs: true,
  };
}
