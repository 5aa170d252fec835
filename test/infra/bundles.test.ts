/**
 * The built artifacts run: every Lambda function of the synthesized app
 * (`cdk synth`, offline, bundled by the local esbuild) is imported from its
 * bundled `index.js` in a process of its own, on the Node major its
 * template's runtime names, with the environment its template gives it and
 * nothing else. The AWS endpoints in that environment are swapped for local
 * stand-ins: PostgreSQL behind a TLS proxy (RDS Proxy: `sslmode=verify-full`
 * against the run's own CA), each function with the login of its group
 * role, whose password it reads from a Secrets Manager stand-in by the ARN
 * the template gives; nats-server asking every client for its `.creds`
 * (the live reads answer through an agent logged in with its own); fauxqs
 * for S3; a stub Prometheus workspace. Each handler gets the event AWS delivers to it, and must
 * answer as it does locally.
 *
 * The synth is cached in the temp directory (test/helpers/lambda-bundles.ts)
 * so a second run of the suite, or the cold-start bench, reuses it.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type {
  APIGatewayProxyStructuredResultV2,
  SQSBatchResponse,
  SQSEvent,
} from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../infra/local/lambda-context.ts';
import { fromRoot } from '../../infra/paths.ts';
import { APPLICATION_LOGINS } from '../../infra/stacks/database-stack.ts';
import { readMigrations } from '../../shared/db/migrate.ts';
import { createPool, query, queryOne } from '../../shared/db/pool.ts';
import { setDb } from '../../shared/db/process-pool.ts';
import { GROUP_ROLES, type GroupRoleName } from '../../shared/db/roles.ts';
import { type RouteDefinition, routes } from '../../shared/http/routes.ts';
import type { KubeQueryRequest } from '../../shared/live/kube-query.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import {
  startResponder,
  type TestResponder,
} from '../helpers/kube-query-responder.ts';
import {
  type BundledFunction,
  FAKE_ACCOUNT,
} from '../helpers/lambda-bundles.ts';
import { httpApiEvent, scheduledEvent } from '../helpers/lambda-events.ts';
import {
  type Answer,
  type LambdaProcess,
  runtimeMajor,
} from '../helpers/lambda-process.ts';
import {
  APP_PREFIX,
  type LambdaStage,
  REGION,
  startLambdaStage,
} from '../helpers/lambda-stage.ts';
import { sqsRecordOf } from '../helpers/sqs-record.ts';
import { tinyInventory } from '../helpers/tiny-inventory.ts';

const CLIENT = 'acme';
const ENVIRONMENT = 'production';
const CALLER = 'alice@example.test';
/** An agent every live read accepts. */
const AGENT_VERSION = 'v0.9.0';

let stage: LambdaStage;
let database: TestDatabase;
let migrateDatabase: TestDatabase;

function adminUrl(): string {
  const url = new URL(database.url);
  url.pathname = '/postgres';
  return url.toString();
}

const fn = (name: string): BundledFunction => stage.fn(name);

/** The answer's value, failing with the function's output when it threw. */
function answered<T>(answer: Answer, lambda: LambdaProcess): T {
  if (answer.error !== undefined) {
    throw new Error(
      `${answer.error.name}: ${answer.error.message}\n--- function output ---\n${lambda.output().slice(-4000)}`,
    );
  }
  return answer.result as T;
}

beforeAll(async () => {
  database = await createTestDatabase();
  migrateDatabase = await createTestDatabase({ empty: true });
  stage = await startLambdaStage(database.url, database.db);
  // The in-process handlers compared with the bundles read this.
  process.env.NATS_URL = stage.nats.url;
  process.env.NATS_CA = stage.nats.ca!.file;
  process.env.METRICS_URL = `${stage.secrets.endpoint}/workspaces/local`;
}, 600_000);

afterAll(async () => {
  setDb(undefined);
  await stage?.stop();
  await migrateDatabase?.drop();
  await database?.drop();
  await stage?.logins.drop(adminUrl());
});

