-- The cluster lists' page keys in the lists' order, with every column their
-- scope and filters read: an index-only scan finds the visible clusters, in
-- order, without reading their wide rows (about four to a heap page) or
-- sorting their names under the database's collation. Replaces 0002's,
-- which held the order but not the columns; nothing else reads it.
create index idx_clusters_name_scope
  on clusters (lower(name), id)
  include (client_id, environment_id, status, name);
drop index idx_clusters_name;
