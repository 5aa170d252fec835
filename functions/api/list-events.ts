/** GET /api/v1/clusters/{clusterID}/events: the last 24 hours, newest first. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listEventsRoute } from '../../shared/http/routes.ts';
import { listEvents } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listEventsRoute, listEvents);