describe('the synthesized functions', () => {
  it('are every function the app defines, each on a Node.js runtime whose major the bundles run on here', () => {
    // Assess
    const ours = stage.assembly.functions.filter(
      (f) => f.handler === 'index.handler',
    );
    expect(ours.map((f) => f.name).sort()).toEqual(
      [
        'admin',
        'migrate',
        'sweep-event-retention',
        'sweep-stale-clusters',
        'sync',
        ...routes.map((route) => `api-${route.name}`),
      ]
        .map((name) => `${APP_PREFIX}-${name}`)
        .sort(),
    );
    const version = spawnSync(stage.node, ['--version'], {
      encoding: 'utf8',
    }).stdout;
    for (const f of ours) {
      expect(f.runtime, f.name).toMatch(/^nodejs\d+\.x$/);
      expect(version, f.name).toMatch(
        new RegExp(`^v${runtimeMajor(f.runtime)}\\.`),
      );
    }
  });
});

describe('the live reads’ bundles', () => {
  it('sign their NATS login with node:crypto, tweetnacl left out (BUNDLE_ALIAS)', () => {
    const live = routes.filter((r) => (r as RouteDefinition).liveReads);
    expect(live).toHaveLength(3);
    for (const route of live) {
      // Assess
      const bundle = readFileSync(
        join(fn(`api-${route.name}`).dir, 'index.js'),
        'utf8',
      );
      expect(bundle, route.name).toContain(
        'curve (xkey) encryption is not available here',
      );
      // tweetnacl's own export, kept by the minifier as a property name.
      expect(bundle, route.name).not.toContain('lowlevel');
    }
  });
});

describe('every function’s bundle', () => {
  it('loads node:stream/web only when one of its exports is read (BUNDLE_ALIAS)', () => {
    for (const f of stage.assembly.functions) {
      // Assess
      const bundle = readFileSync(join(f.dir, 'index.js'), 'utf8');
      expect(bundle, f.name).not.toMatch(/require\("(node:)?stream\/web"\)/);
      // Every function is wrapped in middy, whose import the alias replaced.
      expect(bundle, f.name).toContain('getBuiltinModule("node:stream/web")');
    }
  });
});

describe('the API functions’ bundles', () => {
  it('each hold their own route’s table entry and no other (nor the code other entries’ queries load)', () => {
    for (const route of routes) {
      // get-openapi serves the document, which names every route.
      if (route.name === 'get-openapi') continue;
      // Assess
      const bundle = readFileSync(
        join(fn(`api-${route.name}`).dir, 'index.js'),
        'utf8',
      );
      expect(bundle, route.name).toContain(`"${route.summary}"`);
      const others = routes.filter(
        (other) => other !== route && !route.summary.includes(other.summary),
      );
      for (const other of others) {
        expect(bundle, `${route.name} holds ${other.name}`).not.toContain(
          other.summary,
        );
      }
    }
  });
});

describe('migrate, as the MigrateOnDeploy trigger invokes it', () => {
  it('applies every migration to an empty database and creates each application login its secret names', async () => {
    // Prepare
    const migrate = await stage.start(fn('migrate'), {
      databaseName: new URL(migrateDatabase.url).pathname.slice(1),
      deploySecrets: true,
    });

    // Act: the trigger's provider invokes the function with no payload.
    const answer = await migrate.invoke({});

    // Assess
    const result = answered<{
      applied: string[];
      logins: { username: string }[];
    }>(answer, migrate);
    const files = (await readMigrations(fromRoot('migrations'))).map(
      (m) => m.name,
    );
    expect(result.applied).toEqual(files);
    expect(result.logins.map((l) => l.username).sort()).toEqual(
      Object.values(APPLICATION_LOGINS)
        .map((l) => l.username)
        .sort(),
    );
    expect(
      stage.deploySecrets.requests.every((r) => r.signed),
      'every Secrets Manager call is signed with the execution role',
    ).toBe(true);
  });
});

describe('the admin function, as `aws lambda invoke` runs it', () => {
  it('creates a tenant and a grant under the tenancy login', async () => {
    // Prepare
    const admin = await stage.start(fn('admin'));

    // Act
    const tenant = answered<{ command: string; clientId: string }>(
      await admin.invoke({
        command: 'tenant',
        client: CLIENT,
        environment: ENVIRONMENT,
      }),
      admin,
    );
    const grant = answered<{ command: string }>(
      await admin.invoke({
        command: 'grant',
        email: CALLER,
        role: 'admin',
        client: CLIENT,
      }),
      admin,
    );
    const refused = await admin.invoke({ command: 'drop-everything' });

    // Assess
    expect(tenant.command).toBe('tenant');
    expect(grant.command).toBe('grant');
    expect(refused.error?.message).toMatch(/invalid admin command/);
    const row = await queryOne<{ n: number }>(
      database.db,
      `select count(*)::int as n from user_grants g join clients c on c.id = g.client_id
        where c.slug = $1`,
      [CLIENT],
    );
    expect(row.n).toBe(1);
  });
});

