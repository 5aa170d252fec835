/**
 * `npm run seed -- [client] [env] [cluster] [--size small|medium|large]
 * [--file x.json] [--gzip]`: publishes one inventory on
 * `proxima.{client}.{env}.{agent_id}.kubernetes` (JetStream, waits for the
 * ack). Defaults: internal development test-cluster (SEED_DEFAULTS),
 * NATS_URL (logged in with NATS_CREDS and NATS_CA, as the agent logs in),
 * else the local stack's address, else nats://127.0.0.1:4222. The agent id
 * is derived from the three names, so reseeding updates the same cluster.
 *
 * The inventory: --file (its agent_id, timestamp and cluster name are set to
 * this seed's), else --size from the generator, else the current
 * kube-context when one answers (KUBECONFIG or ~/.kube/config), listed and
 * built by the agent's own code (shared/agent/list.ts, shared/collector/),
 * honouring PROXIMA_K8S_EXCLUDE_NAMESPACES and PROXIMA_K8S_POD_LIMIT, else
 * the built-in realistic fixture, its times rebased to the seeding time.
 *
 * The body is gzipped with --gzip, and also when it would not fit the
 * server's max_payload (NATS's default is 1 MB; a real cluster's inventory
 * is often more), as the agent always sends it.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { jetstream } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { readLocalNatsUrl } from '../infra/local/nats-address.ts';
import { reachableKubeApi } from '../shared/agent/kube-api.ts';
import { collectInventory } from '../shared/agent/list.ts';
import { AGENT_VERSION } from '../shared/agent/version.ts';
import { getConfig } from '../shared/config.ts';
import { RejectedInventoryError } from '../shared/errors.ts';
import { connectNats } from '../shared/ingest/bridge/nats-setup.ts';
import { natsTargetOf } from '../shared/nats-login.ts';
import { parseInventory } from '../shared/wire/inventory.ts';
import { inventorySubject, parseSubject } from '../shared/wire/subject.ts';
import { generateInventory, type SizeName } from '../test/fixtures/generate.ts';
import { realisticInventoryMessageAt } from '../test/fixtures/realistic.ts';
import { SEED_DEFAULTS, seedAgentId } from './seed-agent.ts';

const USAGE =
  'usage: npm run seed -- [client] [env] [cluster] [--size small|medium|large] [--file x.json] [--gzip]';
const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';

function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

const { values, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        size: { type: 'string' },
        file: { type: 'string' },
        gzip: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    return fail(`${(error as Error).message}\n${USAGE}`, 2);
  }
})();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (positionals.length > 3) fail(USAGE, 2);
const [
  client = SEED_DEFAULTS.client,
  environment = SEED_DEFAULTS.environment,
  cluster = SEED_DEFAULTS.cluster,
] = positionals;
const size = values.size as SizeName | undefined;
if (size !== undefined && !['small', 'medium', 'large'].includes(size)) {
  fail(`--size must be small, medium or large\n${USAGE}`, 2);
}

const agentId = seedAgentId(client, environment, cluster);
const subject = inventorySubject(client, environment, agentId);
try {
  parseSubject(subject);
} catch (error) {
  fail(
    error instanceof RejectedInventoryError ? error.reason : String(error),
    2,
  );
}
const timestamp = new Date().toISOString();
const config = getConfig();

async function buildMessage(): Promise<{ message: unknown; source: string }> {
  if (values.file !== undefined) {
    const raw = JSON.parse(await readFile(values.file, 'utf8')) as Record<
      string,
      unknown
    >;
    const clusterInfo = (raw.cluster ?? {}) as Record<string, unknown>;
    return {
      message: {
        ...raw,
        agent_id: agentId,
        timestamp,
        cluster: { ...clusterInfo, name: cluster },
      },
      source: values.file,
    };
  }
  if (size !== undefined) {
    return {
      message: generateInventory({
        size,
        seed: `${client}/${environment}/${cluster}`,
        agentId,
        clusterName: cluster,
        timestamp,
      }),
      source: `generated (${size})`,
    };
  }
  const kube = await reachableKubeApi();
  if (kube !== undefined) {
    const { message, notCollected } = await collectInventory(kube, {
      agentId,
      agentVersion: AGENT_VERSION,
      timestamp,
      clusterName: cluster,
      excludeNamespaces: config.PROXIMA_K8S_EXCLUDE_NAMESPACES,
      podLimit: config.PROXIMA_K8S_POD_LIMIT,
      pageSize: config.PROXIMA_K8S_PAGE_SIZE,
    });
    const skipped = notCollected.map((n) => `${n.resource} (${n.reason})`);
    return {
      message,
      source: `kube-context ${kube.server}${skipped.length > 0 ? `; not collected: ${skipped.join(', ')}` : ''}`,
    };
  }
  // Rebased to now: its events in the 24-hour list, its objects days old.
  const fixture = realisticInventoryMessageAt(new Date(timestamp));
  return {
    message: {
      ...fixture,
      agent_id: agentId,
      timestamp,
      cluster: { ...fixture.cluster, name: cluster },
    },
    source: 'built-in realistic fixture',
  };
}

const { message, source } = await buildMessage();
try {
  parseInventory(message);
} catch (error) {
  fail(
    `the inventory from ${source} is not valid: ${error instanceof RejectedInventoryError ? error.reason : String(error)}`,
  );
}
const json = Buffer.from(JSON.stringify(message));

const nats = natsTargetOf(config) ?? {
  url: readLocalNatsUrl(config.DATA_DIR) ?? DEFAULT_NATS_URL,
};
const natsUrl = nats.url;
let nc: NatsConnection;
try {
  nc = await connectNats({
    ...nats,
    name: 'k8s-inventory-seed',
    waitOnFirstConnect: false,
  });
} catch (error) {
  fail(
    `cannot reach NATS at ${natsUrl} (${(error as Error).message}): is the local stack running (npm start)? Set NATS_URL if it printed another address.`,
  );
}
const maxPayload = nc.info?.max_payload ?? Number.POSITIVE_INFINITY;
const gzipped = values.gzip || json.byteLength > maxPayload;
const body = gzipped ? gzipSync(json) : json;
if (body.byteLength > maxPayload) {
  await nc.close();
  fail(
    `the inventory is ${body.byteLength} bytes${gzipped ? ' gzipped' : ''}, over ${natsUrl}'s max_payload of ${maxPayload}: raise the server's max_payload, or lower PROXIMA_K8S_POD_LIMIT`,
  );
}
try {
  const h = headers();
  if (gzipped) h.set('Content-Encoding', 'gzip');
  const ack = await jetstream(nc).publish(subject, body, {
    headers: h,
    timeout: 30_000,
  });
  console.log(`published ${cluster} (${source})`);
  console.log(`  subject  ${subject}`);
  console.log(
    `  bytes    ${json.byteLength}${gzipped ? ` (gzip ${body.byteLength}${values.gzip ? '' : `, over the server's max_payload of ${maxPayload} unzipped`})` : ''}`,
  );
  console.log(`  stream   ${ack.stream} seq ${ack.seq}`);
} catch (error) {
  process.exitCode = 1;
  console.error(
    `publish failed on ${natsUrl}: ${(error as Error).message} (the stream is created by the bridge: is the local stack running?)`,
  );
} finally {
  await nc.close();
}
