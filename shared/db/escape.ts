/**
 * Quoting for the few statements that take no `$n` parameters (CREATE ROLE,
 * GRANT, ALTER ROLE ... PASSWORD): names through `quoteIdentifier`, values
 * through `quoteLiteral`, both pg's own escaping. Every other statement
 * passes its values as parameters.
 */
import pg from 'pg';

/** `inventory_sync` → `"inventory_sync"`; embedded quotes are doubled. */
export function quoteIdentifier(name: string): string {
  return pg.escapeIdentifier(name);
}

/** A string literal, backslashes and quotes escaped (`E'...'` when needed). */
export function quoteLiteral(value: string): string {
  return pg.escapeLiteral(value);
}
