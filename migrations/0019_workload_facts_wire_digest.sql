-- A workload's spec facts have their own digest of the bytes the agent sent
-- (the row's content_hash leaves them out, so a facts-only change never
-- rewrites the row). With it the sync tells a workload unchanged, and skips
-- validating it, without reading its facts (docs/decisions.md, issue #15).
alter table k8s_workloads add column spec_facts_wire_hash text;
