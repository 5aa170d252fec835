/** GET /api/v1/changes: recorded changes inside the caller's changes:read scope. */
import {
  changeFeedQueryOf,
  listChangeFeed,
} from '../../shared/changes/feed.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';

export const handler = apiHandler(
  'list-changes',
  async ({ db, scope, query }) => {
    const page = await listChangeFeed(db, scope, changeFeedQueryOf(query));
    return { data: page.items, meta: page.meta };
  },
);
