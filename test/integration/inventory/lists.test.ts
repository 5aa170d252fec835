/**
 * The ten searchable lists against PostgreSQL: every search, sort, filter
 * and paging rule of "Search and sort on the resource lists", run on each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../../../shared/db/pool.ts';
import {
  parseQueryString,
  type QueryParams,
} from '../../../shared/http/query.ts';
import {
  columnsOf,
  type ListDefinition,
  type ListPage,
} from '../../../shared/inventory/list.ts';
import {
  LISTS,
  type ListName,
  listEndpointSlices,
  listHpas,
  listIngresses,
  listJobs,
  listNetworkPolicies,
  listPods,
  listPvcs,
  listResourceQuotas,
  listServices,
  listWorkloads,
  sortKeysOf,
} from '../../../shared/inventory/lists.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import {
  createCluster,
  createTenant,
  type InventoryTable,
  insertRows,
  ipv4Number,
  type RowValues,
} from './seed.ts';

type ApiRecord = { id: string; namespace: string; name: string } & Record<
  string,
  unknown
>;
type Lister = (
  db: Queryable,
  clusterId: string,
  params: QueryParams,
) => Promise<ListPage<ApiRecord>>;
type SortValue = (record: ApiRecord) => Array<string | number | null>;

interface ListCase {
  list: Exclude<ListName, 'events'>;
  table: InventoryTable;
  run: Lister;
  /** Columns the table requires beyond namespace and name. */
  required?: (i: number) => RowValues;
  /** Values for the sortable columns of row i, nulls and ties included. */
  row: (i: number) => RowValues;
  /** What each sort key compares, read from the returned record. */
  keys: Record<string, { value: SortValue; inverted?: boolean }>;
  /** The usual order's leading fields, before id. */
  usualOrder: readonly string[];
}

const ROWS = 12;
const NAMESPACES = ['alpha', 'beta', 'gamma'] as const;
const LETTERS = ['x', 'y', 'z'] as const;

function pick<T>(values: readonly T[], i: number): T {
  return values[i % values.length]!;
}
/** A small number with ties, null for every `nullEvery`-th row. */
function number(i: number, nullEvery: number, factor = 7): number | null {
  return i % nullEvery === 0 ? null : (i * factor) % 5;
}
function letter(i: number, nullEvery: number): string | null {
  return i % nullEvery === 0 ? null : pick(LETTERS, i);
}
function day(n: number): Date {
  return new Date(Date.UTC(2026, 0, 1 + n));
}
function time(value: unknown): number | null {
  return typeof value === 'string' ? Date.parse(value) : null;
}
function field(name: string): SortValue {
  return (record) => [(record[name] ?? null) as string | number | null];
}

const byName = { value: field('name') };
const byNamespace = { value: field('namespace') };
const byAge = {
  value: (record: ApiRecord) => [time(record.created_at)],
  inverted: true,
};
const usual = ['namespace', 'name'] as const;

