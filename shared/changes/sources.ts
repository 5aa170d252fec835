/**
 * What changed's sources and the permission that opens each: the route
 * table reads them for the route's access, so they live apart from the
 * read (shared/changes/what-changed.ts), which the route table loads only
 * when the route's query is asked for.
 */
import type { Permission } from '../auth/permissions.ts';

export const SOURCES = ['changes', 'deploys', 'events', 'alerts'] as const;
export type TimelineSource = (typeof SOURCES)[number];

export const SOURCE_PERMISSION = {
  changes: 'changes:read',
  deploys: 'changes:read',
  events: 'assets:read',
  alerts: 'alerts:read',
} as const satisfies Record<TimelineSource, Permission>;

/** The route table's sources: name → the permission that opens it. */
export const WHAT_CHANGED_SOURCES: Readonly<
  Record<TimelineSource, Permission>
> = SOURCE_PERMISSION;
