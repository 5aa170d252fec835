import { describe, expect, it } from 'vitest';
import { InvalidParamError } from '../../../shared/errors.ts';
import {
  buildListQuery,
  columnsOf,
  type ListDefinition,
  orderClause,
  parseListQuery,
} from '../../../shared/inventory/list.ts';
import { LISTS, sortKeysOf } from '../../../shared/inventory/lists.ts';

const clusterId = '0b9f3c1e-3d7a-4f0e-9a51-2f6c8d1e4b7a';
const firstPage = { page: 1, perPage: 50, offset: 0 };

describe('list definitions', () => {
  it('name every column a search reads among its page key columns', () => {
    // Prepare: the identifiers in every expression the keys query reads.
    const identifiers = (sql: string) =>
      (sql.match(/[a-z_][a-z0-9_]*/g) ?? []).filter(
        (word) => !['coalesce', 'nulls', 'last'].includes(word),
      );
    const withKeys = Object.entries(LISTS).filter(
      ([, list]) => 'pageKeyColumns' in list,
    );

    // Act & Assess
    expect(withKeys.map(([name]) => name)).toEqual(['pods']);
    for (const [, list] of withKeys) {
      const definition = list as ListDefinition;
      const read = [
        ...Object.values(definition.sortKeys).flatMap((key) =>
          key.exprs.flatMap(identifiers),
        ),
        ...Object.values(definition.filters).map((filter) => filter.column),
        ...Object.values(definition.scopes ?? {}),
        ...definition.defaultOrder,
        ...(definition.searchKey === undefined
          ? ['namespace', 'name']
          : [definition.searchKey]),
        'namespace',
        'name',
        'id',
      ];
      expect(definition.pageKeyColumns).toEqual(
        expect.arrayContaining([...new Set(read)]),
      );
    }
  });

  it('allow exactly the spec sort keys for each list', () => {
    // Act & Assess
    expect({
      workloads: sortKeysOf('workloads'),
      pods: sortKeysOf('pods'),
      services: sortKeysOf('services'),
      ingresses: sortKeysOf('ingresses'),
      pvcs: sortKeysOf('pvcs'),
      jobs: sortKeysOf('jobs'),
      hpas: sortKeysOf('hpas'),
      'network-policies': sortKeysOf('network-policies'),
      'resource-quotas': sortKeysOf('resource-quotas'),
      'endpoint-slices': sortKeysOf('endpoint-slices'),
      events: sortKeysOf('events'),
    }).toEqual({
      workloads: ['name', 'namespace', 'kind', 'replicas', 'helm', 'age'],
      pods: [
        'name',
        'namespace',
        'phase',
        'ready',
        'restarts',
        'cpu',
        'memory',
        'node',
        'age',
      ],
      services: ['name', 'namespace', 'type', 'cluster_ip', 'endpoints', 'age'],
      ingresses: ['name', 'namespace', 'class', 'age'],
      pvcs: ['name', 'namespace', 'phase', 'storage_class', 'capacity', 'age'],
      jobs: [
        'name',
        'namespace',
        'kind',
        'schedule',
        'status',
        'completions',
        'age',
      ],
      hpas: ['name', 'namespace', 'target', 'min', 'max', 'current', 'age'],
      'network-policies': ['name', 'namespace', 'age'],
      'resource-quotas': ['name', 'namespace', 'age'],
      'endpoint-slices': [
        'name',
        'namespace',
        'address_type',
        'service',
        'age',
      ],
      events: [],
    });
  });

  it('never select the internal columns', () => {
    // Act
    const selected = Object.values(LISTS).map((list) => columnsOf(list.record));

    // Assess
    for (const columns of selected) {
      expect(columns).not.toMatch(/content_hash|spec_facts_hash|cluster_ip_v4/);
    }
  });
});