/** Agents of the sync's batch, in the tenant the admin function made. */
const agentA = randomUUID();
const agentB = randomUUID();
const agentC = randomUUID();
const subjectOf = (agent: string, client = CLIENT) =>
  `proxima.${client}.${ENVIRONMENT}.${agent}.kubernetes`;

describe('the sync, as the SQS FIFO event source delivers a batch', () => {
  const queueArn = `arn:aws:sqs:${REGION}:${FAKE_ACCOUNT}:${APP_PREFIX}-inventory.fifo`;
  const batchOf = (records: ReturnType<typeof sqsRecordOf>[]): SQSEvent => ({
    Records: records.map((r) => ({ ...r, eventSourceARN: queueArn })),
  });

  it('applies the snapshots, inline and claim-checked, and records what can never apply', async () => {
    // Prepare
    const sync = await stage.start(fn('sync'));
    const at = new Date();
    const stranger = randomUUID();
    const claimKey = `claims/${agentC}/1`;
    await stage.sqs.s3.send(
      new PutObjectCommand({
        Bucket: stage.sqs.bucket,
        Key: claimKey,
        Body: JSON.stringify(tinyInventory(agentC, at)),
      }),
    );
    const records = [
      sqsRecordOf(
        subjectOf(agentA),
        JSON.stringify(
          tinyInventory(agentA, at, {
            services: 2,
            ingresses: 1,
            pvcs: 1,
            jobs: 1,
            hpas: 1,
            networkPolicies: 1,
            resourceQuotas: 1,
            endpointSlices: 1,
            events: 2,
          }),
        ),
      ),
      // A claim check whose object is gone: refused for good.
      sqsRecordOf(subjectOf(agentB), '', {
        'claim-check': `s3://${stage.sqs.bucket}/claims/${agentB}/missing`,
      }),
      sqsRecordOf(subjectOf(agentB), JSON.stringify(tinyInventory(agentB, at))),
      // A tenant that does not exist: refused for good.
      sqsRecordOf(
        subjectOf(stranger, 'nobody'),
        JSON.stringify(tinyInventory(stranger, at)),
      ),
      sqsRecordOf(subjectOf(agentC), '', {
        'claim-check': `s3://${stage.sqs.bucket}/${claimKey}`,
      }),
    ];

    // Act
    const answer = await sync.invoke(batchOf(records));

    // Assess
    const response = answered<SQSBatchResponse>(answer, sync);
    expect(response).toEqual({ batchItemFailures: [] });
    const clusters = await query<{ agent_id: string }>(
      database.db,
      'select agent_id::text from clusters order by 1',
    );
    expect(clusters.map((c) => c.agent_id)).toEqual(
      [agentA, agentB, agentC].sort(),
    );
    const refused = await queryOne<{ n: number }>(
      database.db,
      'select count(*)::int as n from ingest_rejections',
    );
    expect(refused.n).toBe(2);
    const writes = stage.secrets.requests.filter((r) =>
      r.path.includes('remote_write'),
    );
    expect(
      writes.length,
      'series written to the metrics store',
    ).toBeGreaterThan(0);
    expect(
      writes.every((r) => r.signed),
      'remote writes are SigV4-signed',
    ).toBe(true);
  });

  it('reports a record it has no time left for in batchItemFailures, for the queue to redeliver', async () => {
    // Prepare: 20 s left, less than one sync's bound (SYNC_TIMEOUT_MS).
    const sync = await stage.start(fn('sync'));
    const [agentD, agentE] = [randomUUID(), randomUUID()];
    const at = new Date();
    const records = [
      sqsRecordOf(subjectOf(agentD), JSON.stringify(tinyInventory(agentD, at))),
      sqsRecordOf(subjectOf(agentE), JSON.stringify(tinyInventory(agentE, at))),
    ];

    // Act
    const answer = await sync.invoke(batchOf(records), 20_000);

    // Assess: the first record of a batch always runs.
    const response = answered<SQSBatchResponse>(answer, sync);
    expect(response).toEqual({
      batchItemFailures: [{ itemIdentifier: records[1]!.messageId }],
    });
    const applied = await query<{ agent_id: string }>(
      database.db,
      'select agent_id::text from clusters where agent_id = any($1::uuid[])',
      [[agentD, agentE]],
    );
    expect(applied.map((c) => c.agent_id)).toEqual([agentD]);
  });
});

