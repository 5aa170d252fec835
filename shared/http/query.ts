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
import { InvalidParamError, ValidationError } from '../errors.ts';
import * as z from '../zod.ts';

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

/** The spec's 400 codes for a parameter. */
export type ParamErrorCode = 'bad_request' | 'invalid_param';

/**
 * A route's parameters: one zod object over the values as received (each a
 * string), optionally piped into the shape the handler reads.
 */
export type QuerySchema =
  | z.ZodMiniObject
  | z.ZodMiniPipe<z.ZodMiniObject, z.ZodMiniType>;

/**
 * What a route table entry says about its query string. Every route has one
 * (NO_PARAMETERS when it takes none); readRouteQuery reads it.
 */
export interface RouteQuery<S extends QuerySchema = QuerySchema> {
  readonly schema: S;
  /** The spec's code for a parameter the route does not know. */
  readonly unknownParam: ParamErrorCode;
  /**
   * Parameters whose repeated or bad values are 400 `invalid_param` (the
   * resource lists' q and sort); the others' are `bad_request`.
   */
  readonly invalidParam?: readonly string[];
  /**
   * Parameters the route requires though its schema reads them as optional,
   * because the route refuses their absence itself, after rules that come
   * first (the metrics route: a filter its query does not take, then
   * `instant`, then a missing start or end). The API reference lists them
   * as required.
   */
  readonly requiredInHandler?: readonly string[];
}

/** A route that takes no parameter: any one is a 400 bad_request. */
export const NO_PARAMETERS = {
  schema: z.object({}),
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;

/** What a route's handler reads: its schema's output. */
export type QueryOf<Q extends RouteQuery> = z.output<Q['schema']>;

/** The parameter object of a schema (the input side of a pipe). */
export function parametersOf(schema: QuerySchema): z.ZodMiniObject {
  return schema instanceof z.ZodMiniPipe ? schema.def.in : schema;
}

/** A parameter name as this API spells its own: safe to name in a 400. */
const PLAIN_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

const ERROR_CLASSES: Record<ParamErrorCode, ParamErrorClass> = {
  bad_request: ValidationError,
  invalid_param: InvalidParamError,
};

/**
 * The one reader of a route's query string, run after the access checks:
 * an unknown parameter is refused (the route's `unknownParam` code, naming
 * it), then each known one is read once (repeated and invalid UTF-8
 * refused) and the schema validates them; the first failing parameter
 * names the 400.
 */
export function readRouteQuery<Q extends RouteQuery>(
  rawQueryString: string | undefined,
  spec: Q,
): QueryOf<Q> {
  return readParams(parseQueryString(rawQueryString), spec, {
    refuseUnknown: true,
  });
}

/**
 * readRouteQuery over parameters already split. Without `refuseUnknown`,
 * parameters the schema does not know are ignored (domain functions called
 * with a subset of a route's parameters).
 */
export function readParams<Q extends RouteQuery>(
  params: QueryParams,
  spec: Q,
  options: { refuseUnknown?: boolean } = {},
): QueryOf<Q> {
  const known = Object.keys(parametersOf(spec.schema).shape);
  if (options.refuseUnknown) {
    const unknown = Object.keys(params).find((name) => !known.includes(name));
    if (unknown !== undefined) {
      // Named only when it reads as a parameter name: any other is text
      // the caller chose (an RTL override, a NUL, SQL), not echoed back.
      const nameable = PLAIN_NAME.test(unknown);
      throw new ERROR_CLASSES[spec.unknownParam](
        nameable
          ? `unknown query parameter ${unknown}`
          : 'unknown query parameter',
        { details: nameable ? { param: unknown } : {} },
      );
    }
  }
  const values: Record<string, string> = {};
  for (const name of known) {
    const value = readValue(params, name, errorClassOf(name, spec));
    if (value !== undefined) values[name] = value;
  }
  return validateQuery(spec.schema, values, spec) as QueryOf<Q>;
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
  invalidParam?: readonly string[] | undefined;
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
 * The known parameters of a raw query string, each present at most once
 * and valid UTF-8 (readParams with a bare list of names).
 */
export function readQuery(
  rawQueryString: string | undefined,
  options: QueryOptions,
): Record<string, string> {
  const shape = Object.fromEntries(
    options.known.map((name) => [name, z.optional(z.string())]),
  );
  return readParams(
    parseQueryString(rawQueryString),
    {
      schema: z.object(shape),
      unknownParam: 'bad_request',
      invalidParam: options.invalidParam,
    },
    { refuseUnknown: options.rejectUnknown ?? false },
  ) as Record<string, string>;
}

/**
 * Validates parameter values already read against `schema`; the first
 * failing parameter names the 400 (`invalid_param` for those in
 * `options.invalidParam`, else `bad_request`). A custom issue's `params`
 * join the error's details (the sort's allowed keys, the search's reason).
 */
export function validateQuery<S extends QuerySchema>(
  schema: S,
  values: Readonly<Record<string, string | undefined>>,
  options: Pick<QueryOptions, 'invalidParam'> = {},
): z.output<S> {
  const result = schema.safeParse(values);
  if (result.success) return result.data as z.output<S>;
  const issue = result.error.issues[0];
  const param = String(issue?.path[0] ?? '');
  const message = issue?.message ?? 'invalid value';
  const extra =
    issue?.code === 'custom' && issue.params !== undefined ? issue.params : {};
  const ErrorClass = errorClassOf(param, options);
  // The schemas' messages name their parameter; a generic one gets it.
  throw new ErrorClass(
    message.startsWith(param) ? message : `${param}: ${message}`,
    { details: { param, ...extra } },
  );
}
