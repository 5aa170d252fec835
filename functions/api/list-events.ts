/** GET /api/v1/clusters/{clusterID}/events: the last 24 hours, newest first. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listEvents } from '../../shared/inventory/route.ts';

export const handler = apiHandler('list-events', listEvents);
