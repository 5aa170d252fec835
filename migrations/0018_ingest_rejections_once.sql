-- A refused message is recorded once, however often it is delivered: the
-- queue delivers at least once, and a worker that records a refusal and then
-- dies before the queue delete sees the same message again. A stream
-- sequence names one message of the stream, so (stage, subject, stream_seq)
-- is its identity; rows without a sequence (a record that carried none)
-- stay as they come. Earlier duplicates are folded to their first row.
delete from ingest_rejections r
using ingest_rejections keep
where r.stream_seq is not null
  and keep.stage = r.stage
  and keep.subject = r.subject
  and keep.stream_seq = r.stream_seq
  and (keep.received_at, keep.id) < (r.received_at, r.id);
create unique index uq_ingest_rejections_message
  on ingest_rejections (stage, subject, stream_seq)
  where stream_seq is not null;
