/**
 * The agent checks of a live read, after access and validation and before
 * the agent is asked (spec "Live Reads", Agent versions and the 409 rows):
 *
 * 1. no_agent: a cluster without an agent. A cluster row here always has
 *    one (clusters.agent_id is not null: a row exists because its agent
 *    reported; docs/decisions.md), so this check cannot fail.
 * 2. agent_offline: the stale-cluster sweep marked the agent disconnected;
 *    the message names the last-seen time.
 * 3. agent_too_old: the version of the cluster's last inventory is older
 *    than the query needs. manifest and revisions need v0.8.0, logs v0.7.12,
 *    and since_time needs v0.8.0 (an older agent would silently ignore it).
 *    An agent that reported no version, or one that cannot be read, passes
 *    no gate: it may be anything, and a silent misread is what the gates
 *    exist to prevent.
 *
 * A plain tail on an agent from v0.7.12 up to v0.8.0 is still served, without
 * timestamps (`timestamps: false`, `ts: null` and a note).
 */
import { LiveReadError } from '../errors.ts';

export type LiveRoute = 'manifest' | 'revisions' | 'logs';

export const REQUIRED_VERSION = {
  manifest: 'v0.8.0',
  revisions: 'v0.8.0',
  logs: 'v0.7.12',
  /** since_time and timestamps on logs. */
  stampedLogs: 'v0.8.0',
} as const;

/** What the gates read of the cluster row. */
export interface AgentState {
  agent_id: string | null;
  agent_status: string;
  agent_version: string | null;
  last_seen_at: Date | null;
}

const SEMVER =
  /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

interface Version {
  core: [number, number, number];
  prerelease: string | undefined;
}

function parseVersion(text: string | null): Version | undefined {
  const match = text === null ? null : SEMVER.exec(text.trim());
  if (!match) return undefined;
  return {
    core: [Number(match[1]), Number(match[2]), Number(match[3])],
    prerelease: match[4],
  };
}

/**
 * Whether `version` is at least `required` (a release). A pre-release of
 * the required version (v0.8.0-rc.1) is older than it, as semver orders them.
 */
export function isAtLeast(version: string | null, required: string): boolean {
  const have = parseVersion(version);
  const want = parseVersion(required);
  if (!have || !want) return false;
  for (let i = 0; i < 3; i++) {
    const a = have.core[i] ?? 0;
    const b = want.core[i] ?? 0;
    if (a !== b) return a > b;
  }
  return have.prerelease === undefined || want.prerelease !== undefined;
}

function tooOld(required: string, agent: AgentState, what: string) {
  return new LiveReadError(
    'agent_too_old',
    `${what} needs cluster agent ${required} or later; this cluster's agent is ${agent.agent_version ?? 'of an unknown version'}`,
    {
      details: {
        required_version: required,
        agent_version: agent.agent_version,
      },
    },
  );
}

export interface GateOutcome {
  /** Whether the agent is asked for apiserver timestamps (logs only). */
  timestamps: boolean;
}

/**
 * Throws the first agent check that fails (409); otherwise says whether a
 * logs read can ask for timestamps.
 */
export function checkAgent(
  agent: AgentState,
  route: LiveRoute,
  options: { sinceTime?: boolean } = {},
): GateOutcome {
  if (agent.agent_id === null) {
    throw new LiveReadError('no_agent', 'the cluster has no cluster agent');
  }
  if (agent.agent_status !== 'connected') {
    const seen = agent.last_seen_at?.toISOString() ?? null;
    throw new LiveReadError(
      'agent_offline',
      seen === null
        ? "the cluster's agent is not connected (never seen)"
        : `the cluster's agent is not connected (last seen ${seen})`,
      { details: { last_seen_at: seen } },
    );
  }
  const required = REQUIRED_VERSION[route];
  if (!isAtLeast(agent.agent_version, required)) {
    throw tooOld(required, agent, `the live ${route} read`);
  }
  if (route !== 'logs') return { timestamps: false };
  const stamped = isAtLeast(agent.agent_version, REQUIRED_VERSION.stampedLogs);
  if (options.sinceTime && !stamped) {
    throw tooOld(REQUIRED_VERSION.stampedLogs, agent, 'since_time');
  }
  return { timestamps: stamped };
}