/**
 * What the cluster's agent answers each live read (wire contract): the
 * same reply to the bundle and to the handler in process, so their
 * answers can be compared whole.
 */
function agentReply(request: KubeQueryRequest): unknown {
  const envelope = {
    ok: true,
    agent_version: AGENT_VERSION,
    observed_at: '2026-12-07T06:00:00Z',
    notes: [],
  };
  if (request.query === 'logs') {
    return {
      ...envelope,
      result: {
        pod: request.pod,
        container: 'app',
        previous: false,
        lines: [`${request.timestamps ? '2026-12-07T05:59:59Z ' : ''}ready`],
        truncated: false,
        timestamps: request.timestamps,
      },
    };
  }
  const { kind, namespace, name } = request;
  const object = { apiVersion: 'apps/v1', kind, metadata: { namespace, name } };
  return {
    ...envelope,
    result:
      request.query === 'manifest'
        ? { kind, namespace, name, object }
        : {
            kind,
            namespace,
            name,
            revisions: [
              {
                revision: 1,
                name: `${name}-7d9f8b6c5`,
                created: '2026-12-01T00:00:00Z',
                replicas: 1,
                template_hash: '7d9f8b6c5',
                containers: [{ name: 'app', image: 'nginx:1.27' }],
                pod_template: null,
              },
            ],
            truncated: false,
          },
  };
}

describe('the API functions, as the HTTP API invokes them behind its JWT authorizer', () => {
  let ids: Record<string, string>;
  let queries: Record<string, Record<string, string>>;
  let agent: TestResponder;

  afterAll(async () => {
    await agent?.stop();
    delete process.env.NATS_CREDS;
  });

  beforeAll(async () => {
    const row = await queryOne<{
      cluster: string;
      client: string;
      environment: string;
      node: string;
      workload: string;
      namespace: string;
      workload_name: string;
      workload_kind: string;
      pod: string;
    }>(
      database.db,
      `select c.id as cluster, c.client_id as client, c.environment_id as environment,
              (select id from k8s_nodes where cluster_id = c.id limit 1) as node,
              w.id as workload, w.namespace, w.name as workload_name, w.kind as workload_kind,
              (select name from k8s_pods where cluster_id = c.id limit 1) as pod
         from clusters c join k8s_workloads w on w.cluster_id = c.id
        where c.agent_id = $1 limit 1`,
      [agentA],
    );
    // A CMDB host of the cluster's environment, for the host routes.
    const host = await queryOne<{ id: string }>(
      database.db,
      `insert into hosts (client_id, environment_id, hostname)
       values ($1, $2, 'bundle-host-1') returning id`,
      [row.client, row.environment],
    );
    // The cluster's agent answers live reads, logged in with .creds of its
    // own; the handler in process logs in with the API's, as the bundle
    // does from the NATS secret.
    const { agent_id: agentId } = await queryOne<{ agent_id: string }>(
      database.db,
      'update clusters set agent_version = $2 where id = $1 returning agent_id',
      [row.cluster, AGENT_VERSION],
    );
    agent = await startResponder(
      {
        url: stage.nats.url,
        creds: (await stage.nats.userCreds('cluster-agent'))!,
        ca: stage.nats.ca!.file,
      },
      agentId,
      agentReply,
    );
    process.env.NATS_CREDS = await stage.nats.userCreds('api-in-process');
    ids = {
      hostID: host.id,
      clusterID: row.cluster,
      id: row.client,
      envID: row.environment,
      nodeID: row.node,
      workloadID: row.workload,
      query: 'cpu_by_node',
      sourceID: randomUUID(),
    };
    const object = {
      kind: row.workload_kind,
      namespace: row.namespace,
      name: row.workload_name,
    };
    const now = Date.now();
    queries = {
      'get-cluster-metrics': {
        start: new Date(now - 3_600_000).toISOString(),
        end: new Date(now).toISOString(),
      },
      'get-cluster-graph': object,
      'get-live-manifest': object,
      'list-live-revisions': object,
      'get-live-logs': { namespace: row.namespace, pod: row.pod },
    };
  });

  // A window's ends default to the clock at the call: a time under these
  // keys is not compared.
  const volatile = /^(from|to|generated_at)$/;
  const instant = /^\d{4}-\d\d-\d\dT[\d:.]+Z$/;
  function normalized(result: APIGatewayProxyStructuredResultV2) {
    const body =
      typeof result.body === 'string' && result.body.startsWith('{')
        ? JSON.parse(result.body, (key, value) =>
            volatile.test(key) && instant.test(String(value)) ? '<now>' : value,
          )
        : result.body;
    return { statusCode: result.statusCode, body };
  }

  it.each(routes.map((route) => [route.name, route] as const))(
    '%s answers as the same handler does in process',
    async (name, route) => {
      // Prepare
      const bundled = fn(`api-${name}`);
      const role: GroupRoleName =
        name === 'receive-webhook' ? GROUP_ROLES.webhooks : GROUP_ROLES.reader;
      const event = () =>
        httpApiEvent({
          method: route.method,
          routePath: route.path,
          pathParameters: ids,
          email: CALLER,
          ...(queries[name] ? { query: queries[name] } : {}),
          ...(route.method === 'POST' ? { body: '{"status":"firing"}' } : {}),
        });
      const lambda = await stage.start(bundled);
      const local = (await import(`../../functions/api/${name}.ts`)) as {
        handler: (
          e: unknown,
          c: unknown,
        ) => Promise<APIGatewayProxyStructuredResultV2>;
      };
      const pool = createPool({ connectionString: stage.urlAs(role), max: 2 });

      // Act
      const answer = await lambda.invoke(event());
      setDb(pool);
      let expected: APIGatewayProxyStructuredResultV2;
      try {
        expected = await local.handler(event(), lambdaContext(bundled.name));
      } finally {
        setDb(undefined);
        await pool.end();
      }

      // Assess
      const got = normalized(
        answered<APIGatewayProxyStructuredResultV2>(answer, lambda),
      );
      expect(got, lambda.output().slice(-2000)).toEqual(normalized(expected));
      if (route.access.shape !== 'public') {
        expect(got.statusCode, JSON.stringify(got.body)).toBe(200);
      }
      await lambda.stop();
    },
  );
});

