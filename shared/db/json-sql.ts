/**
 * SQL that writes the API's JSON, for the reads whose response PostgreSQL
 * renders (the inventory lists, the clusters list): Node then splices the
 * text into the body instead of parsing rows and serializing them again.
 * Keys come from code, never from a request.
 */

/**
 * A timestamptz as Date.prototype.toISOString writes it: UTC, milliseconds,
 * "Z". to_char truncates the microseconds, as the driver's Date does; null
 * stays null.
 */
export function isoTimestamp(sql: string): string {
  return `to_char(${sql} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * A JSON object of these keys, in this order, each with its SQL value (which
 * may refer to the enclosing query's rows). row_to_json writes it compact,
 * where json_build_object would write `"key" : value`.
 */
export function jsonObject(
  fields: ReadonlyArray<readonly [key: string, sql: string]>,
): string {
  const columns = fields.map(([key, sql]) => `${sql} as "${key}"`).join(', ');
  return `(select row_to_json(o) from (select ${columns}) o)`;
}
