import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../shared/errors.ts';
import { timelineParameters } from '../../../shared/events/params.ts';
import {
  agentReportsLastSeen,
  timelineQuery,
} from '../../../shared/events/timeline.ts';
import { formatNanoTime, parseNanoTime } from '../../../shared/http/fields.ts';

const NOW = new Date('2026-10-01T12:00:00Z');
const NS = 1_000_000n;

function build(params: Record<string, string>) {
  return timelineQuery(timelineParameters.parse(params), NOW);
}

describe('parseNanoTime and formatNanoTime', () => {
  it.each([
    ['2026-10-01T12:00:00Z', '2026-10-01T12:00:00Z'],
    ['2026-10-01T12:00:00.5Z', '2026-10-01T12:00:00.5Z'],
    ['2026-10-01T12:00:00.123456789Z', '2026-10-01T12:00:00.123456789Z'],
    ['2026-10-01T14:00:00.000000001+02:00', '2026-10-01T12:00:00.000000001Z'],
    ['2026-10-01t12:00:00z', '2026-10-01T12:00:00Z'],
  ])('reads %s to the nanosecond', (text, normalized) => {
    // Act
    const ns = parseNanoTime(text);

    // Assess
    expect(ns).toBeDefined();
    expect(formatNanoTime(ns as bigint)).toBe(normalized);
  });

  it.each([
    '2026-10-01',
    '2026-10-01 12:00:00Z',
    '2026-10-01T12:00:00',
    '2026-10-01T12:00:00.1234567890Z',
    '2026-02-30T12:00:00Z',
    '2026-13-01T12:00:00Z',
    'yesterday',
  ])('refuses %s', (text) => {
    // Assess
    expect(parseNanoTime(text)).toBeUndefined();
  });
});

describe('timelineQuery', () => {
  it('defaults to the 24 hours before now and 200 events', () => {
    // Act
    const q = build({});

    // Assess
    expect(q.to).toBe(BigInt(NOW.getTime()) * NS);
    expect(q.to - q.from).toBe(86_400_000n * NS);
    expect(q.limit).toBe(200);
  });

  it('takes from 24 hours before a given to', () => {
    // Act
    const q = build({ to: '2026-09-01T00:00:00Z' });

    // Assess
    expect(formatNanoTime(q.from)).toBe('2026-08-31T00:00:00Z');
  });

  it('reads a workload with its kind and namespace', () => {
    // Act
    const q = build({
      namespace: 'shop',
      workload: 'api',
      workload_kind: 'Deployment',
    });

    // Assess
    expect(q.workload).toEqual({ kinds: ['Deployment'], name: 'api' });
  });

  it('accepts a window of exactly 14 days', () => {
    // Act
    const q = build({
      from: '2026-09-17T12:00:00Z',
      to: '2026-10-01T12:00:00Z',
    });

    // Assess
    expect(q.to - q.from).toBe(14n * 86_400_000n * NS);
  });

  /** [parameters, the message's start] */
  const refused: [Record<string, string>, string][] = [
    [{ namespace: '' }, 'namespace must be'],
    [{ namespace: 'Shop' }, 'namespace must be a DNS-1123 label'],
    [{ namespace: 'a.b' }, 'namespace must be a DNS-1123 label'],
    [{ involved_kind: 'ConfigMap' }, 'involved_kind must be one of'],
    [{ involved_kind: '' }, 'involved_kind must be one of'],
    [{ involved_name: 'API' }, 'involved_name must be a DNS-1123 subdomain'],
    [{ involved_name: '' }, 'involved_name must be'],
    [{ type: 'Error' }, 'type must be one of Normal, Warning'],
    [{ type: '' }, 'type must be one of'],
    [{ reason: 'Back-Off' }, 'reason must be 1-64 letters'],
    [{ reason: 'A'.repeat(65) }, 'reason must be 1-64 letters'],
    [{ reason: '' }, 'reason must be 1-64 letters'],
    [{ workload: 'api_x' }, 'workload must be a DNS-1123 subdomain'],
    [{ workload_kind: 'Job' }, 'workload_kind must be one of'],
    [{ from: 'yesterday' }, 'from must be an RFC 3339 time'],
    [{ to: '' }, 'to must be an RFC 3339 time'],
    [{ limit: '0' }, 'limit must be an integer from 1 to 1000'],
    [{ limit: '1001' }, 'limit must be an integer from 1 to 1000'],
    [{ limit: '10.5' }, 'limit must be an integer from 1 to 1000'],
    [{ limit: '' }, 'limit must be an integer'],
  ];

  it.each(refused)('refuses %j', (params, message) => {
    // Act
    const parsed = timelineParameters.safeParse(params);

    // Assess
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(
      new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
  });

  /** Rules between parameters: [parameters, message] */
  const crossRules: [Record<string, string>, string][] = [
    [{ workload: 'api', namespace: 'shop' }, 'workload needs workload_kind'],
    [
      { workload: 'api', workload_kind: 'Deployment' },
      'workload needs namespace',
    ],
    [
      {
        workload: 'api',
        workload_kind: 'Deployment',
        namespace: 'shop',
        involved_name: 'api',
      },
      'workload cannot be combined with involved_name',
    ],
    [{ workload_kind: 'Deployment' }, 'workload_kind needs workload'],
    [
      { from: '2026-10-01T12:00:00Z', to: '2026-10-01T12:00:00Z' },
      'from must be before to',
    ],
    [
      { from: '2026-10-01T12:00:00Z', to: '2026-10-01T11:00:00Z' },
      'from must be before to',
    ],
    [
      { from: '2026-09-17T12:00:00Z', to: '2026-10-01T12:00:00.000000001Z' },
      'the window from from to to may not exceed 14 days',
    ],
  ];

  it.each(crossRules)('refuses %j', (params, message) => {
    // Act
    const attempt = () => build(params);

    // Assess
    expect(attempt).toThrow(ValidationError);
    expect(attempt).toThrow(message);
  });
});

describe('agentReportsLastSeen', () => {
  it.each([
    ['v0.8.0', true],
    ['0.8.1', true],
    ['v1.0.0', true],
    ['v0.7.12', false],
    ['v0.10.0', true],
    ['dev', false],
    [null, false],
  ])('%s: %s', (version, expected) => {
    // Assess
    expect(agentReportsLastSeen(version)).toBe(expected);
  });
});
