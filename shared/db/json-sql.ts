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

/** json_build_object takes at most 100 arguments: 50 keys and their values. */
const MAX_KEYS = 50;

/** A JSON object of these keys, in this order, each with its SQL value. */
export function jsonObject(
  fields: ReadonlyArray<readonly [key: string, sql: string]>,
): string {
  if (fields.length > MAX_KEYS) {
    throw new Error(`a JSON object built in SQL has at most ${MAX_KEYS} keys`);
  }
  return `json_build_object(${fields.map(([key, sql]) => `'${key}', ${sql}`).join(', ')})`;
}
