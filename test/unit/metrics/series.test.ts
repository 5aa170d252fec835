import fc from 'fast-check';
import protobuf from 'protobufjs';
import snappy from 'snappyjs';
import { describe, expect, it } from 'vitest';
import { encodeRemoteWrite } from '../../../shared/metrics/remote-write.ts';
import { seriesOfSnapshot } from '../../../shared/metrics/series.ts';
import { encodeImportText } from '../../../shared/metrics/writer.ts';
import { parseInventory } from '../../../shared/wire/inventory.ts';

const STAMP = { clusterId: 'c1', environmentId: 'e1' };
const ids = { cluster_id: 'c1', environment_id: 'e1' };

const inventory = parseInventory({
  type: 'kubernetes',
  schema_version: 1,
  agent_id: '6d2f4c1e-8a3b-4d5e-9f60-7a8b9c0d1e2f',
  timestamp: '2026-05-01T10:00:00Z',
  cluster: { name: 'c' },
  nodes: [
    {
      name: 'n1',
      capacity: { cpu_millicores: 2000 },
      allocatable: { cpu_millicores: 1900 },
      usage: { cpu_millicores: 500, memory_bytes: 1 },
    },
    // No usage from metrics-server: no sample, never a 0.
    { name: 'n2', capacity: { cpu_millicores: 2000 } },
  ],
  workloads: [
    { namespace: 'shop', name: 'web', kind: 'Deployment', replicas_desired: 2 },
  ],
  pods: [
    {
      namespace: 'shop',
      name: 'web-a',
      phase: 'Running',
      node_name: 'n1',
      workload_kind: 'Deployment',
      workload_name: 'web',
      usage: { cpu_millicores: 125, memory_bytes: 2048 },
      containers: [{ name: 'app', restart_count: 3 }, { name: 'side' }],
    },
    // No known controller: no workload labels at all.
    { namespace: 'shop', name: 'stray', phase: 'Pending' },
  ],
});

/** remote.proto's messages, read by protobufjs, not by the hand encoder. */
const root = protobuf.parse(`
  syntax = "proto3";
  message WriteRequest { repeated TimeSeries timeseries = 1; }
  message TimeSeries { repeated Label labels = 1; repeated Sample samples = 2; }
  message Label { string name = 1; string value = 2; }
  message Sample { double value = 1; int64 timestamp = 2; }
`).root;

describe('seriesOfSnapshot', () => {
  it('derives each series the snapshot carries a figure for, stamped and without host_id', () => {
    expect(seriesOfSnapshot(inventory, STAMP)).toEqual([
      {
        name: 'k8s_workload_replicas',
        labels: {
          ...ids,
          namespace: 'shop',
          workload: 'web',
          workload_kind: 'Deployment',
          type: 'desired',
        },
        value: 2,
      },
      {
        name: 'node_cpu_usage_ratio',
        labels: { ...ids, node: 'n1' },
        value: 0.25,
      },
      {
        name: 'pod_cpu_usage_ratio',
        labels: {
          ...ids,
          namespace: 'shop',
          pod: 'web-a',
          workload: 'web',
          workload_kind: 'Deployment',
        },
        value: 0.125,
      },
      {
        name: 'pod_memory_working_set_bytes',
        labels: {
          ...ids,
          namespace: 'shop',
          pod: 'web-a',
          workload: 'web',
          workload_kind: 'Deployment',
        },
        value: 2048,
      },
      {
        name: 'container_restarts_total',
        labels: {
          ...ids,
          namespace: 'shop',
          pod: 'web-a',
          workload: 'web',
          workload_kind: 'Deployment',
          container: 'app',
        },
        value: 3,
      },
      {
        name: 'kubelet_pods',
        labels: { ...ids, node: 'n1', phase: 'Running' },
        value: 1,
      },
      { name: 'kubelet_pods', labels: { ...ids, phase: 'Pending' }, value: 1 },
    ]);
  });

  it('derives the same series from rows as sent as from the rows the schema outputs', () => {
    // A resync's unchanged rows reach the series as sent: a defaulted field
    // absent, null or set must give what the schema's output gives.
    const maybe = <T>(value: fc.Arbitrary<T>) =>
      fc.option(fc.option(value, { nil: null }), { nil: undefined });
    const figure = maybe(fc.integer({ min: 0, max: 5000 }));
    const amounts = maybe(
      fc.record(
        { cpu_millicores: figure, memory_bytes: figure },
        { requiredKeys: [] },
      ),
    );
    const name = fc.constantFrom('a', 'b', 'web', 'db-1');
    const drop = <T extends object>(row: T) =>
      Object.fromEntries(
        Object.entries(row).filter(([, v]) => v !== undefined),
      ) as T;
    const rows = fc.record({
      workloads: fc.array(
        fc
          .record({
            namespace: name,
            name,
            kind: fc.constantFrom('Deployment', 'StatefulSet'),
            replicas_desired: figure,
            replicas_ready: figure,
          })
          .map(drop),
        { maxLength: 4 },
      ),
      nodes: fc.array(
        fc
          .record({
            name,
            usage: amounts,
            capacity: amounts,
            allocatable: amounts,
          })
          .map(drop),
        { maxLength: 4 },
      ),
      pods: fc.array(
        fc
          .record({
            namespace: name,
            name,
            workload_name: maybe(name),
            workload_kind: maybe(fc.constantFrom('Deployment', '')),
            usage: amounts,
            containers: maybe(
              fc.array(fc.record({ name, restart_count: figure }).map(drop), {
                maxLength: 3,
              }),
            ),
            node_name: maybe(name),
            phase: maybe(fc.constantFrom('Running', 'Pending', '')),
          })
          .map(drop),
        { maxLength: 6 },
      ),
    });
    fc.assert(
      fc.property(rows, (sent) => {
        const normalized = parseInventory({
          type: 'kubernetes',
          schema_version: 1,
          agent_id: '6d2f4c1e-8a3b-4d5e-9f60-7a8b9c0d1e2f',
          timestamp: '2026-05-01T10:00:00Z',
          cluster: { name: 'c' },
          ...sent,
        });
        expect(seriesOfSnapshot(sent, STAMP)).toEqual(
          seriesOfSnapshot(normalized, STAMP),
        );
      }),
      { numRuns: 300 },
    );
  });
});

