/**
 * The change routes' parameters, as received (strings). The change feed:
 * filters, a window and paging (default 50 per page, larger than 200
 * clamped to 200). What changed: a workload or namespace and a window.
 * Their cross rules and defaults are feed.ts's changeFeedQueryOf and
 * what-changed.ts's whatChangedQuery. Every error, an unknown parameter
 * included, is 400 bad_request.
 */

import { WORKLOAD_KINDS } from '../events/workload-match.ts';
import {
  kindField,
  namespaceField,
  objectNameField,
  oneOfField,
  patternField,
  timeField,
  uuidField,
} from '../http/fields.ts';
import { type PagingRule, pagingFields } from '../http/paging.ts';
import type { RouteQuery } from '../http/query.ts';
import * as z from '../zod.ts';

const EVENT_TYPE = /^[a-z][a-z0-9_]{0,63}$/;
const SOURCE = /^[a-z][a-z0-9:_-]{0,63}$/;

export const CHANGES_PAGING: PagingRule = {
  defaultPerPage: 50,
  maxPerPage: 200,
};

const feedSchema = z.object({
  cluster_id: z.optional(uuidField('cluster_id')),
  namespace: z.optional(namespaceField()),
  workload: z.optional(objectNameField('workload')),
  kind: z.optional(kindField()),
  event_type: z.optional(
    patternField(
      'event_type',
      EVENT_TYPE,
      'an event type such as workload_changed',
    ),
  ),
  source: z.optional(
    patternField('source', SOURCE, 'a source such as k8s-config'),
  ),
  from: z.optional(timeField('from')),
  to: z.optional(timeField('to')),
  ...pagingFields(CHANGES_PAGING),
});

/** The route table's query of the feed: every error is 400 bad_request. */
export const changeFeedQuery = {
  schema: feedSchema,
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;

export type ChangeFeedParameters = z.output<typeof feedSchema>;

/** What changed's parameters as received (each once, none empty). */
export const whatChangedParams = z.object({
  namespace: z.optional(namespaceField()),
  workload: z.optional(objectNameField('workload')),
  kind: z.optional(oneOfField('kind', WORKLOAD_KINDS)),
  from: z.optional(timeField('from')),
  to: z.optional(timeField('to')),
});

export type WhatChangedParameters = z.output<typeof whatChangedParams>;

/** The route table's query entry of what changed. */
export const whatChangedRouteQuery = {
  schema: whatChangedParams,
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;
