/**
 * COPY's text format for a kind's changed rows: the same values the upsert
 * reads from the rows' JSON, one tab-separated line per row, sent in
 * chunks as they are built.
 */
import {
  type DbRow,
  KINDS,
  type KindDefinition,
  type KindKey,
  type Link,
} from './kinds.ts';
import { copyColumns } from './repo.ts';
import { type ChangedRow, NUL_ESCAPE, tableRow } from './table-rows.ts';

/**
 * About how much COPY text (in UTF-16 code units) is sent at once. Small
 * enough that the server starts on the first rows within a millisecond of
 * the first being mapped, instead of idling through a whole chunk's
 * mapping (500 of a large cluster's workloads took ~20 ms to map); large
 * enough that a chunk's write and pause cost nothing beside it.
 */
const COPY_CHUNK_CHARS = 64 * 1024;

const COPY_SPECIAL = /[\\\t\n\r\0]/;
const COPY_SPECIALS = /[\\\t\n\r\0]/g;
const COPY_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\0': '', // PostgreSQL text cannot hold NUL: dropped, as rowsJson does
};

function copyText(text: string): string {
  return COPY_SPECIAL.test(text)
    ? text.replace(COPY_SPECIALS, (c) => COPY_ESCAPES[c] ?? c)
    : text;
}

/**
 * One value in COPY's text format, as the upsert's jsonb_populate_recordset
 * reads the same value from the row's JSON: null as \N, a string as its
 * text, an object or array as its JSON (every jsonb column's value), other
 * scalars as JSON writes them.
 */
function copyValue(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'string') return copyText(value);
  if (typeof value === 'object') {
    // JSON spells tab, newline, CR and NUL as escapes: only its
    // backslashes need COPY's escape (NUL's escape dropped first).
    let json = JSON.stringify(value);
    if (!json.includes('\\')) return json;
    if (json.includes('\\u0000')) json = json.replace(NUL_ESCAPE, '');
    return json.replaceAll('\\', '\\\\');
  }
  return String(value);
}

/** Ids of a copied row's link targets, by their names (listLinkIds). */
export type LinkIds = Map<Link, Map<string, string>>;

/** A string as itself, anything else as no key (module level: per row). */
function keyText(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function linkKey(link: Link, row: DbRow): string | undefined {
  if (link === 'namespace') return keyText(row.namespace);
  if (link === 'node') return keyText(row.node_name);
  const kind = keyText(row.workload_kind);
  const namespace = keyText(row.namespace);
  const name = keyText(row.workload_name);
  return kind === undefined || namespace === undefined || name === undefined
    ? undefined
    : `${kind}\u0001${namespace}\u0001${name}`;
}

/**
 * COPY text of the changed rows, about COPY_CHUNK_CHARS at a time, in
 * copyColumns' order: links resolved from `links` (the ids of the rows
 * they point to, written earlier in this sync).
 */
export function* copyChunks(
  kind: KindKey,
  clusterId: string,
  changed: readonly ChangedRow[],
  links: LinkIds,
): Generator<string> {
  const def = KINDS[kind] as KindDefinition;
  const columns = copyColumns(kind).slice(1 + def.links.length);
  let text = '';
  for (const entry of changed) {
    const mapped = tableRow(def, entry);
    let line = clusterId;
    for (const link of def.links) {
      const key = linkKey(link, mapped);
      const id = key === undefined ? undefined : links.get(link)?.get(key);
      line += `\t${id ?? '\\N'}`;
    }
    for (const column of columns) line += `\t${copyValue(mapped[column])}`;
    text += `${line}\n`;
    if (text.length >= COPY_CHUNK_CHARS) {
      yield text;
      text = '';
    }
  }
  if (text !== '') yield text;
}
