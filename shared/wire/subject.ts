/**
 * The NATS subject of an inventory: `proxima.{client}.{env}.{agent}.kubernetes`.
 * It is the authority for tenant and agent (the body's agent_id must equal
 * it), so a subject that breaks a rule is refused, naming the rule.
 */
import { RejectedInventoryError } from '../errors.ts';
import { DNS_1123_LABEL, UUID_PATTERN } from '../patterns.ts';

export interface InventorySubject {
  clientSlug: string;
  envSlug: string;
  /** Lower-cased, as the parsed body's agent_id. */
  agentId: string;
}

const PREFIX = 'proxima';
const SUFFIX = 'kubernetes';
const SHAPE = `${PREFIX}.<client_slug>.<env_slug>.<agent_id>.${SUFFIX}`;

/** SQS caps a MessageGroupId at 128 characters. */
const GROUP_ID_MAX = 128;

function shown(value: string): string {
  const cut = value.length > 80 ? `${value.slice(0, 80)}…` : value;
  return JSON.stringify(cut);
}

function checkSlug(what: string, value: string): void {
  if (!DNS_1123_LABEL.test(value)) {
    throw new RejectedInventoryError(
      `subject: ${what} ${shown(value)} is not a DNS-1123 label (lowercase letters, digits and '-', 1-63 characters, starting and ending with a letter or digit)`,
    );
  }
}

/** The subject an agent publishes its inventory on. */
export function inventorySubject(
  clientSlug: string,
  envSlug: string,
  agentId: string,
): string {
  return `${PREFIX}.${clientSlug}.${envSlug}.${agentId}.${SUFFIX}`;
}

/** Splits and checks a subject, or throws `RejectedInventoryError`. */
export function parseSubject(subject: string): InventorySubject {
  const tokens = subject.split('.');
  if (tokens.length !== 5) {
    throw new RejectedInventoryError(
      `subject ${shown(subject)}: expected 5 tokens (${SHAPE}), got ${tokens.length}`,
    );
  }
  const [prefix, clientSlug, envSlug, agentId, suffix] = tokens as [
    string,
    string,
    string,
    string,
    string,
  ];
  if (prefix !== PREFIX) {
    throw new RejectedInventoryError(
      `subject ${shown(subject)}: expected to start with "${PREFIX}." (${SHAPE})`,
    );
  }
  if (suffix !== SUFFIX) {
    throw new RejectedInventoryError(
      `subject ${shown(subject)}: expected to end with ".${SUFFIX}" (${SHAPE})`,
    );
  }
  checkSlug('client slug', clientSlug);
  checkSlug('environment slug', envSlug);
  if (!UUID_PATTERN.test(agentId)) {
    throw new RejectedInventoryError(
      `subject: agent_id ${shown(agentId)} is not a UUID`,
    );
  }
  return { clientSlug, envSlug, agentId: agentId.toLowerCase() };
}

/**
 * The SQS FIFO MessageGroupId: one group per agent, so one cluster's
 * snapshots stay in order. Two 63-character slugs and a UUID exceed SQS's
 * 128-character cap; then each slug is cut to fit. The full agent UUID is
 * always kept, so distinct agents never share a group.
 */
export function queueGroupId(parsed: InventorySubject): string {
  const { clientSlug, envSlug, agentId } = parsed;
  const full = `${clientSlug}.${envSlug}.${agentId}`;
  if (full.length <= GROUP_ID_MAX) return full;
  const room = Math.floor((GROUP_ID_MAX - agentId.length - 2) / 2);
  return `${clientSlug.slice(0, room)}.${envSlug.slice(0, room)}.${agentId}`;
}
