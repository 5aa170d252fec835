/**
 * The agent's identity: PROXIMA_AGENT_ID when set, else the UUID kept in a
 * file (PROXIMA_AGENT_ID_FILE, default `{DATA_DIR}/agent-id`), generated
 * there on first run. The id is the cluster's identity in the backend (a
 * new id is a new cluster), so it must outlive restarts: in a cluster the
 * Deployment sets PROXIMA_AGENT_ID (infra/agent/README.md), since a pod's
 * filesystem does not survive a reschedule.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigError } from '../config.ts';
import { UUID_PATTERN } from '../patterns.ts';

export interface AgentIdSource {
  /** PROXIMA_AGENT_ID. */
  agentId?: string | undefined;
  /** Where a generated id is kept. */
  file: string;
}

export interface ResolvedAgentId {
  agentId: string;
  source: 'environment' | 'file' | 'generated';
}

async function readId(file: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const id = text.trim();
  if (!UUID_PATTERN.test(id)) {
    throw new ConfigError(
      `invalid configuration:\nPROXIMA_AGENT_ID_FILE: ${file} does not hold a UUID (remove it to generate a new agent id, or set PROXIMA_AGENT_ID)`,
    );
  }
  return id.toLowerCase();
}

/** The agent id, lower-cased as the backend stores it. */
export async function resolveAgentId(
  source: AgentIdSource,
): Promise<ResolvedAgentId> {
  if (source.agentId !== undefined) {
    return { agentId: source.agentId.toLowerCase(), source: 'environment' };
  }
  const kept = await readId(source.file);
  if (kept !== undefined) return { agentId: kept, source: 'file' };
  const agentId = randomUUID();
  await mkdir(dirname(source.file), { recursive: true });
  try {
    // wx: two agents starting together keep the first one's id.
    await writeFile(source.file, `${agentId}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      const raced = await readId(source.file);
      if (raced !== undefined) return { agentId: raced, source: 'file' };
    }
    throw new ConfigError(
      `invalid configuration:\nPROXIMA_AGENT_ID_FILE: cannot keep a generated agent id in ${source.file} (${(error as Error).message}); set PROXIMA_AGENT_ID`,
      { cause: error },
    );
  }
  return { agentId, source: 'generated' };
}
