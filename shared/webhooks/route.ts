/**
 * The webhook route's glue: public in the route table (no JWT); the
 * source's secret authenticates it inside receiveWebhook.
 */
import type { RouteFunction } from '../http/api-handler.ts';
import * as receive from './receive.ts';

export const receiveWebhook: RouteFunction<'receive-webhook'> = ({
  db,
  event,
}) => receive.receiveWebhook(db, event);
