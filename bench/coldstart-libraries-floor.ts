/**
 * The libraries' floor (bench/coldstart.ts): the floor's `select 1`
 * (bench/coldstart-floor.ts), run as every API function runs its handler:
 * inside middy, under the observability stack every Lambda runs first
 * (shared/observability/middleware.ts: the Powertools Logger and Metrics;
 * the API functions do not load the Tracer), its query string parsed by zod
 * (zod/mini, shared/zod.ts) as every API route parses its own. None of the
 * project's own code besides that stack: what the libraries the design
 * requires cost a cold start before any route's work, and so how much of
 * the target's margin over the floor they leave.
 */
import middy from '@middy/core';
import { observed } from '../shared/observability/middleware.ts';
import * as z from '../shared/zod.ts';
import { handler as selectOne } from './coldstart-floor.ts';

const noParameters = z.strictObject({});

export const handler = middy(
  async (event: { queryStringParameters?: Record<string, string> }) => {
    noParameters.parse(event.queryStringParameters ?? {});
    return selectOne();
  },
).use(observed());
