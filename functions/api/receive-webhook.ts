/**
 * POST /api/v1/webhooks/{sourceID}: a webhook source's notification (Argo
 * CD or Alertmanager). Public in the route table: no JWT, the source's
 * secret authenticates it (shared/webhooks/receive.ts).
 */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { receiveWebhookRoute } from '../../shared/http/routes.ts';
import { receiveWebhook } from '../../shared/webhooks/route.ts';

export const handler = apiHandler(receiveWebhookRoute, receiveWebhook);
