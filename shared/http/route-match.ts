/**
 * Which route table entry a request is for, as API Gateway picks it: the
 * method and every segment must match, a `{param}` takes one non-empty
 * percent-decoded segment, and the template with the most literal segments
 * wins. The local server routes with it; tests use it to check an answer
 * against what its route documents.
 */
import { type RouteDefinition, routes } from './routes.ts';

interface CompiledRoute {
  route: RouteDefinition;
  segments: readonly string[];
  /** Literal segments count: the most specific template wins, as in API Gateway. */
  literals: number;
}

export interface RouteMatch {
  route: RouteDefinition;
  pathParameters: Record<string, string>;
}

function compileRoute(route: RouteDefinition): CompiledRoute {
  const segments = route.path.split('/').slice(1);
  return {
    route,
    segments,
    literals: segments.filter((s) => !s.startsWith('{')).length,
  };
}

const COMPILED_ROUTES = routes.map(compileRoute);

export function matchRoute(
  method: string,
  pathname: string,
): RouteMatch | undefined {
  const parts = pathname.split('/').slice(1);
  let best:
    | { entry: CompiledRoute; params: Record<string, string> }
    | undefined;
  for (const entry of COMPILED_ROUTES) {
    if (entry.route.method !== method) continue;
    if (entry.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const matched = entry.segments.every((segment, i) => {
      const part = parts[i] ?? '';
      if (segment.startsWith('{')) {
        const value = safeDecode(part);
        if (value === undefined || value === '') return false;
        params[segment.slice(1, -1)] = value;
        return true;
      }
      return segment === part;
    });
    if (matched && (!best || entry.literals > best.entry.literals)) {
      best = { entry, params };
    }
  }
  return best && { route: best.entry.route, pathParameters: best.params };
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
