/**
 * apiHandler's `startEarly` (shared/http/api-handler.ts): started as the
 * request arrives, before the access checks and whatever they decide; the
 * live reads open their NATS connection this way while the caller's grants
 * are read. The route's own work runs only for a caller the checks let in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../../infra/local/lambda-context.ts';
import { createPool } from '../../../shared/db/pool.ts';
import { setDb } from '../../../shared/db/process-pool.ts';
import { apiHandler } from '../../../shared/http/api-handler.ts';
import { getLiveManifestRoute as route } from '../../../shared/http/routes.ts';
import {
  insertClientCluster,
  insertGrant,
} from '../../helpers/api-fixtures.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { httpApiEvent } from '../../helpers/lambda-events.ts';

const OPERATOR = 'operator@acme.example';
const STRANGER = 'stranger@example.com';

describe('apiHandler startEarly', () => {
  let database: TestDatabase;
  let clusterId: string;
  const steps: string[] = [];
  const handler = apiHandler(
    route,
    async () => {
      steps.push('route');
      return { data: {} };
    },
    { startEarly: () => steps.push('startEarly') },
  );
  const ask = (email: string) =>
    handler(
      httpApiEvent({
        method: route.method,
        routePath: route.path,
        pathParameters: { clusterID: clusterId },
        query: { kind: 'Deployment', namespace: 'icx', name: 'icx-db' },
        email,
      }),
      lambdaContext('api-get-live-manifest'),
    );

  beforeAll(async () => {
    database = await createTestDatabase();
    let clientId: string;
    ({ clientId, clusterId } = await insertClientCluster(database.db, {
      client: 'acme',
      environment: 'prod',
      cluster: 'current',
    }));
    await insertGrant(database.db, {
      email: OPERATOR,
      role: 'operator',
      clientId,
    });
    setDb(createPool({ connectionString: database.url, max: 2 }), 'api');
  });

  afterAll(async () => {
    setDb(undefined, 'api');
    await database?.drop();
  });

  it('starts for a caller the access checks refuse, and the route never runs', async () => {
    // Prepare
    steps.length = 0;

    // Act
    const answer = await ask(STRANGER);

    // Assess (no grant anywhere: the route gate's 403)
    expect(answer.statusCode).toBe(403);
    expect(steps).toEqual(['startEarly']);
  });

  it('starts before the route for a caller they let in', async () => {
    // Prepare
    steps.length = 0;

    // Act
    const answer = await ask(OPERATOR);

    // Assess
    expect(answer.statusCode).toBe(200);
    expect(steps).toEqual(['startEarly', 'route']);
  });
});
