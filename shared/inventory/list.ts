/**
 * Search, sort, filters and paging, implemented once for every inventory
 * list. A list is a {@link ListDefinition}: a row of constants naming its
 * table, its record schema (whose keys are the selected columns), its sort
 * keys and the SQL expressions behind them, its filters and their columns,
 * and its usual order. {@link runList} turns a definition and the caller's
 * parameters into one parameterized statement.
 *
 * Every identifier and SQL fragment comes from a definition; nothing from a
 * request is ever spliced into SQL: values travel as `$n` parameters, and a
 * sort key is looked up in the definition, which refuses a key it does not
 * know (a second check after the sort field's).
 */
import { isoTimestamp, jsonObject } from '../db/json-sql.ts';
import { SqlParams } from '../db/params.ts';
import { type Queryable, query } from '../db/pool.ts';
import {
  blankAsAbsent,
  kindField,
  type LabelSelector,
  labelSelectorField,
  namespaceField,
  oneOfField,
  type SortSpec,
  sortField,
  unknownSortKeyError,
} from '../http/fields.ts';
import {
  offsetOf,
  type Paging as PageRequest,
  type PagingRule,
  pagingFields,
  pagingOf,
} from '../http/paging.ts';
import {
  type QueryParams,
  type RouteQuery,
  readParams,
} from '../http/query.ts';
import { JsonText } from '../http/response.ts';
import { containsPattern, searchText } from '../http/search.ts';
import { isUuid } from '../patterns.ts';
import { sanitizeMessage } from '../sanitize/secrets.ts';
import * as z from '../zod.ts';
import { fieldRendering, sanitizedFields } from './records.ts';

/** What a sort key compares: SQL expressions over the list's table. */
export interface SortKey {
  /** Compared in order, each in the requested direction, nulls last. */
  readonly exprs: readonly string[];
  /**
   * The key ascends when its expressions descend: `age` is a timestamp, and
   * age ascending is youngest first.
   */
  readonly inverted?: boolean;
}

/**
 * per_page: 50 unless asked; above 500 it is clamped (as List Clusters
 * clamps its own maximum) and the clamped value is echoed in meta.per_page.
 */
const LIST_PAGING: PagingRule = { defaultPerPage: 50, maxPerPage: 500 };

/** The lists' q and sort: their errors are 400 invalid_param. */
const SEARCH_AND_SORT = ['q', 'sort'] as const;

/** page (default 1, at most MAX_PAGE) and per_page (default 50, clamped). */
const listPagingFields = pagingFields(LIST_PAGING);

export interface Paging extends PageRequest {
  offset: number;
}

/** The paging a list's parsed page and per_page ask for, with its offset. */
function listPagingOf(query: {
  page?: number | undefined;
  per_page?: number | undefined;
}): Paging {
  const paging = pagingOf(query, LIST_PAGING);
  return { ...paging, offset: offsetOf(paging) };
}

/**
 * A list filter's value rule: a zod field over the value as received (an
 * empty value is no filter), given the parameter's name.
 */
export type FilterField = (
  param: string,
) => z.ZodMiniType<string | undefined, string>;

export const namespaceFilter: FilterField = (param) =>
  blankAsAbsent(namespaceField(param));

export const kindFilter: FilterField = (param) =>
  blankAsAbsent(kindField(param));

export const oneOfFilter =
  (allowed: readonly string[]): FilterField =>
  (param) =>
    blankAsAbsent(oneOfField(param, allowed));

export interface ListFilter {
  /** The column compared for equality with the parameter's value. */
  readonly column: string;
  /** The value's rule. */
  readonly field: FilterField;
}

