/**
 * Tenant isolation, generated from the route table: every route × every kind
 * of caller → the status (and, for the cluster lists, exactly which clusters)
 * the spec's "Permissions" and "Environment-scoped grants" sections give.
 * A route added to the table without an entry in ROUTE_KINDS fails here.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Permission } from '../../../shared/auth/permissions.ts';
import { ROLES, type Role, roleHas } from '../../../shared/auth/roles.ts';
import {
  type AccessShape,
  permissionsOf,
  type ResolvedRoute,
  resolvedRoutes,
} from '../../../shared/http/routes.ts';
import { setMetricsStore } from '../../../shared/metrics/context.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import {
  buildWorld,
  callerEmail,
  type GrantScenario,
  pathValuesOf,
  type World,
} from '../../helpers/api-world.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

/**
 * Routes whose handlers are being written elsewhere. A pending route whose
 * handler file exists is driven like any other (and listed as such below):
 * remove it from this set once it lands.
 */
/** The table as any entry may be (its own types name only today's routes), queries loaded. */
const routes: readonly ResolvedRoute[] = await resolvedRoutes();

const PENDING_ROUTES: ReadonlySet<string> = new Set<string>([]);

/**
 * The route table's access shapes (shared/http/routes.ts) decide the
 * expectations: a route whose entry has no access data, or a shape this
 * matrix does not know, fails here.
 */
type RouteKind = AccessShape;

function kindOf(route: {
  name: string;
  access?: { shape?: string };
}): RouteKind {
  const shape = route.access?.shape;
  if (shape === undefined || !Object.hasOwn(BY_KIND, shape)) {
    throw new Error(`${route.name} has no access data in the route table`);
  }
  return shape as RouteKind;
}

const SCENARIOS = [
  'no token',
  'bad token',
  'no grant',
  'other client',
  'sibling environment',
  'this environment',
  'client-wide',
  'without permission',
] as const;
type Scenario = (typeof SCENARIOS)[number];

type WorldClusterName = keyof World;

interface Expected {
  status: number;
  /** For the cluster lists: exactly these of the world's clusters. */
  sees?: WorldClusterName[];
}

const BY_KIND: Record<RouteKind, Record<GrantScenario, Expected>> = {
  cluster: {
    'other client': { status: 404 },
    'sibling environment': { status: 404 },
    'this environment': { status: 200 },
    'client-wide': { status: 200 },
  },
  clusters: {
    'other client': { status: 200, sees: ['foreign'] },
    'sibling environment': { status: 200, sees: ['sibling'] },
    'this environment': { status: 200, sees: ['target'] },
    'client-wide': { status: 200, sees: ['target', 'sibling'] },
  },
  'client-clusters': {
    'other client': { status: 403 },
    'sibling environment': { status: 200, sees: ['sibling'] },
    'this environment': { status: 200, sees: ['target'] },
    'client-wide': { status: 200, sees: ['target', 'sibling'] },
  },
  'environment-clusters': {
    'other client': { status: 200, sees: [] },
    'sibling environment': { status: 200, sees: [] },
    'this environment': { status: 200, sees: ['target'] },
    'client-wide': { status: 200, sees: ['target'] },
  },
  gate: {
    'other client': { status: 200 },
    'sibling environment': { status: 200 },
    'this environment': { status: 200 },
    'client-wide': { status: 200 },
  },
  public: {
    'other client': { status: 200 },
    'sibling environment': { status: 200 },
    'this environment': { status: 200 },
    'client-wide': { status: 200 },
  },
};

/**
 * Gate routes that read one object by id: the id names a row inside the
 * caller's scope (200) or nothing (404), as a cluster route's cluster does.
 */
const SCOPED_OBJECT_ROUTES: Readonly<
  Record<string, Record<GrantScenario, Expected>>
> = {
  'get-host': BY_KIND.cluster,
};

/** The least role holding one of the route's permissions. */
function grantedRole(permissions: readonly Permission[]): Role {
  // A public route asks for none: any caller will do.
  if (permissions.length === 0) return 'viewer';
  const role = ROLES.find((r) => permissions.some((p) => roleHas(r, p)));
  if (!role) throw new Error(`no role holds ${permissions.join(', ')}`);
  return role;
}

/** The greatest role holding none of them, if any role lacks them all. */
function roleWithout(permissions: readonly Permission[]): Role | undefined {
  return [...ROLES]
    .reverse()
    .find((r) => !permissions.some((p) => roleHas(r, p)));
}

function expectedFor(
  route: ResolvedRoute,
  scenario: Scenario,
): Expected | undefined {
  const kind = kindOf(route);
  // No JWT is asked for: every caller is answered alike.
  if (kind === 'public') return { status: 200 };
  const permissions = permissionsOf(route.access);
  switch (scenario) {
    case 'no token':
    case 'bad token':
      return { status: 401 };
    case 'no grant':
      return { status: 403 };
    case 'without permission':
      // Undefined: every role holds the permission, so no caller can lack it.
      return roleWithout(permissions) ? { status: 403 } : undefined;
    default:
      return (SCOPED_OBJECT_ROUTES[route.name] ?? BY_KIND[kind])[scenario];
  }
}