const CASES: ListCase[] = [
  {
    list: 'workloads',
    table: 'k8s_workloads',
    run: listWorkloads,
    required: (i) => ({ kind: pick(['Deployment', 'StatefulSet'], i) }),
    row: (i) => ({
      replicas_desired: number(i, 4),
      helm_release: letter(i, 5),
    }),
    keys: {
      name: byName,
      namespace: byNamespace,
      kind: { value: field('kind') },
      replicas: { value: field('replicas_desired') },
      helm: { value: field('helm_release') },
      age: byAge,
    },
    usualOrder: ['namespace', 'kind', 'name'],
  },
  {
    list: 'pods',
    table: 'k8s_pods',
    run: listPods,
    row: (i) => ({
      phase: i % 5 === 0 ? null : pick(['Running', 'Pending', 'Failed'], i),
      ready_containers: number(i, 4),
      restart_count: number(i, 3, 3),
      cpu_requests_millicores: number(i, 4, 11),
      memory_requests_bytes: number(i, 6, 13),
      node_name: letter(i, 4),
      started_at: i % 3 === 0 ? null : day(10 + (i % 4)),
    }),
    keys: {
      name: byName,
      namespace: byNamespace,
      phase: { value: field('phase') },
      ready: { value: field('ready_containers') },
      restarts: { value: field('restart_count') },
      cpu: { value: field('cpu_requests_millicores') },
      memory: { value: field('memory_requests_bytes') },
      node: { value: field('node_name') },
      age: {
        value: (record) => [time(record.started_at) ?? time(record.created_at)],
        inverted: true,
      },
    },
    usualOrder: usual,
  },
  {
    list: 'services',
    table: 'k8s_services',
    run: listServices,
    row: (i) => ({
      type: letter(i, 5),
      cluster_ip: pick(
        [
          '10.0.0.10',
          '10.0.0.2',
          'None',
          '2001:db8::1',
          null,
          '9.255.0.1',
          '10.0.0.2',
        ],
        i,
      ),
      endpoint_count: number(i, 4),
    }),
    keys: {
      name: byName,
      namespace: byNamespace,
      type: { value: field('type') },
      cluster_ip: {
        value: (record) => {
          const ip = (record.cluster_ip ?? null) as string | null;
          const v4 = ipv4Number(ip);
          return [v4 !== null ? 0 : ip !== null ? 1 : null, v4, ip];
        },
      },
      endpoints: { value: field('endpoint_count') },
      age: byAge,
    },
    usualOrder: usual,
  },
  {
    list: 'ingresses',
    table: 'k8s_ingresses',
    run: listIngresses,
    row: (i) => ({ ingress_class: letter(i, 4) }),
    keys: {
      name: byName,
      namespace: byNamespace,
      class: { value: field('ingress_class') },
      age: byAge,
    },
    usualOrder: usual,
  },
  {
    list: 'pvcs',
    table: 'k8s_pvcs',
    run: listPvcs,
    row: (i) => ({
      phase: i % 5 === 0 ? null : pick(['Bound', 'Pending'], i),
      storage_class: letter(i, 4),
      capacity_bytes: number(i, 3) === null ? null : number(i, 3)! * 2 ** 33,
    }),
    keys: {
      name: byName,
      namespace: byNamespace,
      phase: { value: field('phase') },
      storage_class: { value: field('storage_class') },
      capacity: { value: field('capacity_bytes') },
      age: byAge,
    },
    usualOrder: usual,
  },
  {
    list: 'jobs',
    table: 'k8s_jobs',
    run: listJobs,
    required: (i) => ({ kind: pick(['Job', 'CronJob'], i) }),
    row: (i) => ({
      schedule: i % 2 === 0 ? null : pick(['*/5 * * * *', '0 1 * * *'], i),
      status: letter(i, 5),
      succeeded: number(i, 4),
    }),
    keys: {
      name: byName,
      namespace: byNamespace,
      kind: { value: field('kind') },
      schedule: { value: field('schedule') },
      status: { value: field('status') },
      completions: { value: field('succeeded') },
      age: byAge,
    },
    usualOrder: usual,
  },
  {
    list: 'hpas',
    table: 'k8s_hpas',
    run: listHpas,
    row: (i) => ({
      target_name: letter(i, 5),
      min_replicas: number(i, 4),
      max_replicas: number(i, 3, 3),
      current_replicas: number(i, 6, 2),
    }),
    keys: {
      name: byName,
      namespace: byNamespace,
      target: { value: field('target_name') },
      min: { value: field('min_replicas') },
      max: { value: field('max_replicas') },
      current: { value: field('current_replicas') },
      age: byAge,
    },
    usualOrder: usual,
  },
  {
    list: 'network-policies',
    table: 'k8s_network_policies',
    run: listNetworkPolicies,
    row: () => ({}),
    keys: { name: byName, namespace: byNamespace, age: byAge },
    usualOrder: usual,
  },
  {
    list: 'resource-quotas',
    table: 'k8s_resource_quotas',
    run: listResourceQuotas,
    row: () => ({}),
    keys: { name: byName, namespace: byNamespace, age: byAge },
    usualOrder: usual,
  },
  {
    list: 'endpoint-slices',
    table: 'k8s_endpoint_slices',
    run: listEndpointSlices,
    row: (i) => ({
      address_type: i % 4 === 0 ? null : pick(['IPv4', 'IPv6', 'FQDN'], i),
      service_name: letter(i, 5),
    }),
    keys: {
      name: byName,
      namespace: byNamespace,
      address_type: { value: field('address_type') },
      service: { value: field('service_name') },
      age: byAge,
    },
    usualOrder: usual,
  },
];

