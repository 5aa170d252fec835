/**
 * The live routes' query parameters (spec "Live Reads", the 400 row): every
 * other parameter is refused, each of these once.
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
 */
import { z } from 'zod';
import {
  DNS_LABEL,
  DNS_SUBDOMAIN,
  LOG_TAIL_DEFAULT,
  LOG_TAIL_MAX,
  LOG_TAIL_MIN,
  MANIFEST_KINDS,
  REVISION_KINDS,
} from './kube-query.ts';

function required(name: string, rule: string) {
  return (issue: { input?: unknown }) =>
    issue.input === undefined ? `${name} is required` : `${name} ${rule}`;
}

const label = (name: string) =>
  z
    .string({ error: required(name, 'must be a DNS-1123 label') })
    .regex(DNS_LABEL, `${name} must be a DNS-1123 label`);

const subdomain = (name: string) =>
  z
    .string({ error: required(name, 'must be a DNS-1123 subdomain') })
    .regex(DNS_SUBDOMAIN, `${name} must be a DNS-1123 subdomain`);

const kindOf = (kinds: readonly [string, ...string[]]) =>
  z.enum(kinds, {
    error: required('kind', `must be one of ${kinds.join(', ')}`),
  });

export const manifestQuerySchema = z.object({
  kind: kindOf(MANIFEST_KINDS),
  namespace: label('namespace'),
  name: subdomain('name'),
});

export const revisionsQuerySchema = z.object({
  kind: kindOf(REVISION_KINDS),
  namespace: label('namespace'),
  name: subdomain('name'),
});

const TAIL_RULE = `tail must be an integer from ${LOG_TAIL_MIN} to ${LOG_TAIL_MAX}`;

export const logsQuerySchema = z.object({
  namespace: label('namespace'),
  pod: subdomain('pod'),
  container: label('container').optional(),
  tail: z
    .string()
    .regex(/^[0-9]{1,3}$/, TAIL_RULE)
    .transform(Number)
    .refine((n) => n >= LOG_TAIL_MIN && n <= LOG_TAIL_MAX, TAIL_RULE)
    .optional(),
  previous: z
    .enum(['true', 'false'], { error: 'previous must be true or false' })
    .transform((v) => v === 'true')
    .optional(),
  since_time: z.iso
    .datetime({ offset: true, error: 'since_time must be an RFC 3339 time' })
    .optional(),
});

export type ManifestQuery = z.output<typeof manifestQuerySchema>;
export type RevisionsQuery = z.output<typeof revisionsQuerySchema>;
export type LogsQuery = z.output<typeof logsQuerySchema>;

/** The lines a logs read asks for: a follow always reads the maximum. */
export function tailOf(query: LogsQuery): number {
  if (query.since_time !== undefined) return LOG_TAIL_MAX;
  return query.tail ?? LOG_TAIL_DEFAULT;
}
