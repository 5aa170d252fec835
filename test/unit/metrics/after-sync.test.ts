import { describe, expect, it } from 'vitest';
import { backgroundSeriesWrites } from '../../../shared/metrics/after-sync.ts';
import type { SeriesWriter } from '../../../shared/metrics/writer.ts';
import { parseInventory } from '../../../shared/wire/inventory.ts';

const inventory = parseInventory({
  type: 'kubernetes',
  schema_version: 1,
  agent_id: '6d2f4c1e-8a3b-4d5e-9f60-7a8b9c0d1e2f',
  timestamp: '2026-05-01T10:00:00Z',
  cluster: { name: 'c' },
  workloads: [
    { namespace: 'shop', name: 'web', kind: 'Deployment', replicas_desired: 2 },
  ],
});
const committed = {
  clusterId: 'c1',
  environmentId: 'e1',
  snapshotAt: new Date('2026-05-01T10:00:00Z'),
};

/** A writer whose writes end when the test says, recording each start. */
function heldWriter() {
  const started: number[] = [];
  const release: ((failure?: Error) => void)[] = [];
  const writer: SeriesWriter = {
    write: (_samples, timestampMs) =>
      new Promise<void>((resolve, reject) => {
        started.push(timestampMs);
        release.push((failure) => (failure ? reject(failure) : resolve()));
      }),
  };
  return { writer, started, release };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('backgroundSeriesWrites', () => {
  it('returns before the write starts, and settles once it ended', async () => {
    // Prepare
    const { writer, started, release } = heldWriter();
    const writes = backgroundSeriesWrites(writer);
    let settled = false;

    // Act
    await writes.enqueue(inventory, committed);
    const startedOnReturn = started.length;
    const done = writes.settled().then(() => {
      settled = true;
    });
    await tick();
    await tick();
    const settledWhileHeld = settled;
    release[0]?.();
    await done;

    // Assess
    expect(startedOnReturn).toBe(0);
    expect(started).toHaveLength(1);
    expect(settledWhileHeld).toBe(false);
    expect(settled).toBe(true);
  });

  it('holds a record back while maxPending writes are busy', async () => {
    // Prepare
    const { writer, started, release } = heldWriter();
    const writes = backgroundSeriesWrites(writer, 2);
    await writes.enqueue(inventory, committed);
    await writes.enqueue(inventory, committed);
    let third = false;

    // Act
    const queued = writes.enqueue(inventory, committed).then(() => {
      third = true;
    });
    await tick();
    await tick();
    const queuedWhileFull = third;
    release[0]?.(new Error('store down'));
    await queued;
    await tick();
    release[1]?.();
    release[2]?.();
    await writes.settled();

    // Assess: a failed write frees its slot like any other.
    expect(queuedWhileFull).toBe(false);
    expect(third).toBe(true);
    expect(started).toHaveLength(3);
  });
});
