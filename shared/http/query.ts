/**
 * Query-string reading shared by every handler.
 *
 * Parameters are read from `rawQueryString`: API Gateway's HTTP API
 * (payload 2.0) joins a repeated parameter's values with commas in
 * `queryStringParameters` (`?sort=name&sort=age` arrives as `"name,age"`),
 * which cannot be told from one value containing a comma. Reading the raw
 * string keeps every occurrence, so a repeated parameter is refused (400)
 * instead of one of its values silently used.
 *
 * Decoding follows the WHATWG URL standard (`URLSearchParams`): `+` is a
 * space, `%XX` escapes are bytes, and the bytes are decoded as UTF-8 with
 * every invalid sequence (a stray `%FF`, an encoded lone surrogate such as
 * `%ED%A0%80`) replaced by U+FFFD. A value holding U+FFFD is then refused as
 * invalid UTF-8 wherever it is read: no parameter of this API can hold one.
 */
import type { z } from 'zod';
import { InvalidParamError, ValidationError } from '../errors.ts';

/**
 * Query parameters by name. A value is a string, or every occurrence of a
 * repeated parameter in order (`{ sort: ['name', 'age'] }`).
 */
export type QueryParams = Readonly<
  Record<string, string | readonly string[] | undefined>
>;

/**
 * Splits a raw query string (without the leading `?`) into every
 * occurrence of every parameter, decoded.
 */
export function parseQueryString(
  raw: string | null | undefined,
): Record<string, string[]> {
  const params: Record<string, string[]> = Object.create(null);
  if (!raw) return params;
  for (const [name, value] of new URLSearchParams(raw)) {
    const values = params[name];
    if (values) values.push(value);
    else params[name] = [value];
  }
  return params;
}

const REPLACEMENT_CHARACTER = '\uFFFD';
const LONE_SURROGATE =
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether a decoded value came from invalid UTF-8: it holds U+FFFD (what the
 * decoding puts in its place) or a lone surrogate (for a caller that built
 * the string some other way).
 */
function isInvalidUtf8(value: string): boolean {
  return value.includes(REPLACEMENT_CHARACTER) || LONE_SURROGATE.test(value);
}

export type ParamErrorClass = typeof ValidationError | typeof InvalidParamError;

/**
 * The one value of a parameter, or undefined when absent. A repeated
 * parameter is ambiguous, so it is refused rather than one value picked;
 * then a value from invalid UTF-8. Both are `ErrorClass` errors naming the
 * parameter, with the reason (`repeated`, `invalid_utf8`).
 */
export function readValue(
  params: QueryParams,
  name: string,
  ErrorClass: ParamErrorClass,
): string | undefined {
  if (!Object.hasOwn(params, name)) return undefined;
  const values = params[name];
  if (values !== undefined && typeof values !== 'string' && values.length > 1) {
    throw new ErrorClass(`${name} may appear only once`, {
      details: { param: name, reason: 'repeated' },
    });
  }
  const value = typeof values === 'string' ? values : values?.[0];
  if (value !== undefined && isInvalidUtf8(value)) {
    throw new ErrorClass(`${name} is not valid UTF-8`, {
      details: { param: name, reason: 'invalid_utf8' },
    });
  }
  return value;
}

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

function errorClassOf(
  name: string,
  options: Pick<QueryOptions, 'invalidParam'>,
): ParamErrorClass {
  return options.invalidParam?.includes(name)
    ? InvalidParamError
    : ValidationError;
}

/**
 * The route's known parameters, each present at most once and valid UTF-8.
 */
export function readQuery(
  rawQueryString: string | undefined,
  options: QueryOptions,
): Record<string, string> {
  const params = parseQueryString(rawQueryString);
  if (options.rejectUnknown) {
    const unknown = Object.keys(params).find(
      (name) => !options.known.includes(name),
    );
    if (unknown !== undefined) {
      throw new ValidationError('unknown query parameter', {
        details: isInvalidUtf8(unknown) ? {} : { param: unknown },
      });
    }
  }
  const values: Record<string, string> = {};
  for (const name of options.known) {
    const value = readValue(params, name, errorClassOf(name, options));
    if (value !== undefined) values[name] = value;
  }
  return values;
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
  return validateQuery(
    schema,
    readQuery(rawQueryString, queryOptions),
    queryOptions,
  );
}

/**
 * Validates parameter values already read against `schema`; the first
 * failing parameter names the 400 (`invalid_param` for those in
 * `options.invalidParam`, else `bad_request`).
 */
export function validateQuery<S extends z.ZodObject>(
  schema: S,
  values: Readonly<Record<string, string | undefined>>,
  options: Pick<QueryOptions, 'invalidParam'> = {},
): z.output<S> {
  const result = schema.safeParse(values);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = String(issue?.path[0] ?? '');
  const message = issue?.message ?? 'invalid value';
  const ErrorClass = errorClassOf(param, options);
  // The schemas' messages name their parameter; a generic one gets it.
  throw new ErrorClass(
    message.startsWith(param) ? message : `${param}: ${message}`,
    { details: { param } },
  );
}
