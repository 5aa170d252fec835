/**
 * The bridge process (ECS Fargate): NATS JetStream → SQS FIFO. Exits 0 after
 * SIGTERM once in-flight messages are settled and the connection drained;
 * exits 1 when the NATS connection is lost for good, so the service restarts.
 */
import { checkConfig } from '../../shared/config.ts';
import { createBridgeFromConfig } from '../../shared/ingest/bridge-config.ts';
import { logger } from '../../shared/observability/logger.ts';

const bridge = createBridgeFromConfig(checkConfig());

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    logger.info('stopping bridge', { signal });
    void bridge.stop();
  });
}

bridge.closed().then(
  () => process.exit(0),
  (error: unknown) => {
    logger.error('bridge ended', { error: String(error) });
    process.exit(1);
  },
);

await bridge.start();
