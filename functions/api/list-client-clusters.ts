/**
 * GET /api/v1/clients/{id}/clusters: the client's clusters the caller may
 * read (all of them with a client-wide grant, else its granted environments').
 */

import { listClientClusters } from '../../shared/clusters/route.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listClientClustersRoute } from '../../shared/http/routes.ts';

export const handler = apiHandler(listClientClustersRoute, listClientClusters);
