/**
 * The graph route's parameters. The route table already checked the
 * cluster (404, then 403); these are read after that (400).
 *
 * | parameter | rule                                                    |
 * |-----------|---------------------------------------------------------|
 * | kind      | one of GRAPH_ROOT_KINDS                                 |
 * | namespace | a DNS-1123 label; required for a namespaced kind, refused for Node and Namespace |
 * | name      | a DNS-1123 subdomain                                    |
 * | depth     | 1-3, default 1                                          |
 * | limit     | nodes, 1-1000, default 200                              |
 */

import {
  integerField,
  namespaceField,
  objectNameField,
  oneOfField,
} from '../http/fields.ts';
import type { RouteQuery } from '../http/query.ts';
import * as z from '../zod.ts';
import { GRAPH_KINDS, GRAPH_ROOT_KINDS, type GraphRootKind } from './kinds.ts';
import type { GraphRequest } from './walk.ts';

export const GRAPH_MAX_DEPTH = 3;
export const GRAPH_DEFAULT_LIMIT = 200;
export const GRAPH_MAX_LIMIT = 1000;

export const graphQuery = {
  schema: z.pipe(
    z
      .object({
        kind: oneOfField('kind', GRAPH_ROOT_KINDS),
        namespace: z.optional(namespaceField()),
        name: objectNameField('name'),
        depth: z.optional(integerField('depth', 1, GRAPH_MAX_DEPTH)),
        limit: z.optional(integerField('limit', 1, GRAPH_MAX_LIMIT)),
      })
      .check(
        z.superRefine((query, ctx) => {
          // A bad kind was already refused by its own field.
          const namespaced =
            GRAPH_KINDS[query.kind as GraphRootKind]?.namespaced;
          if (namespaced === undefined) return;
          if (namespaced && query.namespace === undefined) {
            ctx.addIssue({
              code: 'custom',
              path: ['namespace'],
              message: `namespace is required for kind ${query.kind}`,
            });
          } else if (!namespaced && query.namespace !== undefined) {
            ctx.addIssue({
              code: 'custom',
              path: ['namespace'],
              message: `namespace is not taken by the cluster-scoped kind ${query.kind}`,
            });
          }
        }),
      ),
    z.transform(
      (query): GraphRequest => ({
        kind: query.kind as GraphRootKind,
        namespace: query.namespace,
        name: query.name,
        depth: query.depth ?? 1,
        limit: query.limit ?? GRAPH_DEFAULT_LIMIT,
      }),
    ),
  ),
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;
