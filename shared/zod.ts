/**
 * zod as the API functions, and everything they load, write their schemas
 * (`import * as z from '<path>/zod.ts'`): zod/mini, the same schemas,
 * parsing and issues as the classic `zod` API (one core), with each method
 * a function (`z.optional(s)` for `s.optional()`, `s.check(z.maxLength(n))`
 * for `s.max(n)`, `z.pipe(s, z.transform(f))` for `s.transform(f)`). Its
 * bundle is about a sixth of the classic API's, and its schemas are cheaper
 * to build: the classic API was about 5 ms of every API function's cold
 * start (bench/coldstart-results.md). The sync's wire schemas keep the
 * classic API; a process that loads both composes their schemas.
 *
 * English messages, as the classic API sets them when loaded.
 */

import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

export * from 'zod/mini';
