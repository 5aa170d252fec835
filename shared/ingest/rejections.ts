/**
 * Keeps every refused inventory message for inspection: where it came from
 * (the subject, and the tenant and agent read from it when it can be), the
 * stage that refused it and why. Never the payload: the reason is the only
 * text that may quote from it, and it is built by the parsers to name a
 * field and a rule, not to carry values.
 */
import { type Queryable, query } from '../db/pool.ts';
import { logger } from '../observability/logger.ts';
import { MetricName, MetricUnit, metrics } from '../observability/metrics.ts';
import { parseSubject } from '../wire/subject.ts';

export type RejectionStage = 'bridge' | 'sync';

export interface Rejection {
  stage: RejectionStage;
  subject: string;
  streamSeq?: number | undefined;
  reason: string;
  sizeBytes?: number | undefined;
}

/** Bounds on what one row may hold; a hostile subject is not stored whole. */
const MAX_SUBJECT_CHARS = 512;
const MAX_REASON_CHARS = 2_000;
const MAX_TOKEN_CHARS = 128;

// The only conflict possible is uq_ingest_rejections_message (the id is
// random). No conflict target: naming one needs SELECT on its columns, and
// the ingest roles may only insert here.
const INSERT_REJECTION = `
  insert into ingest_rejections
    (stage, subject, stream_seq, client_slug, env_slug, agent_id, reason, size_bytes)
  values ($1, $2, $3, $4, $5, $6, $7, $8)
  on conflict do nothing`;

interface SubjectParts {
  clientSlug: string | null;
  envSlug: string | null;
  agentId: string | null;
}

/**
 * The tenant and agent named by a subject: exact when the subject is valid,
 * else positional when it at least has the `proxima.<c>.<e>.<a>.` shape, so
 * an operator can still find who sent a bad one.
 */
export function subjectParts(subject: string): SubjectParts {
  try {
    const parsed = parseSubject(subject);
    return {
      clientSlug: parsed.clientSlug,
      envSlug: parsed.envSlug,
      agentId: parsed.agentId,
    };
  } catch {
    const tokens = subject.split('.');
    if (tokens[0] !== 'proxima' || tokens.length < 4) {
      return { clientSlug: null, envSlug: null, agentId: null };
    }
    const token = (i: number) => {
      const value = tokens[i];
      return value ? value.slice(0, MAX_TOKEN_CHARS) : null;
    };
    return { clientSlug: token(1), envSlug: token(2), agentId: token(3) };
  }
}

/**
 * Stores one rejection (once per message: a redelivered refusal, known by
 * its stage, subject and stream sequence, adds no row) and counts it on `proxima_k8s_ingest_rejections_total`
 * (dimension `stage`). Throws when the row cannot be written, so the caller
 * retries the message instead of losing the refusal.
 */
export async function recordRejection(
  db: Queryable,
  rejection: Rejection,
): Promise<void> {
  const parts = subjectParts(rejection.subject);
  const sizeBytes =
    rejection.sizeBytes !== undefined &&
    Number.isSafeInteger(rejection.sizeBytes) &&
    rejection.sizeBytes >= 0 &&
    rejection.sizeBytes <= 2_147_483_647
      ? rejection.sizeBytes
      : null;
  await query(db, INSERT_REJECTION, [
    rejection.stage,
    rejection.subject.slice(0, MAX_SUBJECT_CHARS),
    rejection.streamSeq ?? null,
    parts.clientSlug,
    parts.envSlug,
    parts.agentId,
    rejection.reason.slice(0, MAX_REASON_CHARS),
    sizeBytes,
  ]);
  const single = metrics.singleMetric();
  single.addDimension('stage', rejection.stage);
  single.addMetric(MetricName.ingestRejections, MetricUnit.Count, 1);
  logger.debug('ingest rejection recorded', {
    stage: rejection.stage,
    subject: rejection.subject.slice(0, MAX_SUBJECT_CHARS),
  });
}

/**
 * The bridge's `onReject`: records a message it terminated (a bad subject, or
 * one it could not deliver by its last attempt) with stage `bridge`.
 */
export function bridgeRejectionRecorder(
  db: () => Promise<Queryable> | Queryable,
): (info: {
  subject: string;
  reason: string;
  streamSeq?: number;
  sizeBytes?: number;
}) => Promise<void> {
  return async (info) =>
    recordRejection(await db(), {
      stage: 'bridge',
      subject: info.subject,
      streamSeq: info.streamSeq,
      reason: info.reason,
      sizeBytes: info.sizeBytes,
    });
}