/**
 * The live reads ask the cluster's agent once access passed: the matrix
 * sends them valid parameters, and the world's agents (no version reported)
 * are refused by the agent checks, 409 agent_too_old, without being asked.
 * The metrics route gets a valid range and, with no metrics store given to
 * this server, answers 503 metrics_not_configured once access passed.
 */
const PAST_ACCESS: Readonly<
  Record<string, { query: string; status: number; code: string }>
> = {
  'get-live-manifest': {
    query: '?kind=Deployment&namespace=shop&name=web',
    status: 409,
    code: 'agent_too_old',
  },
  'list-live-revisions': {
    query: '?kind=Deployment&namespace=shop&name=web',
    status: 409,
    code: 'agent_too_old',
  },
  'get-live-logs': {
    query: '?namespace=shop&pod=web-1',
    status: 409,
    code: 'agent_too_old',
  },
  'get-cluster-graph': {
    query: '?kind=Pod&namespace=shop&name=web-7d9f8b6c5d-x2k4p&depth=2',
    status: 200,
    code: '',
  },
  'get-cluster-metrics': {
    query: '?start=2026-05-01T10:00:00Z&end=2026-05-01T11:00:00Z',
    status: 503,
    code: 'metrics_not_configured',
  },
};

/** What `route` answers `scenario`, a live read past access included. */
function answerFor(
  route: ResolvedRoute,
  scenario: Scenario,
): Expected | undefined {
  const expected = expectedFor(route, scenario);
  const live = PAST_ACCESS[route.name];
  return live && expected?.status === 200 ? { status: live.status } : expected;
}

function hasHandler(route: ResolvedRoute): boolean {
  return existsSync(
    new URL(`../../../functions/api/${route.name}.ts`, import.meta.url),
  );
}

// The GET reads. The webhook route (a POST with no JWT, authenticated by
// its source's secret, every caller's tenant being the source's) is driven
// by test/integration/webhooks/: a wrong, missing or disabled secret and an
// unknown id are the same 401 there.
const driven = routes.filter(
  (route) =>
    route.method === 'GET' &&
    (!PENDING_ROUTES.has(route.name) || hasHandler(route)),
);