describe('the sweeps, as their EventBridge schedules invoke them', () => {
  it('stale-clusters marks a cluster whose agent went silent', async () => {
    // Prepare
    await query(
      database.db,
      // Silence is judged by when the backend last received a snapshot.
      `update clusters
          set last_seen_at = now() - interval '2 hours',
              last_received_at = now() - interval '2 hours'
        where agent_id = $1`,
      [agentC],
    );
    const sweep = await stage.start(fn('sweep-stale-clusters'));

    // Act
    const answer = await sweep.invoke(
      scheduledEvent(`${APP_PREFIX}-stale-clusters`),
    );

    // Assess
    const result = answered<{ marked: number; clusterIds: string[] }>(
      answer,
      sweep,
    );
    const stale = await queryOne<{ id: string }>(
      database.db,
      'select id from clusters where agent_id = $1',
      [agentC],
    );
    expect(result.clusterIds).toContain(stale.id);
  });

  it('event-retention runs every step under the maintenance login', async () => {
    // Prepare
    const sweep = await stage.start(fn('sweep-event-retention'));

    // Act
    const answer = await sweep.invoke(
      scheduledEvent(`${APP_PREFIX}-event-retention`),
    );

    // Assess
    const result = answered<Record<string, unknown>>(answer, sweep);
    expect(result).toHaveProperty('auditDeleted');
  });
});

describe('secrets, as the functions above read them', () => {
  it('every function but migrate read its secrets through the Parameters and Secrets extension, none with the SDK', () => {
    // Run last: the requests of every function started above.
    const reads = stage.secrets.requests.filter(
      (r) => r.secretId !== undefined,
    );
    expect(reads.length).toBeGreaterThan(0);
    expect(
      reads.filter((r) => r.target !== 'extension:secretsmanager/get'),
    ).toEqual([]);
    // The live reads' NATS secret too, by its name.
    expect(reads.map((r) => r.secretId)).toContain(`${APP_PREFIX}/nats`);
  });
});
