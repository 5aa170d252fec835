import { describe, expect, it } from 'vitest';
import { LiveReadError } from '../../../shared/errors.ts';
import {
  type AgentState,
  checkAgent,
  isAtLeast,
} from '../../../shared/live/gates.ts';

const agent = (version: string | null, status = 'connected'): AgentState => ({
  agent_id: '5f1c8e0e-8a35-4f5b-9a53-2b9a9d0e7c11',
  agent_status: status,
  agent_version: version,
  last_seen_at: new Date('2026-10-01T09:30:00Z'),
});

function refusal(run: () => unknown): LiveReadError {
  try {
    run();
  } catch (error) {
    if (error instanceof LiveReadError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('isAtLeast', () => {
  it.each([
    ['v0.8.0', 'v0.8.0', true],
    ['v0.8.1', 'v0.8.0', true],
    ['v0.10.0', 'v0.8.0', true],
    ['v1.0.0', 'v0.8.0', true],
    ['0.8.0', 'v0.8.0', true],
    ['v0.8.0+build.7', 'v0.8.0', true],
    ['v0.7.12', 'v0.8.0', false],
    ['v0.8.0-rc.1', 'v0.8.0', false],
    ['v0.7.12', 'v0.7.12', true],
    ['v0.7.9', 'v0.7.12', false],
    ['dev', 'v0.7.12', false],
    [null, 'v0.7.12', false],
  ])('%s against %s is %s', (version, required, expected) => {
    expect(isAtLeast(version, required)).toBe(expected);
  });
});

describe('checkAgent', () => {
  it('asks a v0.8.0 agent for timestamps on logs', () => {
    expect(checkAgent(agent('v0.8.0'), 'logs')).toEqual({ timestamps: true });
  });

  it('serves a plain tail from v0.7.12 without timestamps', () => {
    expect(checkAgent(agent('v0.7.12'), 'logs')).toEqual({ timestamps: false });
  });

  it('refuses since_time below v0.8.0 with both versions in the details', () => {
    const error = refusal(() =>
      checkAgent(agent('v0.7.12'), 'logs', { sinceTime: true }),
    );
    expect(error.status).toBe(409);
    expect(error.code).toBe('agent_too_old');
    expect(error.details).toEqual({
      required_version: 'v0.8.0',
      agent_version: 'v0.7.12',
    });
  });

  it('refuses manifest and revisions below v0.8.0', () => {
    for (const route of ['manifest', 'revisions'] as const) {
      expect(refusal(() => checkAgent(agent('v0.7.99'), route)).code).toBe(
        'agent_too_old',
      );
    }
  });

  it('checks the connection before the version', () => {
    const error = refusal(() =>
      checkAgent(agent('v0.1.0', 'disconnected'), 'manifest'),
    );
    expect(error.code).toBe('agent_offline');
    expect(error.message).toContain('2026-10-01T09:30:00.000Z');
    expect(error.details).toEqual({ last_seen_at: '2026-10-01T09:30:00.000Z' });
  });

  it('answers no_agent for a cluster without one', () => {
    const error = refusal(() =>
      checkAgent({ ...agent('v0.9.0'), agent_id: null }, 'logs'),
    );
    expect(error.code).toBe('no_agent');
    expect(error.status).toBe(409);
  });
});