/** Row i of the sort fixture: 12 rows, 3 namespaces, names repeated. */
function sortRow(c: ListCase, i: number): RowValues {
  return {
    namespace: pick(NAMESPACES, i),
    name: `res-${'abcd'[Math.floor(i / 3)]}`,
    created_at: i % 6 === 5 ? null : day(i % 4),
    ...c.required?.(i),
    ...c.row(i),
  };
}

/** The search fixture: names and namespaces that probe escaping. */
const SEARCH_ROWS = [
  { namespace: 'shop', name: 'web-frontend' },
  { namespace: 'ops', name: 'web-api' },
  { namespace: 'misc', name: 'pct%name' },
  { namespace: 'misc', name: 'under_score' },
  { namespace: 'misc', name: 'back\\slash' },
  { namespace: 'beta-team', name: 'plain' },
] as const;

/** Rows whose case folding goes beyond ASCII, and a pair a match must not span. */
const FOLDING_ROWS = [
  { namespace: 'straße', name: 'ÄRGER-Über' },
  { namespace: 'ab', name: 'cd' },
] as const;

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareValues(
  a: Array<string | number | null>,
  b: Array<string | number | null>,
  descending: boolean,
): number {
  for (let k = 0; k < Math.max(a.length, b.length); k += 1) {
    const x = a[k] ?? null;
    const y = b[k] ?? null;
    if (x === null && y === null) continue;
    if (x === null) return 1;
    if (y === null) return -1;
    const order = x < y ? -1 : x > y ? 1 : 0;
    if (order !== 0) return descending ? -order : order;
  }
  return 0;
}

/** The spec's order, computed independently of the store. */
function expectedIds(
  records: readonly ApiRecord[],
  key: { value: SortValue; inverted?: boolean },
  descending: boolean,
): string[] {
  const valuesDescend = descending !== (key.inverted ?? false);
  return [...records]
    .sort(
      (a, b) =>
        compareValues(key.value(a), key.value(b), valuesDescend) ||
        compareText(a.namespace, b.namespace) ||
        compareText(a.name, b.name) ||
        compareText(a.id, b.id),
    )
    .map((record) => record.id);
}

function ids(page: ListPage<ApiRecord>): string[] {
  return page.data.parse().map((record) => record.id);
}
/** The page with its JSON parsed. */
function parsed<T>(page: ListPage<T>) {
  return { data: page.data.parse(), meta: page.meta };
}
function names(page: ListPage<ApiRecord>): string[] {
  return page.data
    .parse()
    .map((record) => record.name)
    .sort();
}

