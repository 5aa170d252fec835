/**
 * The live routes' query parameters (spec "Live Reads", the 400 row), as
 * route table queries: every other parameter is refused (bad_request), each
 * of these once.
 *
 * | route      | parameter  | rule                                              |
 * |------------|------------|---------------------------------------------------|
 * | manifest   | kind       | one of MANIFEST_KINDS (never ConfigMap or Secret)  |
 * | revisions  | kind       | Deployment, Rollout, StatefulSet or DaemonSet      |
 * | both       | namespace  | DNS-1123 label                                    |
 * | both       | name       | DNS-1123 subdomain                                |
 * | logs       | namespace  | DNS-1123 label                                    |
 * | logs       | pod        | DNS-1123 subdomain                                |
 * | logs       | container  | DNS-1123 label, optional                          |
 * | logs       | tail       | 1–300, default 100 (a follow always reads 300)    |
 * | logs       | previous   | true or false, default false                      |
 * | logs       | since_time | RFC 3339, optional: the page's follow poll         |
 *
 * And the live-read audit list's (GET /api/v1/audit/live-reads): paging,
 * user, cluster_id, route and a window.
 */

import {
  integerField,
  namespaceField,
  objectNameField,
  oneOfField,
  timeField,
  uuidField,
  withRule,
} from '../http/fields.ts';
import { type PagingRule, pagingFields } from '../http/paging.ts';
import type { RouteQuery } from '../http/query.ts';
import * as z from '../zod.ts';
import type { LiveRoute } from './gates.ts';
import {
  LOG_TAIL_DEFAULT,
  LOG_TAIL_MAX,
  LOG_TAIL_MIN,
  MANIFEST_KINDS,
  REVISION_KINDS,
} from './kube-query.ts';

const objectQuery = (kinds: readonly string[]) => ({
  schema: z.object({
    kind: oneOfField('kind', kinds),
    namespace: namespaceField(),
    name: objectNameField('name'),
  }),
  unknownParam: 'bad_request' as const,
});

export const manifestQuery = objectQuery(MANIFEST_KINDS) satisfies RouteQuery;
export const revisionsQuery = objectQuery(REVISION_KINDS) satisfies RouteQuery;

export const logsQuery = {
  schema: z.object({
    namespace: namespaceField(),
    pod: objectNameField('pod'),
    container: z.optional(namespaceField('container')),
    tail: z.optional(integerField('tail', LOG_TAIL_MIN, LOG_TAIL_MAX)),
    previous: z.optional(
      z.pipe(
        oneOfField('previous', ['true', 'false']),
        z.transform((v) => v === 'true'),
      ),
    ),
    since_time: z.optional(timeField('since_time')),
  }),
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;

export type ManifestQuery = z.output<typeof manifestQuery.schema>;
export type RevisionsQuery = z.output<typeof revisionsQuery.schema>;
export type LogsQuery = z.output<typeof logsQuery.schema>;

/** The lines a logs read asks for: a follow always reads the maximum. */
export function tailOf(query: LogsQuery): number {
  if (query.since_time !== undefined) return LOG_TAIL_MAX;
  return query.tail ?? LOG_TAIL_DEFAULT;
}

/** The audit trail's pages. */
export const AUDIT_PAGING: PagingRule = { defaultPerPage: 50, maxPerPage: 200 };

/** GET /api/v1/audit/live-reads's parameters. */
export const auditListQuery = {
  schema: z.object({
    ...pagingFields(AUDIT_PAGING),
    /** An email (case ignored) or a JWT subject. */
    user: z.optional(
      withRule(
        z
          .string()
          .check(z.minLength(1, 'user must not be empty'), z.maxLength(320)),
        'an email (case ignored) or a JWT subject, at most 320 characters',
      ),
    ),
    cluster_id: z.optional(uuidField('cluster_id')),
    route: z.optional(
      z.pipe(
        oneOfField('route', ['manifest', 'revisions', 'logs']),
        z.transform((v) => v as LiveRoute),
      ),
    ),
    from: z.optional(timeField('from')),
    to: z.optional(timeField('to')),
  }),
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;

export type AuditListQuery = z.output<typeof auditListQuery.schema>;