describe('orderClause', () => {
  it('keeps the usual order without a sort', () => {
    // Act & Assess
    expect(orderClause(LISTS.pods, undefined)).toBe('namespace, name, id');
    expect(orderClause(LISTS.workloads, undefined)).toBe(
      'namespace, kind, name, id',
    );
  });

  it('sorts nulls last in both directions and breaks ties by namespace, name, id', () => {
    // Act & Assess
    expect(
      orderClause(LISTS.pods, { key: 'restarts', descending: false }),
    ).toBe('restart_count asc nulls last, namespace, name, id');
    expect(orderClause(LISTS.pods, { key: 'restarts', descending: true })).toBe(
      'restart_count desc nulls last, namespace, name, id',
    );
  });

  it('sorts age ascending youngest first', () => {
    // Act & Assess
    expect(orderClause(LISTS.pods, { key: 'age', descending: false })).toBe(
      'coalesce(started_at, created_at) desc nulls last, namespace, name, id',
    );
    expect(orderClause(LISTS.workloads, { key: 'age', descending: true })).toBe(
      'created_at asc nulls last, namespace, name, id',
    );
  });

  it('refuses a key the definition does not know, as a second check', () => {
    // Act & Assess
    for (const key of ['bogus', 'constructor', 'toString', '__proto__']) {
      expect(() =>
        orderClause(LISTS.services, { key, descending: false }),
      ).toThrow(InvalidParamError);
    }
  });
});

describe('buildListQuery', () => {
  it('passes every request value as a parameter and leads with the cluster id', () => {
    // Prepare
    const input = parseListQuery(LISTS.pods, {
      q: "x' or 1=1 --",
      namespace: 'shop',
      phase: 'Running',
      sort: '-cpu',
      page: '2',
      per_page: '10',
    });

    // Act
    const statement = buildListQuery(LISTS.pods, clusterId, input);

    // Assess
    expect(statement.text).not.toContain("x'");
    const where =
      "where cluster_id = $1 and namespace = $2 and phase = $3 and search_key like lower($4) escape '\\'";
    // A search matches once (pods have a covering index for their keys).
    expect(statement.text).toContain(`id, phase, ready_containers`);
    expect(statement.text).toContain(`from k8s_pods ${where})`);
    expect(statement.text).toContain(
      'select count(*) as n from matched) total',
    );
    expect(statement.text).toContain(
      `from matched\n    order by cpu_requests_millicores desc nulls last, namespace, name, id\n    limit $5 offset $6`,
    );
    expect(statement.values).toEqual([
      clusterId,
      'shop',
      'Running',
      "%x' or 1=1 --%",
      10,
      10,
    ]);
  });

  it('counts straight from the table when nothing is searched', () => {
    // Act
    const statement = buildListQuery(
      LISTS.pods,
      clusterId,
      parseListQuery(LISTS.pods, { namespace: 'shop' }),
    );

    // Assess
    expect(statement.text).not.toContain('matched');
    expect(statement.text).toContain(
      'select count(*) as n from k8s_pods where cluster_id = $1 and namespace = $2) total',
    );
  });

  it('narrows a child read by the scope column', () => {
    // Prepare
    const input = {
      ...parseListQuery(LISTS.pods, {}),
      scope: { name: 'node', id: clusterId },
    };

    // Act
    const statement = buildListQuery(LISTS.pods, clusterId, input);

    // Assess
    expect(statement.text).toContain('where cluster_id = $1 and node_id = $2');
  });

  it('applies the events list its 24-hour window and newest-first order', () => {
    // Prepare
    const input = parseListQuery(LISTS.events, { type: 'Warning', q: 'x' });

    // Act
    const statement = buildListQuery(LISTS.events, clusterId, input);

    // Assess
    expect(statement.text).toContain(
      "where cluster_id = $1 and type = $2 and seen_at >= now() - interval '24 hours'",
    );
    expect(statement.text).toContain('order by seen_at desc, id');
    expect(statement.text).not.toContain('ilike');
  });

  it('refuses a filter or scope the definition does not have', () => {
    // Act & Assess
    expect(() =>
      buildListQuery(LISTS.services, clusterId, {
        filters: { phase: 'Running' },
        paging: firstPage,
      }),
    ).toThrow('unknown filter');
    expect(() =>
      buildListQuery(LISTS.services, clusterId, {
        filters: {},
        scope: { name: 'node', id: clusterId },
        paging: firstPage,
      }),
    ).toThrow('unknown scope');
  });
});
