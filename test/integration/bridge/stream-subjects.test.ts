import { AckPolicy, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { STREAM_SUBJECTS } from '../../../shared/ingest/bridge/index.ts';
import {
  OWNED_STREAM_MAX_AGE_MS,
  subjectMatches,
} from '../../../shared/ingest/bridge/nats-setup.ts';
import { captureStdout } from '../sweeps/support.ts';
import {
  inventoryBody,
  inventorySubject,
  STREAM,
  type Stack,
  startStack,
  TEST_TIMEOUT_MS,
} from './support.ts';

let stack: Stack | undefined;

afterEach(async () => {
  await stack?.stop();
  stack = undefined;
});

const COMMAND_SUBJECT =
  'proxima.system.commands.8d6f2f5e-1a2b-4c3d-9e8f-000000000001';

describe('the EVENTS stream the bridge owns', {
  timeout: TEST_TIMEOUT_MS,
}, () => {
  it('is created on five-token subjects, so a request on a command subject gets no stream acknowledgement', async () => {
    // Prepare
    stack = await startStack();
    await stack.startBridge();

    // Act: a request nobody answers must fail as "no responders", not be
    // acknowledged by JetStream as a stored publish.
    const request = stack.nc.request(COMMAND_SUBJECT, '{}', { timeout: 2_000 });

    // Assess
    await expect(request).rejects.toThrow(/no responders/i);
    const jsm = await jetstreamManager(stack.nc);
    const info = await jsm.streams.info(STREAM);
    expect(info.config.subjects).toEqual(STREAM_SUBJECTS);
    // An acknowledgement does not remove a message from a limits stream:
    // only the age does.
    expect(info.config.max_age).toBe(nanos(24 * 3_600_000));
  });

  it('has an existing stream on proxima.> narrowed at start and given its age limit, and still takes inventories', async () => {
    // Prepare: the stream as earlier versions created it.
    stack = await startStack();
    const jsm = await jetstreamManager(stack.nc);
    await jsm.streams.add({
      name: STREAM,
      subjects: ['proxima.>'],
      storage: StorageType.File,
    });
    const swallowed = await stack.nc.request(COMMAND_SUBJECT, '{}', {
      timeout: 2_000,
    });
    expect(swallowed.json<{ stream?: string }>().stream).toBe(STREAM);

    // Act
    await stack.startBridge();

    // Assess
    const info = await jsm.streams.info(STREAM);
    expect(info.config.subjects).toEqual(['proxima.*.*.*.*']);
    expect(info.config.max_age).toBe(nanos(OWNED_STREAM_MAX_AGE_MS));
    await expect(
      stack.nc.request(COMMAND_SUBJECT, '{}', { timeout: 2_000 }),
    ).rejects.toThrow(/no responders/i);
    const seq = await stack.publish(inventorySubject(), inventoryBody(1_000));
    expect(seq).toBeGreaterThan(1);
  });

  it('gives a stream it created before the age limit existed that limit', async () => {
    // Prepare: the stream as the last version created it (kept for ever).
    stack = await startStack();
    const jsm = await jetstreamManager(stack.nc);
    await jsm.streams.add({
      name: STREAM,
      subjects: STREAM_SUBJECTS,
      storage: StorageType.File,
    });

    // Act
    await stack.startBridge();

    // Assess
    const info = await jsm.streams.info(STREAM);
    expect(info.config.max_age).toBe(nanos(OWNED_STREAM_MAX_AGE_MS));
    expect(info.config.subjects).toEqual(STREAM_SUBJECTS);
  });

  it('leaves a stream it does not own as it is', async () => {
    // Prepare
    stack = await startStack();
    const jsm = await jetstreamManager(stack.nc);
    await jsm.streams.add({
      name: STREAM,
      subjects: ['proxima.>'],
      storage: StorageType.File,
    });
    const { consumers } = jsm;
    await consumers.add(STREAM, {
      durable_name: 'k8s-inventory-bridge',
      filter_subject: 'proxima.*.*.*.kubernetes',
      ack_policy: AckPolicy.Explicit,
    });

    const output = captureStdout();

    // Act
    try {
      await stack.startBridge({ createStream: false });
    } finally {
      output.restore();
    }

    // Assess
    const info = await jsm.streams.info(STREAM);
    expect(info.config.subjects).toEqual(['proxima.>']);
    expect(info.config.max_age).toBe(0);
    const logged = output
      .json()
      .find((line) => line.level === 'ERROR' && line.stream === STREAM);
    expect(logged?.message).toMatch(/proxima\.system\.commands/);
  });
});

describe('subjectMatches', () => {
  it('matches NATS wildcards token by token', () => {
    expect(subjectMatches('proxima.>', COMMAND_SUBJECT)).toBe(true);
    expect(subjectMatches('proxima.*.*.*.*', COMMAND_SUBJECT)).toBe(false);
    expect(subjectMatches('proxima.*.*.*.*', 'proxima.a.b.c.kubernetes')).toBe(
      true,
    );
    expect(subjectMatches('proxima.system.>', 'proxima.system')).toBe(false);
    expect(subjectMatches('proxima.*.commands.*', COMMAND_SUBJECT)).toBe(true);
  });
});
