-- What a later snapshot of the cluster is compared with, beyond the clamped
-- last_snapshot_at: the applied snapshot's own stamp (before clamping) and
-- its JetStream stream sequence. For an agent whose clock runs more than a
-- minute fast, every stamp is clamped to processing time plus a minute, so
-- an older snapshot delivered late looks newer by the clamped time; it is
-- older when both its sequence and its stamp say so (shared/changes/rules.ts,
-- isNewerSnapshot).

alter table clusters
  add column last_snapshot_stamp timestamptz,
  add column last_stream_seq bigint;
