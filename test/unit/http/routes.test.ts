/**
 * The route table's shape (shared/http/routes.ts): every entry a constant
 * of its own, listed in `routes`, with the entry file that passes it to
 * apiHandler; and `routeQuery`, which loads an entry's query once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fromRoot } from '../../../infra/paths.ts';
import { NO_PARAMETERS, type RouteQuery } from '../../../shared/http/query.ts';
import * as table from '../../../shared/http/routes.ts';
import {
  type RouteDefinition,
  routeQuery,
  routes,
} from '../../../shared/http/routes.ts';

/** `list-cluster-changes` → `listClusterChangesRoute`. */
const constantOf = (name: string) =>
  `${name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())}Route`;

describe('the route table', () => {
  it('lists every entry constant once, each named after its route', () => {
    // Assess
    const entries = Object.entries(table).filter(([key]) =>
      key.endsWith('Route'),
    );
    expect(entries.length).toBeGreaterThan(0);
    expect(new Set(routes).size).toBe(routes.length);
    const byName = (a: RouteDefinition, b: RouteDefinition) =>
      a.name.localeCompare(b.name);
    expect(
      entries.map(([, entry]) => entry as RouteDefinition).sort(byName),
    ).toEqual([...routes].sort(byName));
    for (const [key, entry] of entries) {
      expect(key).toBe(constantOf((entry as RouteDefinition).name));
    }
  });

  it('has an entry file per route, which hands apiHandler its own entry', () => {
    // Assess
    const files = readdirSync(fromRoot('functions/api')).filter((file) =>
      file.endsWith('.ts'),
    );
    expect(files.sort()).toEqual(
      routes.map((route) => `${route.name}.ts`).sort(),
    );
    for (const route of routes) {
      const text = readFileSync(
        fromRoot(`functions/api/${route.name}.ts`),
        'utf8',
      );
      expect(text, route.name).toMatch(
        new RegExp(`apiHandler\\(\\s*${constantOf(route.name)},`),
      );
    }
  });
});

/** A public entry of no consequence whose query `load` loads. */
function entryLoading(load: () => Promise<RouteQuery>): RouteDefinition {
  return {
    name: 'probe',
    method: 'GET',
    path: '/probe',
    summary: 'A probe',
    access: { shape: 'public', authenticatedBy: 'nothing' },
    query: load,
  };
}

describe('routeQuery', () => {
  it('loads an entry’s query once and keeps it', async () => {
    // Prepare
    let loads = 0;
    const entry = entryLoading(async () => {
      loads++;
      return NO_PARAMETERS;
    });

    // Act
    const [first, second] = await Promise.all([
      routeQuery(entry),
      routeQuery(entry),
    ]);
    const third = await routeQuery(entry);

    // Assess
    expect(loads).toBe(1);
    expect(first).toBe(NO_PARAMETERS);
    expect(second).toBe(first);
    expect(third).toBe(first);
  });

  it('tries a load that failed again on the next call', async () => {
    // Prepare
    let loads = 0;
    const entry = entryLoading(async () => {
      loads++;
      if (loads === 1) throw new Error('the module could not be loaded');
      return NO_PARAMETERS;
    });

    // Act
    const failed = routeQuery(entry);

    // Assess
    await expect(failed).rejects.toThrow('the module could not be loaded');
    await expect(routeQuery(entry)).resolves.toBe(NO_PARAMETERS);
    expect(loads).toBe(2);
  });
});
