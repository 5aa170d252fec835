/**
 * The agent's version, sent as `agent_version` with every inventory and
 * live-read reply. The backend gates live reads on it (manifest and
 * revisions need v0.8.0, since_time and timestamps too), so it follows the
 * spec's agent line: this agent speaks every query of wire contract v1.1.
 */
export const AGENT_VERSION = 'v0.9.0';
