import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { logger } from '../../../shared/observability/logger.ts';
import {
  insertClient,
  insertCluster,
  insertEnvironment,
  insertEventSightings,
  insertGrant,
} from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { eventually } from '../../helpers/eventually.ts';

describe('GET /api/v1/clusters/{id}/events/timeline', () => {
  let database: TestDatabase;
  let api: TestApi;
  let path: string;
  let foreignPath: string;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    database = await createTestDatabase();
    api = await startTestApi(database);
    const db = database.db;
    const clientId = await insertClient(db, 'acme-timeline');
    const prod = await insertEnvironment(db, clientId, 'production');
    const clusterId = await insertCluster(db, {
      clientId,
      environmentId: prod,
      name: 'prod-a',
      agent_version: 'v0.9.0',
    });
    const otherClient = await insertClient(db, 'globex-timeline');
    const otherEnv = await insertEnvironment(db, otherClient, 'production');
    const foreignId = await insertCluster(db, {
      clientId: otherClient,
      environmentId: otherEnv,
      name: 'foreign',
    });
    path = `/api/v1/clusters/${clusterId}/events/timeline`;
    foreignPath = `/api/v1/clusters/${foreignId}/events/timeline`;
    // Two sightings of one event (its count grew), written as the sync does.
    const sighting = (hoursAgo: number, count: number, message: string) => ({
      seen_at: new Date(Date.now() - hoursAgo * 3_600_000).toISOString(),
      namespace: 'shop',
      involved_kind: 'Pod',
      involved_name: 'api-7d9f8c5b4-x2x9k',
      type: 'Warning',
      reason: 'BackOff',
      count,
      message,
    });
    await insertEventSightings(db, clusterId, [
      sighting(2, 3, 'Back-off restarting failed container'),
      sighting(1, 4, 'Back-off restarting failed container password=hunter2x'),
    ]);
    await insertGrant(db, {
      email: 'op@example.com',
      role: 'operator',
      clientId,
    });
    await insertGrant(db, {
      email: 'busy@example.com',
      role: 'viewer',
      clientId,
    });
    for (const email of ['op@example.com', 'busy@example.com']) {
      tokens[email] = await api.token(email);
    }
  });
  afterAll(async () => {
    await api?.close();
    await database?.drop();
  });

  it('returns the sightings newest first with sanitized messages and content ids', async () => {
    // Act
    const response = await api.get(
      `${path}?reason=BackOff`,
      tokens['op@example.com'],
    );

    // Assess
    expect(response.status).toBe(200);
    const { events, truncated, notes } = response.body.data;
    expect(events.map((e: { count: number }) => e.count)).toEqual([4, 3]);
    expect(events[0].message).not.toContain('hunter2x');
    expect(events[0].id).toMatch(/^event:[0-9a-f]{16}$/);
    expect(events[0]).toMatchObject({
      namespace: 'shop',
      involved_kind: 'Pod',
      involved_name: 'api-7d9f8c5b4-x2x9k',
      type: 'Warning',
      reason: 'BackOff',
    });
    expect(truncated).toBe(false);
    expect(notes).toEqual([]);
  });

  it('answers 404 for a cluster of another client before looking at the parameters', async () => {
    const response = await api.get(
      `${foreignPath}?bogus=1`,
      tokens['op@example.com'],
    );
    expect(response.status).toBe(404);
  });

  it('refuses an unknown, an empty or an out-of-rule parameter with bad_request naming it', async () => {
    for (const [param, value] of [
      ['bogus', '1'],
      ['reason', ''],
      ['limit', '0'],
      ['workload_kind', 'Pod'],
    ] as const) {
      const response = await api.get(
        `${path}?${param}=${value}`,
        tokens['op@example.com'],
      );
      expect(response.status, param).toBe(400);
      expect(response.body.error.code, param).toBe('bad_request');
      expect(JSON.stringify(response.body.error), param).toContain(param);
    }
  });

  it('serves 60 reads a minute per user, then answers 429 with Retry-After', async () => {
    // Act
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) {
      statuses.push((await api.get(path, tokens['busy@example.com'])).status);
    }
    const refused = await api.get(path, tokens['busy@example.com']);

    // Assess
    expect(statuses).toEqual(Array(60).fill(200));
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toBe('too many event timeline reads');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('logs a caller that disconnects before the answer at debug', async () => {
    // Prepare: the debug call itself is watched, since each invocation's
    // middleware sets the shared logger back to its configured level.
    const debug = vi.spyOn(logger, 'debug');
    const { hostname, port } = new URL(api.server.url);
    try {
      // Act: the request goes out whole, then the caller hangs up at once.
      const socket = connect(Number(port), hostname);
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      socket.write(
        `GET ${path} HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${tokens['op@example.com']}\r\n\r\n`,
      );
      socket.destroy();

      // Assess
      const call = await eventually(
        'the debug line',
        () =>
          debug.mock.calls.find(
            ([message]) =>
              message === 'the caller disconnected before the answer',
          ),
        10_000,
      );
      expect(call[1]).toEqual({ route: 'list-cluster-event-timeline' });
    } finally {
      debug.mockRestore();
    }
  });
});
