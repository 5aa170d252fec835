/**
 * The UUID shape, in a module of its own so that whatever checks an id (the
 * configuration, a route's path, the inventory subject) imports a regular
 * expression and nothing else: an API function's cold start must not load
 * the wire module's schemas and scanner for one pattern.
 */

/** 8-4-4-4-12 hex, either case; the body and the subject lower-case it. */
export const UUID_PATTERN =
  /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