describe('tenant isolation', () => {
  let database: TestDatabase;
  let api: TestApi;
  let world: World;

  beforeAll(async () => {
    database = await createTestDatabase();
    world = await buildWorld(database.db);
    // No metrics store: the metrics route's answer past access is its 503.
    setMetricsStore(undefined);
    api = await startTestApi(database);
    const pending = [...PENDING_ROUTES];
    console.info(
      `PENDING_ROUTES (not driven): ${pending.filter((n) => !driven.some((r) => r.name === n)).join(', ') || 'none'}`,
    );
    const landed = pending.filter((n) => driven.some((r) => r.name === n));
    if (landed.length > 0) {
      console.info(
        `pending but handler present, driven anyway (remove from PENDING_ROUTES): ${landed.join(', ')}`,
      );
    }
  });
  afterAll(async () => {
    setMetricsStore('reset');
    await api?.close();
    await database?.drop();
  });

  function pathOf(
    route: ResolvedRoute,
    ids: Partial<Record<string, string>> = {},
  ) {
    const values: Partial<Record<string, string>> = {
      ...pathValuesOf(world.target),
      ...ids,
    };
    return route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = values[name];
      if (value === undefined)
        throw new Error(`no value for {${name}} in ${route.path}`);
      return value;
    });
  }

  async function tokenFor(route: ResolvedRoute, scenario: Scenario) {
    switch (scenario) {
      case 'no token':
        return undefined;
      case 'bad token':
        return api.foreignToken(callerEmail('client-wide', 'super_admin'));
      case 'no grant':
        return api.token(callerEmail('no grant', 'none'));
      case 'without permission': {
        const role = roleWithout(permissionsOf(route.access));
        return api.token(callerEmail('client-wide', role ?? 'viewer'));
      }
      default:
        return api.token(
          callerEmail(scenario, grantedRole(permissionsOf(route.access))),
        );
    }
  }

  it('has access data with a known shape for every route in the table', () => {
    // Assess
    for (const route of routes) {
      expect(() => kindOf(route), route.name).not.toThrow();
      if (route.access.shape !== 'public') {
        expect(permissionsOf(route.access).length, route.name).toBeGreaterThan(
          0,
        );
      }
    }
    for (const name of PENDING_ROUTES) {
      expect(routes.some((r) => r.name === name)).toBe(true);
    }
  });

  it('fails a route added without access data', () => {
    // Prepare
    const { access: _, ...withoutAccess } = routes[0]!;

    // Act & Assess
    expect(() => kindOf(withoutAccess)).toThrow('has no access data');
    expect(() =>
      kindOf({ ...withoutAccess, access: { shape: 'bogus' } }),
    ).toThrow('has no access data');
  });

  it('proves the permission scenario impossible where every role holds the permission', () => {
    // Assess
    for (const route of routes) {
      if (expectedFor(route, 'without permission') !== undefined) continue;
      if (route.access.shape === 'public') continue;
      const permissions = permissionsOf(route.access);
      for (const role of ROLES) {
        expect(permissions.some((p) => roleHas(role, p))).toBe(true);
      }
    }
  });

  for (const route of driven) {
    for (const scenario of SCENARIOS) {
      const expected = answerFor(route, scenario);
      if (!expected) continue;
      it(`${route.name}: ${scenario} → ${expected.status}`, async () => {
        // Prepare
        const token = await tokenFor(route, scenario);

        // Act
        const response = await api.get(
          `${pathOf(route)}${PAST_ACCESS[route.name]?.query ?? ''}`,
          token,
        );

        // Assess
        expect(response.status, JSON.stringify(response.body)).toBe(
          expected.status,
        );
        if (expected.status >= 400) {
          expect(response.body.error.code).toBe(
            {
              401: 'unauthorized',
              403: 'forbidden',
              404: 'not_found',
              409: PAST_ACCESS[route.name]?.code,
              503: PAST_ACCESS[route.name]?.code,
            }[expected.status],
          );
          return;
        }
        if (kindOf(route) === 'public') return;
        expect(response.body).toHaveProperty('data');
        if (expected.sees) {
          const ids = (response.body.data as { id: string }[])
            .map((c) => c.id)
            .sort();
          expect(ids).toEqual(
            expected.sees.map((name) => world[name].id).sort(),
          );
        }
        if (route.name === 'get-cluster') {
          expect(response.body.data.id).toBe(world.target.id);
        }
      });
    }
  }

  const clusterRoutes = driven.filter((r) => kindOf(r) === 'cluster');

  for (const route of clusterRoutes) {
    it(`${route.name}: a caller outside the cluster gets 404 even with invalid query parameters`, async () => {
      // Prepare
      const token = await api.token(
        callerEmail('sibling environment', 'super_admin'),
      );
      const query =
        '?page=0&per_page=abc&include=bogus&sort=bogus&sort=name&q=%00';

      // Act
      const response = await api.get(`${pathOf(route)}${query}`, token);

      // Assess
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    });

    it(`${route.name}: a malformed or unknown cluster id is a 404`, async () => {
      // Prepare
      const token = await api.token(callerEmail('client-wide', 'super_admin'));

      // Act
      const malformed = await api.get(
        pathOf(route, { clusterID: 'not-a-uuid' }),
        token,
      );
      const unknown = await api.get(
        pathOf(route, { clusterID: '00000000-0000-4000-8000-000000000000' }),
        token,
      );

      // Assess
      expect(malformed.status).toBe(404);
      expect(unknown.status).toBe(404);
    });
  }

  for (const route of clusterRoutes.filter((r) =>
    /\{(nodeID|workloadID)\}/.test(r.path),
  )) {
    it(`${route.name}: another cluster's child id under this cluster's path returns ${route.path.endsWith('/pods') ? 'no rows' : '404'}`, async () => {
      // Prepare: the caller sees both clusters of the client.
      const token = await api.token(callerEmail('client-wide', 'viewer'));
      const path = pathOf(route, {
        nodeID: world.sibling.nodeId,
        workloadID: world.sibling.workloadId,
      });

      // Act
      const response = await api.get(path, token);

      // Assess: the pod lists filter by both ids (spec: no rows); the
      // single reads are 404.
      if (route.path.endsWith('/pods')) {
        expect(response.status).toBe(200);
        expect(response.body.data).toEqual([]);
        expect(response.body.meta.total).toBe(0);
      } else {
        expect(response.status).toBe(404);
      }
    });
  }
  for (const route of driven) {
    it(`${route.name}: an unknown parameter is a 400 ${route.query.unknownParam} naming it`, async () => {
      // Prepare: a caller who passes every access check of the route.
      const token =
        route.access.shape === 'public'
          ? undefined
          : await api.token(
              callerEmail(
                'client-wide',
                grantedRole(permissionsOf(route.access)),
              ),
            );

      // Act
      const response = await api.get(
        `${pathOf(route)}?no_such_filter=1`,
        token,
      );

      // Assess
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.code).toBe(route.query.unknownParam);
      expect(response.body.error.details).toEqual({ param: 'no_such_filter' });
      expect(response.body.error.message).toContain('no_such_filter');
    });
  }
});
