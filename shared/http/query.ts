/**
 * Query-string reading shared by every handler. API Gateway joins a repeated
 * parameter's values with commas in `queryStringParameters`, which cannot be
 * told from one value containing a comma, so parameters are read from
 * `rawQueryString`: a repeated parameter is refused (400) instead of silently
 * using one of its values.
 */
import type { z } from 'zod';
import { InvalidParamError, ValidationError } from '../errors.ts';

export interface QueryOptions {
  /** Parameters the route reads; others are ignored unless refused below. */
  known: readonly string[];
  /** Refuse parameters not in `known` (400 bad_request). */
  rejectUnknown?: boolean;
  /**
   * Parameters whose errors are 400 `invalid_param` rather than
   * `bad_request` (the spec's search and sort parameters, q and sort).
   */
  invalidParam?: readonly string[];
}

/**
 * The route's known parameters, each present at most once, decoded. A
 * malformed percent-encoding (or invalid UTF-8) in a known parameter is a 400.
 */
export function readQuery(
  rawQueryString: string | undefined,
  options: QueryOptions,
): Record<string, string> {
  const known = new Set(options.known);
  const values: Record<string, string> = {};
  const seen = new Set<string>();
  for (const pair of (rawQueryString ?? '').split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const rawValue = eq === -1 ? '' : pair.slice(eq + 1);
    const name = decode(rawName);
    if (name === undefined || !known.has(name)) {
      if (options.rejectUnknown) {
        throw new ValidationError('unknown query parameter', {
          details: name === undefined ? {} : { param: name },
        });
      }
      continue;
    }
    const fail = errorFor(name, options);
    if (seen.has(name)) {
      throw fail(`query parameter ${name} may appear only once`);
    }
    seen.add(name);
    const value = decode(rawValue);
    if (value === undefined) {
      throw fail(`query parameter ${name} is not valid UTF-8`);
    }
    values[name] = value;
  }
  return values;
}

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

function errorFor(name: string, options: QueryOptions) {
  const invalidParam = options.invalidParam?.includes(name) ?? false;
  return (message: string) =>
    invalidParam
      ? new InvalidParamError(message, { details: { param: name } })
      : new ValidationError(message, { details: { param: name } });
}

/**
 * Reads the known parameters of `schema` and validates them; the first
 * failing parameter names the 400.
 */
export function parseQuery<S extends z.ZodObject>(
  rawQueryString: string | undefined,
  schema: S,
  options: Omit<QueryOptions, 'known'> = {},
): z.output<S> {
  const queryOptions = { ...options, known: Object.keys(schema.shape) };
  const values = readQuery(rawQueryString, queryOptions);
  const result = schema.safeParse(values);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = String(issue?.path[0] ?? '');
  throw errorFor(
    param,
    queryOptions,
  )(`${param}: ${issue?.message ?? 'invalid value'}`);
}
