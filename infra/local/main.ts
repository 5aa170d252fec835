/**
 * `npm start`: the whole backend on this machine (see stack.ts). Ctrl-C
 * stops it cleanly; data stays in DATA_DIR (.data/) for the next start.
 */
import { getConfig } from '../../shared/config.ts';
import { LocalStackError, startLocalStack } from './stack.ts';

const say = (line: string) => console.log(`[local] ${line}`);

let stack: Awaited<ReturnType<typeof startLocalStack>> | undefined;
let stopping = false;
let stoppingSince = 0;

async function shutdown(signal: string): Promise<void> {
  if (stopping) {
    // One Ctrl-C can arrive twice (from the terminal and relayed by npm):
    // only a second press, a moment later, cuts the clean stop short.
    if (Date.now() - stoppingSince < 1_000) return;
    say(`${signal} again: exiting now`);
    process.exit(1);
  }
  stopping = true;
  stoppingSince = Date.now();
  say(`${signal}: stopping`);
  // Still starting: the start path stops what it started once it returns.
  if (stack === undefined) return;
  try {
    await stack?.stop();
    say('stopped');
    process.exit(0);
  } catch (error) {
    console.error(`[local] stop failed: ${String(error)}`);
    process.exit(1);
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => void shutdown(signal));
}

try {
  const config = getConfig();
  stack = await startLocalStack(config, { say });
  if (stopping) {
    await stack.stop();
    say('stopped');
    process.exit(0);
  }
  const seed =
    stack.natsUrl === 'nats://127.0.0.1:4222'
      ? 'npm run seed'
      : `NATS_URL=${stack.natsUrl} npm run seed`;
  const banner = [
    '',
    'k8s-inventory local stack is up',
    `  API         ${stack.apiUrl}   (GET /healthz)`,
    `  NATS        ${stack.natsUrl}`,
    `  PostgreSQL  ${stack.databaseUrl}`,
    `  Metrics     ${stack.metricsUrl ?? 'none: the metrics route answers 503 (apt-get install -y victoria-metrics, or set METRICS_URL)'}`,
    `  Seed        ${seed}   (internal development test-cluster; --size small|medium|large, --file x.json, --gzip)`,
    '  Token       npm run token -- --email you@example.com',
    '              npm run grant -- --email you@example.com --role viewer --client internal',
    '  Stop        Ctrl-C',
    '',
  ];
  console.log(banner.join('\n'));
} catch (error) {
  if (error instanceof LocalStackError) {
    console.error(`[local] ${error.message}`);
  } else {
    console.error('[local] the local stack did not start:', error);
  }
  process.exit(1);
}
