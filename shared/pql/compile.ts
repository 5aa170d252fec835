/**
 * A parsed PQL expression as a SQL condition over the hosts list's aliases:
 * `h` (hosts), `e` (the host's environment) and, when the expression names
 * a `cluster.*` field, `c` (a cluster one of the host's nodes belongs to).
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
 * What a host must meet to match, as the hosts list reads it:
 * - `condition`: an expression that names no `cluster.*` field is a
 *   condition on the host row `h` (with `e`) alone;
 * - `hostIds`: one that names one is a statement selecting the ids of the
 *   hosts some pair satisfies, restricted by `within` (a condition on `h`
 *   the caller applies anyway: its scope). The list then starts from those
 *   hosts, which are at most the linked ones, instead of testing every host
 *   in scope: a selective `cluster.*` field otherwise had the page walk
 *   every host in hostname order looking for a match (100k hosts, none
 *   matching: 280 ms). Inside it, `h`, `e` and `c` are the pair's host,
 *   environment and cluster, so the expression reads the same there.
 */
export type CompiledPql = { condition: string } | { hostIds: string };

export function compilePql(
  expression: PqlExpression,
  params: SqlParams,
  within = 'true',
): CompiledPql {
  const inner = condition(expression, params);
  if (!namesClusterField(expression)) return { condition: inner };
  return {
    hostIds: `select distinct pn.host_id from k8s_nodes pn
      join clusters c on c.id = pn.cluster_id
      join hosts h on h.id = pn.host_id
      left join environments e on e.id = h.environment_id
      where ${within} and ${inner}`,
  };
}
