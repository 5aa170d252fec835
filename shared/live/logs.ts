/**
 * A logs reply as the route answers it: each raw line split into the
 * apiserver's timestamp (`ts`) and the text, the text secret-sanitized, one
 * line at a time (spec "Live Reads", logs).
 */
import { sanitizeMessage } from '../sanitize/secrets.ts';
import type { LogsResult } from './kube-query.ts';

export interface LogLine {
  /** The apiserver's RFC 3339 stamp as it sent it; null without one. */
  ts: string | null;
  text: string;
}

// `kubectl logs --timestamps` shape: RFC 3339 (nanoseconds, Z or an
// offset), one space, then the line as the container wrote it.
const STAMP =
  /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})) ?/;

/**
 * One raw line as {ts, text}. With `timestamps`, a line that does not start
 * with a stamp keeps all of its text and gets `ts: null`.
 */
export function splitLogLine(raw: string, timestamps: boolean): LogLine {
  const match = timestamps ? STAMP.exec(raw) : null;
  if (!match?.[1]) return { ts: null, text: sanitizeMessage(raw) };
  return {
    ts: match[1],
    text: sanitizeMessage(raw.slice(match[0].length)),
  };
}

export const UNSTAMPED_NOTE =
  "the cluster's agent predates log timestamps (v0.8.0): lines carry no time (ts: null)";

/** The route's `data` for a logs reply. */
export function logsData(
  result: LogsResult,
  request: { namespace: string; timestamps: boolean },
  reply: { notes: readonly string[]; observed_at: string },
) {
  const timestamps = request.timestamps && result.timestamps;
  const notes = [...reply.notes];
  if (!request.timestamps) notes.push(UNSTAMPED_NOTE);
  return {
    namespace: request.namespace,
    pod: result.pod,
    container: result.container,
    previous: result.previous,
    lines: result.lines.map((line) => splitLogLine(line, timestamps)),
    truncated: result.truncated,
    ...(result.containers === undefined
      ? {}
      : { containers: result.containers }),
    timestamps,
    notes,
    observed_at: reply.observed_at,
  };
}
