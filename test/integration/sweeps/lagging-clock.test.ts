/**
 * An agent whose clock runs 20 minutes behind: its snapshots carry times
 * the stale-cluster threshold (15 minutes) already calls old. last_seen_at
 * stays the snapshot's time (the spec), but the sweep judges silence by when
 * the backend received the snapshot, so the cluster stays connected and
 * its live reads are served; a cluster really silent is still marked, and
 * refused as agent_offline. Every function runs under its AWS login: the
 * sync, the stale sweep's Lambda handler, the live-logs route's handler.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as staleHandler } from '../../../functions/sweeps/stale-clusters.ts';
import { lambdaContext } from '../../../infra/local/lambda-context.ts';
import { query, queryOne } from '../../../shared/db/pool.ts';
import { setDb } from '../../../shared/db/process-pool.ts';
import { setLiveNatsTarget } from '../../../shared/live/nats.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { insertGrant } from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';
import {
  startResponder,
  type TestResponder,
} from '../../helpers/kube-query-responder.ts';
import { startNatsServer, type TestNatsServer } from '../../helpers/nats.ts';
import { captureStdout } from './support.ts';

const MINUTE = 60_000;
const OPERATOR = 'lag.operator@example.test';

describe('an agent whose clock runs 20 minutes behind', () => {
  let database: TestDatabase;
  let tenant: Tenant;
  let nats: TestNatsServer;
  let api: TestApi;
  let token: string;
  const responders: TestResponder[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
    await insertGrant(database.db, {
      email: OPERATOR,
      role: 'operator',
      clientId: tenant.clientId,
    });
    nats = await startNatsServer();
    await setLiveNatsTarget({ url: nats.url });
    api = await startTestApi(database);
    token = await api.token(OPERATOR);
  });
  afterAll(async () => {
    await Promise.all(responders.map((r) => r.stop()));
    await api?.close();
    await setLiveNatsTarget(undefined);
    await nats?.stop();
    setDb(undefined);
    await database.drop();
  });

  /** The agent `agentId` answering live reads (one line of logs). */
  async function answerLiveReads(agentId: string) {
    responders.push(
      await startResponder(nats.url, agentId, (request) => ({
        ok: true,
        agent_version: 'v0.8.2',
        observed_at: new Date().toISOString(),
        result: {
          pod: request.query === 'logs' ? request.pod : '',
          container: null,
          previous: false,
          lines: ['2026-10-01T12:00:00Z ready'],
          truncated: false,
          timestamps: true,
        },
      })),
    );
  }

  /** The sync of a snapshot the agent stamped `lagMinutes` ago, as the sync's login. */
  async function syncLagging(lagMinutes: number) {
    const agentId = randomUUID();
    const stamped = new Date(Date.now() - lagMinutes * MINUTE);
    const inventory = generateInventory({
      seed: agentId,
      agentId,
      clusterName: `lag-${agentId.slice(0, 8)}`,
      timestamp: stamped.toISOString(),
    });
    const result = await syncInventory(
      database.as('sync').db,
      { clientSlug: tenant.clientSlug, envSlug: tenant.envSlug, agentId },
      inventory,
    );
    await answerLiveReads(agentId);
    return { clusterId: result.clusterId, stamped };
  }

  async function sweep() {
    setDb(database.as('sweeps').db, 'sweeps');
    const out = captureStdout();
    try {
      return await staleHandler({}, lambdaContext('stale-clusters'));
    } finally {
      out.restore();
    }
  }

  const liveLogs = (clusterId: string) =>
    api.get(
      `/api/v1/clusters/${clusterId}/live/logs?namespace=default&pod=web-1`,
      token,
    );

  it('is not marked disconnected after its sync, keeps its snapshot time as last_seen_at, and its live reads are served', async () => {
    // Prepare
    const { clusterId, stamped } = await syncLagging(20);

    // Act
    const swept = await sweep();
    const response = await liveLogs(clusterId);

    // Assess
    expect(swept.clusterIds).not.toContain(clusterId);
    const row = await queryOne<{ agent_status: string; last_seen_at: Date }>(
      database.db,
      'select agent_status, last_seen_at from clusters where id = $1',
      [clusterId],
    );
    expect(row).toEqual({
      agent_status: 'connected',
      last_seen_at: stamped,
    });
    expect(response.status).toBe(200);
    expect(response.body.data.lines).toHaveLength(1);
  });

  it('stays connected when its clock steps back: a snapshot later in the stream but stamped before the applied one is skipped, yet counts as received; a redelivery does not', async () => {
    // Prepare: a snapshot applied (stream sequence 10) that arrived 16
    // minutes ago, then the agent's pod moves to a node whose clock is 20
    // minutes behind.
    const agentId = randomUUID();
    const subject = {
      clientSlug: tenant.clientSlug,
      envSlug: tenant.envSlug,
      agentId,
    };
    const snapshot = (stampedAt: Date) =>
      generateInventory({
        seed: agentId,
        agentId,
        clusterName: `step-${agentId.slice(0, 8)}`,
        timestamp: stampedAt.toISOString(),
      });
    const sync = database.as('sync').db;
    const appliedAt = new Date(Date.now() - MINUTE);
    const { clusterId } = await syncInventory(
      sync,
      subject,
      snapshot(appliedAt),
      {
        streamSeq: 10,
      },
    );
    await answerLiveReads(agentId);
    const silentFor16Minutes = () =>
      query(
        database.db,
        `update clusters set last_received_at = now() - interval '16 minutes'
          where id = $1`,
        [clusterId],
      );
    await silentFor16Minutes();

    // Act: the next snapshot, later in the stream, stamped 20 minutes back
    const steppedBack = await syncInventory(
      sync,
      subject,
      snapshot(new Date(Date.now() - 20 * MINUTE)),
      { streamSeq: 11 },
    );
    const sweptAfterIt = await sweep();
    const served = await liveLogs(clusterId);

    // Act: the queue redelivering the applied message, then the stepped-back
    // one: neither is news of the agent.
    await silentFor16Minutes();
    const replayed = await syncInventory(sync, subject, snapshot(appliedAt), {
      streamSeq: 10,
    });
    const redelivered = await syncInventory(
      sync,
      subject,
      snapshot(new Date(Date.now() - 20 * MINUTE)),
      { streamSeq: 11 },
    );
    const sweptAfterReplay = await sweep();

    // Assess
    expect(steppedBack.outcome).toBe('skipped_not_newer');
    expect(steppedBack.clockSteppedBack).toBe(true);
    expect(sweptAfterIt.clusterIds).not.toContain(clusterId);
    expect(served.status).toBe(200);
    const row = await queryOne<{ last_seen_at: Date }>(
      database.db,
      'select last_seen_at from clusters where id = $1',
      [clusterId],
    );
    // Its inventory is the applied one until its stamps pass it.
    expect(row.last_seen_at).toEqual(appliedAt);
    expect(replayed.outcome).toBe('skipped_not_newer');
    expect(replayed.clockSteppedBack).toBe(false);
    expect(redelivered.clockSteppedBack).toBe(false);
    expect(sweptAfterReplay.clusterIds).toContain(clusterId);
  });

  it('is marked disconnected once nothing was received for the threshold, and its live reads are refused as agent_offline', async () => {
    // Prepare: the same agent, 16 minutes after its last snapshot arrived.
    const { clusterId, stamped } = await syncLagging(20);
    await query(
      database.db,
      `update clusters set last_received_at = now() - interval '16 minutes'
        where id = $1`,
      [clusterId],
    );

    // Act
    const swept = await sweep();
    const response = await liveLogs(clusterId);

    // Assess
    expect(swept.clusterIds).toContain(clusterId);
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('agent_offline');
    // The message names the snapshot's own time, as the spec says.
    expect(response.body.error.message).toContain(stamped.toISOString());
  });
});
