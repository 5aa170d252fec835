import { describe, expect, it } from 'vitest';
import {
  logsData,
  splitLogLine,
  UNSTAMPED_NOTE,
} from '../../../shared/live/logs.ts';

describe('splitLogLine', () => {
  it('splits the apiserver stamp from the text', () => {
    expect(
      splitLogLine('2026-10-01T11:59:01.123456789Z GET /healthz 200', true),
    ).toEqual({
      ts: '2026-10-01T11:59:01.123456789Z',
      text: 'GET /healthz 200',
    });
  });

  it('keeps a stamp with an offset and no fraction', () => {
    expect(splitLogLine('2026-10-01T11:59:01+02:00 x', true)).toEqual({
      ts: '2026-10-01T11:59:01+02:00',
      text: 'x',
    });
  });

  it('gives a line without a stamp ts null and all its text', () => {
    expect(splitLogLine('  at Object.<anonymous> (a.js:1)', true)).toEqual({
      ts: null,
      text: '  at Object.<anonymous> (a.js:1)',
    });
  });

  it('does not read a stamp out of an unstamped read', () => {
    expect(
      splitLogLine('2026-10-01T11:59:01Z from the app itself', false),
    ).toEqual({
      ts: null,
      text: '2026-10-01T11:59:01Z from the app itself',
    });
  });

  it('sanitizes the text and never the stamp', () => {
    const line = splitLogLine(
      '2026-10-01T11:59:01Z login ok password=hunter2hunter2',
      true,
    );
    expect(line.ts).toBe('2026-10-01T11:59:01Z');
    expect(line.text).not.toContain('hunter2');
    expect(line.text).toContain('login ok password=');
  });
});

describe('logsData', () => {
  it('adds the unstamped note when timestamps were not asked for', () => {
    const data = logsData(
      {
        pod: 'p',
        container: 'c',
        previous: false,
        lines: ['a'],
        truncated: false,
        timestamps: false,
      },
      { namespace: 'ns', timestamps: false },
      { notes: ['from the agent'], observed_at: '2026-10-01T12:00:00Z' },
    );
    expect(data.notes).toEqual(['from the agent', UNSTAMPED_NOTE]);
    expect(data.timestamps).toBe(false);
    expect(data.lines).toEqual([{ ts: null, text: 'a' }]);
    expect('containers' in data).toBe(false);
  });
});
