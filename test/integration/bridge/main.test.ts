import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { queueDepth } from '../../helpers/sqs.ts';
import {
  eventually,
  inventoryBody,
  inventorySubject,
  type Stack,
  startStack,
  TEST_TIMEOUT_MS,
  WAIT_MS,
} from './support.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
let stack: Stack | undefined;
let child: ChildProcess | undefined;

afterEach(async () => {
  if (child !== undefined && child.exitCode === null) child.kill('SIGKILL');
  child = undefined;
  await stack?.stop();
  stack = undefined;
});

/** Runs functions/bridge/main.ts as ECS would, collecting its output. */
function runEntry(env: Record<string, string>) {
  const output = { text: '' };
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', 'functions/bridge/main.ts'],
    {
      cwd: root,
      env: { ...process.env, ...env, LOG_LEVEL: 'INFO' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  proc.stdout?.on('data', (chunk: Buffer) => {
    output.text += chunk.toString('utf8');
  });
  proc.stderr?.on('data', (chunk: Buffer) => {
    output.text += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => {
    proc.once('exit', (code) => resolve(code));
  });
  return { proc, output, exited };
}

describe('bridge entry point', { timeout: TEST_TIMEOUT_MS }, () => {
  it('forwards from its configuration and exits 0 on SIGTERM after draining', async () => {
    // Prepare
    stack = await startStack();
    const entry = runEntry({
      NATS_URL: stack.nats.url,
      NATS_CREATE_STREAM: 'true',
      QUEUE_URL: stack.sqs.queueUrl,
      CLAIM_BUCKET: stack.sqs.bucket,
      SQS_ENDPOINT: stack.sqs.endpoint,
      S3_ENDPOINT: stack.sqs.endpoint,
      BRIDGE_HEALTH_PORT: '0',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    });
    child = entry.proc;
    await eventually(
      'the bridge to start',
      () => entry.output.text.includes('"bridge started"'),
      2 * WAIT_MS,
    );
    await stack.publish(inventorySubject(), inventoryBody(2_000));
    await eventually('the queued message', async () => {
      return (await queueDepth(stack!.sqs.sqs, stack!.sqs.queueUrl)) === 1;
    });

    // Act
    entry.proc.kill('SIGTERM');
    const code = await entry.exited;

    // Assess
    expect(code).toBe(0);
    expect(entry.output.text).toContain('"bridge stopped"');
    const info = await stack.consumerInfo();
    expect(info.num_ack_pending).toBe(0);
    expect(info.ack_floor.stream_seq).toBe(1);
  });

  it('exits non-zero naming what is missing from its configuration', async () => {
    // Prepare
    const entry = runEntry({
      NATS_URL: 'nats://127.0.0.1:1',
      QUEUE_URL: '',
      CLAIM_BUCKET: '',
    });
    child = entry.proc;

    // Act
    const code = await entry.exited;

    // Assess
    expect(code).not.toBe(0);
    expect(entry.output.text).toMatch(/QUEUE_URL: required by the bridge/);
    expect(entry.output.text).toMatch(/CLAIM_BUCKET: required by the bridge/);
  });
});