export interface ListDefinition<R extends z.ZodMiniObject = z.ZodMiniObject> {
  readonly table: string;
  /** The record; its keys are the columns selected, in order. */
  readonly record: R;
  /** q searches name and namespace (the ten resource lists). */
  readonly search: boolean;
  /**
   * A stored `lower(namespace) || E'\n' || lower(name)` (pods: migrations/
   * 0006): q is then one LIKE on it instead of two ILIKEs, which lowercase
   * both columns of every row they test. Both find the same rows.
   */
  readonly searchKey?: string;
  /** The sort allow-list: query key to what it compares. */
  readonly sortKeys: Readonly<Record<string, SortKey>>;
  /** Equality filters: query parameter to column. */
  readonly filters: Readonly<Record<string, ListFilter>>;
  /** ORDER BY items with no sort; the last ones make the order total. */
  readonly defaultOrder: readonly string[];
  /**
   * The list takes `labels` (a label selector on its `labels` column,
   * served by the table's GIN index on it).
   */
  readonly labels?: boolean;
  /** A fixed predicate every read of the list applies. */
  readonly where?: string;
  /** Child reads: scope name to the column holding the parent's id. */
  readonly scopes?: Readonly<Record<string, string>>;
  /**
   * The columns of a covering index holding every column the filters, sort
   * keys and tie-breaks read. A search then matches the cluster's rows once,
   * through that index, for both the total and the page.
   */
  readonly pageKeyColumns?: readonly string[];
}

/** Ties under a sort are broken by these, so pages never overlap. */
export const TIE_BREAK = ['namespace', 'name', 'id'] as const;

export interface ListMeta {
  total: number;
  page: number;
  per_page: number;
}

/** A page of records, rendered as JSON by PostgreSQL. */
export interface ListPage<T> {
  data: JsonText<T[]>;
  meta: ListMeta;
}

/** A child read's parent: the scope's name in the definition and its id. */
export interface ListScope {
  name: string;
  id: string;
}

export interface ListQuery {
  search?: string | undefined;
  sort?: SortSpec | undefined;
  /** Checked filter values by parameter name. */
  filters: Readonly<Record<string, string>>;
  labels?: LabelSelector | undefined;
  scope?: ListScope | undefined;
  paging: Paging;
}

export interface Statement {
  text: string;
  values: unknown[];
}

/**
 * The SELECT list for a record schema: its keys, in order, each a column of
 * the same name unless `expressions` gives the SQL that computes it.
 */
export function columnsOf(
  record: z.ZodMiniObject,
  expressions: Readonly<Record<string, string>> = {},
): string {
  return Object.keys(record.shape)
    .map((key) =>
      Object.hasOwn(expressions, key) ? `${expressions[key]} as ${key}` : key,
    )
    .join(', ');
}

interface RecordRendering {
  /**
   * SQL rendering one row of the list's table as the record's JSON object:
   * its keys in order, each the column of the same name, timestamps as
   * toISOString writes them.
   */
  json: string;
  /** Fields Node sanitizes after (runList). */
  sanitized: string[];
}

const renderings = new WeakMap<ListDefinition, RecordRendering>();

/** A list's rendering: the same for every read, so worked out once. */
function renderingOf(definition: ListDefinition): RecordRendering {
  let rendering = renderings.get(definition);
  if (rendering === undefined) {
    const { record, table } = definition;
    rendering = {
      json: jsonObject(
        Object.entries(record.shape).map(([key, field]) => {
          const column = `${table}.${key}`;
          return [
            key,
            fieldRendering(field) === 'timestamp'
              ? isoTimestamp(column)
              : column,
          ];
        }),
      ),
      sanitized: sanitizedFields(record),
    };
    renderings.set(definition, rendering);
  }
  return rendering;
}

/** The ORDER BY clause for a sort, or the list's usual order. */
export function orderClause(
  definition: ListDefinition,
  sort: SortSpec | undefined,
): string {
  if (sort === undefined) return definition.defaultOrder.join(', ');
  // Object.hasOwn: a key such as "constructor" is not a sort key.
  const key = Object.hasOwn(definition.sortKeys, sort.key)
    ? definition.sortKeys[sort.key]
    : undefined;
  if (key === undefined) {
    throw unknownSortKeyError(Object.keys(definition.sortKeys));
  }
  const direction =
    sort.descending !== (key.inverted ?? false) ? 'desc' : 'asc';
  return [
    ...key.exprs.map((expr) => `${expr} ${direction} nulls last`),
    ...TIE_BREAK,
  ].join(', ');
}

