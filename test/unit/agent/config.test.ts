import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveAgentId } from '../../../shared/agent/agent-id.ts';
import { ConfigError, parseConfig } from '../../../shared/config.ts';

let dir: string | undefined;

afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("the agent's configuration", () => {
  it('reads the sync interval as a duration, 5 minutes by default', () => {
    // Act
    const defaults = parseConfig({});
    const set = parseConfig({ PROXIMA_K8S_SYNC_INTERVAL: '1h30m' });

    // Assess
    expect(defaults.PROXIMA_K8S_SYNC_INTERVAL).toBe(300_000);
    expect(set.PROXIMA_K8S_SYNC_INTERVAL).toBe(5_400_000);
    expect(defaults.PROXIMA_K8S_POD_LIMIT).toBe(5000);
    expect(defaults.PROXIMA_K8S_EXCLUDE_NAMESPACES).toEqual([]);
  });

  it('splits the excluded namespaces at commas and drops blanks', () => {
    // Act
    const config = parseConfig({
      PROXIMA_K8S_EXCLUDE_NAMESPACES: ' kube-system, monitoring,,',
    });

    // Assess
    expect(config.PROXIMA_K8S_EXCLUDE_NAMESPACES).toEqual([
      'kube-system',
      'monitoring',
    ]);
  });

  it('names every bad agent variable at once', () => {
    // Act
    const parse = () =>
      parseConfig({
        PROXIMA_K8S_SYNC_INTERVAL: '5 minutes',
        PROXIMA_CLIENT: 'Acme',
        PROXIMA_AGENT_ID: 'agent-1',
        PROXIMA_K8S_POD_LIMIT: '0',
      });

    // Assess
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(
      /PROXIMA_K8S_SYNC_INTERVAL: must be a duration[\s\S]*/,
    );
    const message = (() => {
      try {
        parse();
      } catch (error) {
        return (error as Error).message;
      }
    })();
    for (const name of [
      'PROXIMA_K8S_SYNC_INTERVAL',
      'PROXIMA_CLIENT',
      'PROXIMA_AGENT_ID',
      'PROXIMA_K8S_POD_LIMIT',
    ]) {
      expect(message).toContain(`${name}:`);
    }
  });
});

describe('resolveAgentId', () => {
  it('uses PROXIMA_AGENT_ID, lower-cased, and writes no file', async () => {
    // Prepare
    dir = await mkdtemp(join(tmpdir(), 'agent-id-'));
    const file = join(dir, 'agent-id');
    const id = randomUUID().toUpperCase();

    // Act
    const resolved = await resolveAgentId({ agentId: id, file });

    // Assess
    expect(resolved).toEqual({
      agentId: id.toLowerCase(),
      source: 'environment',
    });
    await expect(stat(file)).rejects.toThrow();
  });

  it('generates an id once, keeps it in the file, and reads it back on the next start', async () => {
    // Prepare
    dir = await mkdtemp(join(tmpdir(), 'agent-id-'));
    const file = join(dir, 'nested', 'agent-id');

    // Act
    const first = await resolveAgentId({ file });
    const second = await resolveAgentId({ file });

    // Assess
    expect(first.source).toBe('generated');
    expect(second).toEqual({ agentId: first.agentId, source: 'file' });
    expect((await readFile(file, 'utf8')).trim()).toBe(first.agentId);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('refuses a file that does not hold a UUID, naming the variable', async () => {
    // Prepare
    dir = await mkdtemp(join(tmpdir(), 'agent-id-'));
    const file = join(dir, 'agent-id');
    await writeFile(file, 'not-an-id\n');

    // Act
    const resolving = resolveAgentId({ file });

    // Assess
    await expect(resolving).rejects.toThrow(
      /PROXIMA_AGENT_ID_FILE: .* does not hold a UUID/,
    );
  });
});
