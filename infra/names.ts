/**
 * Physical names of the functions, spelled once. The stacks name their
 * functions with these, and the dashboard finds their metrics by the same
 * names, so adding a route adds its widgets without any cross-stack export.
 */
import type { RouteDefinition } from '../shared/http/routes.ts';

const MAX_FUNCTION_NAME = 64;

function checked(name: string): string {
  if (name.length > MAX_FUNCTION_NAME) {
    throw new Error(
      `function name ${name} is longer than ${MAX_FUNCTION_NAME} characters`,
    );
  }
  return name;
}

export function functionNames(prefix: string) {
  return {
    sync: checked(`${prefix}-sync`),
    migrate: checked(`${prefix}-migrate`),
    admin: checked(`${prefix}-admin`),
    staleClusters: checked(`${prefix}-sweep-stale-clusters`),
    eventRetention: checked(`${prefix}-sweep-event-retention`),
    api: (route: RouteDefinition) => checked(`${prefix}-api-${route.name}`),
  };
}

/** `list-node-pods` → `ListNodePods`: a route's construct id. */
export function routeId(route: RouteDefinition): string {
  return route.name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