/**
 * One statement for a page and its total, so both come from one snapshot in
 * one round trip, each record rendered as JSON by PostgreSQL:
 *
 *   select page.data, total.n as total_count
 *   from (select count(*) ...) total
 *   left join lateral (
 *     select <record as JSON>::text as data, keys.position
 *     from (select id, row_number() over (order by O) as position
 *           ... order by O limit $a offset $b) keys
 *     join <table> on id = keys.id) page on true
 *   order by page.position
 *
 * The count runs on its own (an index-only scan when only the cluster and
 * indexed filters apply), so the page can stop after `limit` rows when an
 * index gives the order; a window count over the page query would read
 * every row of the cluster first. The page's keys are found first and its
 * rows read after, by id: a table with a covering index for its filters and
 * sort keys (pods) finds them without reading the cluster's wide rows, and
 * only the page's rows are fetched. PostgreSQL writes their JSON, so Node
 * neither parses nor serializes a row; it joins them (a json_agg would sort
 * the rendered records again). A page past the end still returns the total:
 * one row whose data is null.
 */
export function buildListQuery(
  definition: ListDefinition,
  clusterId: string,
  input: ListQuery,
): Statement {
  const params = new SqlParams();
  const where = [`cluster_id = ${params.add(clusterId)}`];
  for (const [param, value] of Object.entries(input.filters)) {
    const filter = Object.hasOwn(definition.filters, param)
      ? definition.filters[param]
      : undefined;
    if (filter === undefined) throw new Error(`unknown filter ${param}`);
    where.push(`${filter.column} = ${params.add(value)}`);
  }
  if (input.labels !== undefined) {
    if (!definition.labels) throw new Error('this list has no labels filter');
    const { equals, present } = input.labels;
    if (Object.keys(equals).length > 0) {
      where.push(`labels @> ${params.add(JSON.stringify(equals))}::jsonb`);
    }
    if (present.length > 0) {
      where.push(`labels ?& ${params.add(present)}::text[]`);
    }
  }
  if (input.scope !== undefined) {
    const scopes = definition.scopes ?? {};
    const column = Object.hasOwn(scopes, input.scope.name)
      ? scopes[input.scope.name]
      : undefined;
    if (column === undefined) {
      throw new Error(`unknown scope ${input.scope.name}`);
    }
    where.push(`${column} = ${params.add(input.scope.id)}`);
  }
  if (definition.where !== undefined) where.push(definition.where);
  if (input.search !== undefined) {
    if (!definition.search) throw new Error('this list has no search');
    const pattern = params.add(containsPattern(input.search));
    where.push(
      definition.searchKey === undefined
        ? `(name ilike ${pattern} escape '\\' or namespace ilike ${pattern} escape '\\')`
        : `${definition.searchKey} like lower(${pattern}) escape '\\'`,
    );
  }
  const from = `from ${definition.table} where ${where.join(' and ')}`;
  const order = orderClause(definition, input.sort);
  const limit = `limit ${params.add(input.paging.perPage)} offset ${params.add(input.paging.offset)}`;
  // With a covering index, a search's matches are found once and both the
  // total and the page read them.
  const matchOnce =
    input.search !== undefined && definition.pageKeyColumns !== undefined;
  const keysFrom = matchOnce ? 'from matched' : from;
  return {
    text: [
      ...(matchOnce
        ? [
            `with matched as materialized (select ${definition.pageKeyColumns?.join(', ')} ${from})`,
          ]
        : []),
      'select page.data, total.n as total_count',
      `from (select count(*) as n ${keysFrom}) total`,
      'left join lateral (',
      `  select ${renderingOf(definition).json}::text as data, keys.position`,
      '  from (',
      `    select id as page_id, row_number() over (order by ${order}) as position`,
      `    ${keysFrom}`,
      `    order by ${order}`,
      `    ${limit}`,
      '  ) keys',
      `  join ${definition.table} on ${definition.table}.id = keys.page_id`,
      ') page on true',
      'order by page.position',
    ].join('\n'),
    values: params.values,
  };
}

/**
 * The list's parameters as one schema, built from its definition: q and
 * sort (when the list has them), its filters, page and per_page, in that
 * order (the first failing one names the 400), piped into a ListQuery. An
 * empty filter value counts as absent, as an empty q or sort does. The route
 * table attaches it to every route that reads the list; an unknown
 * parameter is 400 invalid_param there, as a bad q or sort is.
 */
