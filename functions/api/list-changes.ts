/** GET /api/v1/changes: recorded changes inside the caller's changes:read scope. */
import {
  listChangeFeed,
  parseChangeFeedQuery,
} from '../../shared/changes/feed.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { ok } from '../../shared/http/response.ts';

export const handler = apiHandler(
  'list-changes',
  async ({ event, access, db }) => {
    const query = parseChangeFeedQuery(event.rawQueryString);
    const page = await listChangeFeed(
      db,
      access.scopeFor('changes:read'),
      query,
    );
    return ok(page.items, page.meta);
  },
);
