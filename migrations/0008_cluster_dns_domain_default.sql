-- The spec's clusters table: dns_domain defaults to cluster.local, the
-- Kubernetes default, for an agent that does not report it. The sync
-- writes that default too (it names the column, so the column default
-- alone would not apply).

alter table clusters alter column dns_domain set default 'cluster.local';
update clusters set dns_domain = 'cluster.local' where dns_domain is null;
