/**
 * Builds a statement's `$n` parameter list alongside its text, so optional
 * filters can be appended without counting placeholders by hand. Values only
 * ever travel as parameters, never in the text.
 */
export class SqlParams {
  readonly values: unknown[] = [];

  /** Appends `value` and returns its placeholder (`$n`). */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;

/**
 * A column reference written by code (`c.client_id`); refuses anything else
 * so a caller can never smuggle SQL in through a column name.
 */
export function column(name: string): string {
  if (!IDENTIFIER.test(name))
    throw new Error(`not a column reference: ${name}`);
  return name;
}
