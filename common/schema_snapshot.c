/* What `snapshot` reads from the IOMMU's live translation tables (tracer/snapshot_store.c writes
 * it): per session of kind 'snapshot', each group's domain and that domain's leaves as runs. */
#include "common/schema.h"

/* SQL text, laid out as SQL */
/* clang-format off */
static const char snapshot_sql[] =
/* One row per domain read (a domain two groups share is read once). */
"CREATE TABLE IF NOT EXISTS snapshot_domains ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  domain_ptr INTEGER NOT NULL,"		/* the kernel's pointer: an identity only */
"  kind TEXT NOT NULL,"			/* translated | identity | blocked | unreadable */
"  domain_type INTEGER,"			/* iommu_domain.type */
"  pgsize_bitmap INTEGER,"
"  format TEXT,"				/* the table's format: vtd (NULL: no table read) */
"  levels INTEGER,"
"  entries_read INTEGER NOT NULL DEFAULT 0,"
"  leaves INTEGER NOT NULL DEFAULT 0,"
"  runs INTEGER NOT NULL DEFAULT 0,"
"  consistent INTEGER NOT NULL,"		/* 0: maps or unmaps ran during every read */
"  changes_seen_in TEXT,"			/* domain | any: where those were counted */
"  attempts INTEGER NOT NULL,"
"  PRIMARY KEY (session_id, domain_ptr));"
/* Each IOMMU group read and the domain it had (NULL: none); its devices are in devices. */
"CREATE TABLE IF NOT EXISTS snapshot_groups ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  group_id INTEGER NOT NULL,"
"  domain_ptr INTEGER,"
"  PRIMARY KEY (session_id, group_id));"
/* The leaves: count pages of pgsize_bytes from iova to phys, contiguous in both, one level and
 * the same permissions. */
"CREATE TABLE IF NOT EXISTS snapshot_runs ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  domain_ptr INTEGER NOT NULL,"
"  iova INTEGER NOT NULL,"
"  phys INTEGER NOT NULL,"
"  pgsize_bytes INTEGER NOT NULL,"
"  count INTEGER NOT NULL,"
"  level INTEGER NOT NULL,"			/* 1: the last level (4 KiB leaves) */
"  perms TEXT NOT NULL);"			/* r, w, rw */
"CREATE INDEX IF NOT EXISTS snapshot_runs_by_domain ON snapshot_runs (session_id, domain_ptr, iova);"
/* Pages of each size each domain holds, with the bytes they map. */
"DROP VIEW IF EXISTS snapshot_pages_view;"
"CREATE VIEW snapshot_pages_view AS"
"  SELECT session_id, domain_ptr, pgsize_bytes, sum(count) AS pages,"
"         sum(count * pgsize_bytes) AS bytes, count(*) AS runs"
"  FROM snapshot_runs GROUP BY session_id, domain_ptr, pgsize_bytes;";
/* clang-format on */

const struct itdb_schema_part it_snapshot_schema = {
	.name = "snapshot",
	.since = 10,
	.sql = (const char *const[]){ snapshot_sql, NULL },
};