describe('inventory lists', () => {
  let database: TestDatabase;
  let db: Queryable;
  /** Holds the sort fixture of every list. */
  let sortCluster: string;
  /** Holds the search fixture of every list. */
  let searchCluster: string;
  /** Holds the case-folding fixture of every list. */
  let foldingCluster: string;
  /** Holds nothing. */
  let emptyCluster: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.db;
    const tenant = await createTenant(db);
    sortCluster = await createCluster(db, tenant);
    searchCluster = await createCluster(db, tenant);
    foldingCluster = await createCluster(db, tenant);
    emptyCluster = await createCluster(db, tenant);
    for (const c of CASES) {
      await insertRows(
        db,
        c.table,
        foldingCluster,
        FOLDING_ROWS.map((row, i) => ({ ...row, ...c.required?.(i) })),
      );
      const sortRows = Array.from({ length: ROWS }, (_, i) => sortRow(c, i));
      await insertRows(db, c.table, sortCluster, sortRows);
      const searchRows = SEARCH_ROWS.map((row, i) => ({
        ...row,
        ...c.required?.(i),
      }));
      await insertRows(db, c.table, searchCluster, searchRows);
    }
  });
  afterAll(async () => {
    await database.drop();
  });

  describe.each(CASES)('$list', (c) => {
    it('keeps the usual order without a sort', async () => {
      // Act
      const page = await c.run(db, sortCluster, { per_page: '500' });

      // Assess
      const expected = [...page.data.parse()]
        .sort(
          (a, b) =>
            c.usualOrder.reduce(
              (order, key) =>
                order || compareText(String(a[key]), String(b[key])),
              0,
            ) || compareText(a.id, b.id),
        )
        .map((record) => record.id);
      expect(ids(page)).toEqual(expected);
      expect(page.meta).toEqual({ total: ROWS, page: 1, per_page: 500 });
    });

    it('orders by every allowed key in both directions, nulls last, ties by namespace, name, id', async () => {
      // Prepare
      const all = (
        await c.run(db, sortCluster, { per_page: '500' })
      ).data.parse();
      expect(Object.keys(c.keys)).toEqual(sortKeysOf(c.list));

      for (const [name, key] of Object.entries(c.keys)) {
        for (const descending of [false, true]) {
          // Act
          const sort = `${descending ? '-' : ''}${name}`;
          const page = await c.run(db, sortCluster, { sort, per_page: '500' });

          // Assess
          expect(ids(page), sort).toEqual(expectedIds(all, key, descending));
          const last = page.data.parse().at(-1)!;
          const hasNull = all.some((r) => key.value(r)[0] === null);
          if (hasNull) expect(key.value(last)[0], sort).toBeNull();
        }
      }
    });

    it('pages without overlap under a sort with ties', async () => {
      // Prepare
      const firstKey = Object.keys(c.keys).at(-1)!;
      const sorts = [firstKey, `-${firstKey}`, 'namespace'];

      for (const sort of sorts) {
        // Act
        const pages = [];
        for (const page of ['1', '2', '3']) {
          pages.push(
            await c.run(db, sortCluster, { sort, page, per_page: '5' }),
          );
        }
        const whole = await c.run(db, sortCluster, { sort, per_page: '500' });

        // Assess
        expect(pages.flatMap(ids), sort).toEqual(ids(whole));
        expect(pages.map((p) => p.data.parse().length)).toEqual([5, 5, 2]);
        expect(pages.map((p) => p.meta.total)).toEqual([ROWS, ROWS, ROWS]);
      }
    });

    it('reports the total on a page past the end', async () => {
      // Act
      const page = await c.run(db, sortCluster, { page: '4', per_page: '5' });

      // Assess
      expect(parsed(page)).toEqual({
        data: [],
        meta: { total: ROWS, page: 4, per_page: 5 },
      });
    });

    it('matches q=% literally', async () => {
      // Act
      const page = await c.run(db, searchCluster, { q: '%' });

      // Assess
      expect(names(page)).toEqual(['pct%name']);
      expect(page.meta.total).toBe(1);
    });

    it('matches q=_ literally', async () => {
      // Act & Assess
      expect(names(await c.run(db, searchCluster, { q: '_' }))).toEqual([
        'under_score',
      ]);
    });

    it('matches a backslash literally', async () => {
      // Act & Assess
      expect(names(await c.run(db, searchCluster, { q: '\\' }))).toEqual([
        'back\\slash',
      ]);
    });

    it('trims q and matches name or namespace case-insensitively', async () => {
      // Act
      const byNameMatch = await c.run(db, searchCluster, { q: '  WEB ' });
      const byNamespaceMatch = await c.run(db, searchCluster, { q: 'ETA-T' });
      const both = await c.run(db, searchCluster, { q: 'p' });

      // Assess
      expect(names(byNameMatch)).toEqual(['web-api', 'web-frontend']);
      expect(names(byNamespaceMatch)).toEqual(['plain']);
      // "p" is in web-api, pct%name, plain, and in the namespaces shop, ops.
      expect(names(both)).toEqual([
        'pct%name',
        'plain',
        'web-api',
        'web-frontend',
      ]);
    });

    it('folds case as ILIKE does, beyond ASCII, and never matches across namespace and name', async () => {
      // Prepare: what `name ilike p or namespace ilike p` finds, in this
      // database's collation.
      const ilike = async (q: string) =>
        (
          await db.query<{ name: string }>(
            `select name from ${c.table}
              where cluster_id = $1
                and (name ilike $2 or namespace ilike $2)
              order by name`,
            [foldingCluster, `%${q}%`],
          )
        ).rows.map((row) => row.name);

      for (const q of ['äRGER', 'über', 'STRAßE', 'ab', 'cd', 'bcd', 'b c']) {
        // Act
        const found = names(await c.run(db, foldingCluster, { q }));

        // Assess
        expect(found, q).toEqual(await ilike(q));
      }
      expect(names(await c.run(db, foldingCluster, { q: 'äRGER' }))).toEqual([
        'ÄRGER-Über',
      ]);
      expect(names(await c.run(db, foldingCluster, { q: 'bcd' }))).toEqual([]);
    });

    it('narrows the namespace filter and never widens it', async () => {
      // Act
      const narrowed = await c.run(db, searchCluster, {
        namespace: 'shop',
        q: 'web',
      });
      const none = await c.run(db, searchCluster, {
        namespace: 'ops',
        q: 'frontend',
      });
      const namespaceOnly = await c.run(db, searchCluster, {
        namespace: 'misc',
        q: 'misc',
      });

      // Assess
      expect(names(narrowed)).toEqual(['web-frontend']);
      expect(none.data.parse()).toEqual([]);
      expect(none.meta.total).toBe(0);
      expect(names(namespaceOnly)).toHaveLength(3);
    });

    it.each([
      ['too long', { q: 'a'.repeat(101) }, 'too_long'],
      ['a control character', { q: 'web\u0000' }, 'control_character'],
      ['invalid UTF-8', parseQueryString('q=web%FF'), 'invalid_utf8'],
    ])('refuses a q that is %s', async (_, params, reason) => {
      // Act & Assess
      await expect(c.run(db, searchCluster, params)).rejects.toMatchObject({
        status: 400,
        code: 'invalid_param',
        details: { param: 'q', reason },
      });
    });

    it('refuses an unknown sort, listing the allowed keys', async () => {
      // Act
      const result = c.run(db, searchCluster, { sort: 'bogus' });

      // Assess
      await expect(result).rejects.toMatchObject({
        code: 'invalid_param',
        message: expect.stringContaining(sortKeysOf(c.list).join(', ')),
        details: { param: 'sort', allowed: sortKeysOf(c.list) },
      });
    });

    it.each(['q=web&q=api', 'sort=name&sort=age', 'sort=name&sort=name'])(
      'refuses the repeated parameter in %s',
      async (raw) => {
        // Act & Assess
        await expect(
          c.run(db, searchCluster, parseQueryString(raw)),
        ).rejects.toMatchObject({
          code: 'invalid_param',
          details: { reason: 'repeated' },
        });
      },
    );

    it('refuses a namespace filter that is not a DNS-1123 label', async () => {
      // Act & Assess
      await expect(
        c.run(db, searchCluster, { namespace: 'Not_A_Label' }),
      ).rejects.toMatchObject({
        code: 'bad_request',
        details: { param: 'namespace' },
      });
    });

    it("returns only the cluster's own rows", async () => {
      // Act
      const empty = await c.run(db, emptyCluster, {});
      const search = await c.run(db, searchCluster, { per_page: '500' });
      const sorted = await c.run(db, sortCluster, { per_page: '500' });

      // Assess
      expect(parsed(empty)).toEqual({
        data: [],
        meta: { total: 0, page: 1, per_page: 50 },
      });
      expect(search.meta.total).toBe(SEARCH_ROWS.length);
      expect(
        search.data.parse().every((r) => r.cluster_id === searchCluster),
      ).toBe(true);
      expect(
        sorted.data.parse().every((r) => r.cluster_id === sortCluster),
      ).toBe(true);
    });

    it('renders every record as its schema does, keys in order', async () => {
      // Prepare: the rows as Node renders them, through the record schema.
      const definition = LISTS[c.list] as ListDefinition;
      const stored = await db.query(
        `select ${columnsOf(definition.record)} from ${c.table}
          where cluster_id = $1`,
        [sortCluster],
      );
      const expected = new Map(
        stored.rows.map((row) => {
          const record = definition.record.parse(row) as ApiRecord;
          return [record.id, record];
        }),
      );

      // Act
      const page = await c.run(db, sortCluster, { per_page: '500' });

      // Assess: compact JSON (no fixture value holds `" : `).
      expect(page.data.text).not.toContain('" : ');
      const records = page.data.parse();
      expect(records).toHaveLength(expected.size);
      for (const record of records) {
        expect(record).toStrictEqual(expected.get(record.id));
        expect(Object.keys(record)).toEqual(
          Object.keys(definition.record.shape),
        );
      }
    });

    it('returns records without the internal columns', async () => {
      // Act
      const page = await c.run(db, sortCluster, { per_page: '1' });

      // Assess
      const record = page.data.parse()[0]!;
      expect(record).not.toHaveProperty('content_hash');
      expect(record).not.toHaveProperty('spec_facts_hash');
      expect(record).not.toHaveProperty('cluster_ip_v4');
      expect(record).not.toHaveProperty('search_key');
      expect(record).not.toHaveProperty('total_count');
      expect(record).toMatchObject({
        id: expect.any(String),
        cluster_id: sortCluster,
        namespace: expect.any(String),
        name: expect.any(String),
        labels: {},
      });
    });
  });
});