describe('series encodings', () => {
  const samples = [
    {
      name: 'kubelet_pods',
      labels: { phase: 'Running', cluster_id: 'c"1' },
      value: 4,
    },
  ];

  it('remote write is a snappy WriteRequest with labels sorted and __name__ included', () => {
    // Prepare: the message as remote.proto defines it, read independently.
    // Act
    const body = encodeRemoteWrite(samples, 1_777_000_000_123);
    // Assess
    const decoded = root
      .lookupType('WriteRequest')
      .toObject(
        root.lookupType('WriteRequest').decode(snappy.uncompress(body)),
        { longs: Number },
      );
    expect(decoded).toEqual({
      timeseries: [
        {
          labels: [
            { name: '__name__', value: 'kubelet_pods' },
            { name: 'cluster_id', value: 'c"1' },
            { name: 'phase', value: 'Running' },
          ],
          samples: [{ value: 4, timestamp: 1_777_000_000_123 }],
        },
      ],
    });
  });

  it('remote write decodes to the samples for any labels, values and time', () => {
    // Prepare: protobufjs reads the body independently of the hand encoder.
    const WriteRequest = root.lookupType('WriteRequest');
    const label = fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,20}$/);
    const sample = fc.record({
      name: label,
      labels: fc.dictionary(
        label.filter((name) => name !== '__name__'),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 300 }),
        { maxKeys: 8 },
      ),
      value: fc.double({ noNaN: true }),
    });
    fc.assert(
      fc.property(
        fc.array(sample, { maxLength: 20 }),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        (batch, time) => {
          // Act
          const body = encodeRemoteWrite(batch, time);
          // Assess
          const decoded = WriteRequest.toObject(
            WriteRequest.decode(snappy.uncompress(body)),
            { longs: String, defaults: true },
          );
          // What UTF-8 can carry: a lone surrogate becomes U+FFFD. The
          // decoder keeps a leading U+FEFF, as protobufjs does; by default
          // TextDecoder drops it as a byte order mark.
          const utf8 = (text: string) =>
            new TextDecoder('utf-8', { ignoreBOM: true }).decode(
              new TextEncoder().encode(text),
            );
          expect(decoded.timeseries ?? []).toEqual(
            batch.map((s) => ({
              labels: [
                { name: '__name__', value: s.name },
                ...Object.keys(s.labels)
                  .sort()
                  .map((name) => ({
                    name,
                    value: utf8(s.labels[name] as string),
                  })),
              ],
              samples: [{ value: s.value, timestamp: String(time) }],
            })),
          );
        },
      ),
      {
        numRuns: 100,
        // A value that starts with U+FEFF, which a decoder may take for a
        // byte order mark and drop.
        examples: [
          [[{ name: 'A', labels: { _: '\uFEFF\u0000' }, value: 0 }], 0],
        ],
      },
    );
  });

  it('the import text escapes label values', () => {
    expect(encodeImportText(samples, 5)).toBe(
      'kubelet_pods{phase="Running",cluster_id="c\\"1"} 4 5\n',
    );
  });
});
