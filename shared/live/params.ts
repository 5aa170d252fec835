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
import * as z from 'zod';
import {
  namespaceField,
  objectNameField,
  oneOfField,
  timeField,
  uuidField,
} from '../http/fields.ts';
import { pagingFields } from '../http/paging.ts';
import type { RouteQuery } from '../http/query.ts';
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

const TAIL_RULE = `tail must be an integer from ${LOG_TAIL_MIN} to ${LOG_TAIL_MAX}`;

export const logsQuery = {
  schema: z.object({
    namespace: namespaceField(),
    pod: objectNameField('pod'),
    container: namespaceField('container').optional(),
    tail: z
      .string()
      .regex(/^[0-9]{1,3}$/, TAIL_RULE)
      .transform(Number)
      .refine((n) => n >= LOG_TAIL_MIN && n <= LOG_TAIL_MAX, TAIL_RULE)
      .optional(),
    previous: oneOfField('previous', ['true', 'false'])
      .transform((v) => v === 'true')
      .optional(),
    since_time: timeField('since_time').optional(),
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

/** GET /api/v1/audit/live-reads's parameters. */
export const auditListQuery = {
  schema: z.object({
    ...pagingFields(200),
    /** An email (case ignored) or a JWT subject. */
    user: z.string().min(1, 'user must not be empty').max(320).optional(),
    cluster_id: uuidField('cluster_id').optional(),
    route: oneOfField('route', ['manifest', 'revisions', 'logs'])
      .transform((v) => v as LiveRoute)
      .optional(),
    from: timeField('from').optional(),
    to: timeField('to').optional(),
  }),
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;

export type AuditListQuery = z.output<typeof auditListQuery.schema>;