export function listQuery(definition: ListDefinition) {
  let spec = listQueries.get(definition);
  if (spec === undefined) {
    const sortKeys = Object.keys(definition.sortKeys);
    const filterFields = Object.fromEntries(
      Object.entries(definition.filters).map(([param, filter]) => [
        param,
        z.optional(filter.field(param)),
      ]),
    );
    const schema = z.pipe(
      z.object({
        // q: repeated and invalid UTF-8 are refused by the reader, then
        // checkSearchText's rules, each a 400 invalid_param saying which.
        ...(definition.search && {
          q: z.optional(searchText('q', { withReason: true })),
        }),
        ...(sortKeys.length > 0 && { sort: z.optional(sortField(sortKeys)) }),
        ...filterFields,
        ...(definition.labels && {
          labels: z.optional(labelSelectorField()),
        }),
        ...listPagingFields,
      }),
      z.transform((values): ListQuery => {
        const filters: Record<string, string> = {};
        for (const param of Object.keys(definition.filters)) {
          const value = (values as Record<string, unknown>)[param];
          if (typeof value === 'string') filters[param] = value;
        }
        const { q, sort, labels } = values as {
          q?: string;
          sort?: SortSpec;
          labels?: LabelSelector;
        };
        return {
          search: q,
          sort,
          filters,
          labels,
          paging: listPagingOf(values),
        };
      }),
    );
    spec = {
      schema,
      unknownParam: 'invalid_param',
      invalidParam: SEARCH_AND_SORT,
    };
    listQueries.set(definition, spec);
  }
  return spec;
}

type ListRouteQuery = RouteQuery<
  z.ZodMiniPipe<z.ZodMiniObject, z.ZodMiniTransform<ListQuery>>
>;

const listQueries = new WeakMap<ListDefinition, ListRouteQuery>();

/**
 * Reads and checks the list's parameters from values already split;
 * parameters the list does not know are ignored here (the route's reader
 * refuses them).
 */
export function parseListQuery(
  definition: ListDefinition,
  params: QueryParams,
): ListQuery {
  return readParams(params, listQuery(definition));
}

/**
 * One page of a list, for a cluster the caller was already allowed to read.
 * `scope` narrows it to one parent's children (a node's or a workload's
 * pods). The rows are filtered by the cluster id as well as the parent's, so
 * another cluster's parent, or an unknown one, has no rows here.
 */
export async function runList<R extends z.ZodMiniObject>(
  db: Queryable,
  definition: ListDefinition<R>,
  clusterId: string,
  params: QueryParams,
  scope?: ListScope,
): Promise<ListPage<z.output<R>>> {
  return readList(db, definition, clusterId, {
    ...parseListQuery(definition, params),
    scope,
  });
}

/** runList for parameters already read (a route's query). */
export async function readList<R extends z.ZodMiniObject>(
  db: Queryable,
  definition: ListDefinition<R>,
  clusterId: string,
  input: ListQuery,
): Promise<ListPage<z.output<R>>> {
  const { scope } = input;
  if (scope !== undefined && !isUuid(scope.id)) {
    // Names no row, as an unknown id does; the parameters were still checked.
    return { data: JsonText.array([]), meta: metaOf(0, input.paging) };
  }
  const statement = buildListQuery(definition, clusterId, input);
  const rows = await query<{ data: string | null; total_count: number }>(
    db,
    statement.text,
    statement.values,
  );
  const records = rows.flatMap((row) => (row.data === null ? [] : [row.data]));
  return {
    data: sanitize(
      renderingOf(definition).sanitized,
      JsonText.array<z.output<R>>(records),
    ),
    meta: metaOf(rows[0]?.total_count ?? 0, input.paging),
  };
}

function metaOf(total: number, paging: Paging): ListMeta {
  return { total, page: paging.page, per_page: paging.perPage };
}

/** The page with these fields of each record sanitized. */
function sanitize<T>(
  fields: readonly string[],
  page: JsonText<T[]>,
): JsonText<T[]> {
  if (fields.length === 0) return page;
  const records = JSON.parse(page.text) as Record<string, unknown>[];
  for (const item of records) {
    for (const field of fields) {
      const value = item[field];
      if (typeof value === 'string') item[field] = sanitizeMessage(value);
    }
  }
  return new JsonText(JSON.stringify(records));
}
