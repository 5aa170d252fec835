/**
 * The cluster agent process (`npm run agent`; in a cluster, infra/agent/).
 * Long-running: a sync every PROXIMA_K8S_SYNC_INTERVAL, live reads, /healthz
 * and /metrics; SIGTERM stops it gracefully (exit 0), a NATS connection
 * lost for good exits 1 so the pod restarts.
 *
 * `--once`: collects and publishes one inventory, no live reads; exits 0
 * once the stream acked it, 1 with the reason otherwise.
 */
import { parseArgs } from 'node:util';
import { readLocalNatsUrl } from '../../infra/local/nats-address.ts';
import { Agent, runOnce } from '../../shared/agent/agent.ts';
import { agentOptionsFromConfig } from '../../shared/agent/from-config.ts';
import { checkConfig } from '../../shared/config.ts';
import { logger } from '../../shared/observability/logger.ts';

const fail = (message: string, code = 1): never => {
  console.error(message);
  process.exit(code);
};

const { values } = (() => {
  try {
    return parseArgs({
      options: { once: { type: 'boolean', default: false } },
    });
  } catch (error) {
    return fail(
      `${(error as Error).message}\nusage: npm run agent [-- --once]`,
      2,
    );
  }
})();

const config = (() => {
  try {
    return checkConfig();
  } catch (error) {
    return fail((error as Error).message, 2);
  }
})();
const options = await agentOptionsFromConfig(config, {
  natsUrlFallback: readLocalNatsUrl(config.DATA_DIR),
}).catch((error: Error) => fail(error.message, 2));

if (values.once) {
  const { healthPort: _, ...once } = options;
  try {
    const result = await runOnce(once);
    if (!result.publish.published) {
      fail(
        `nothing published: the inventory is ${result.publish.bytes} bytes gzipped without spec facts, over the NATS server's max_payload of ${result.publish.maxPayload}`,
      );
    }
    process.exit(0);
  } catch (error) {
    fail(`agent --once failed: ${(error as Error).message}`);
  }
}

const agent = new Agent(options);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    logger.info('stopping agent', { signal });
    void agent.stop().then(() => process.exit(0));
  });
}
await agent
  .start()
  .catch((error: Error) => fail(`agent did not start: ${error.message}`));
const closed = await agent.closed();
if (closed instanceof Error) fail(`NATS connection lost: ${closed.message}`);
