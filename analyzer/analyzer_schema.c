/* The analyzer's part of the schema: what it derives from a session (map lifetimes, the
 * summaries) and the views behind its reports. */
#include "analyzer/analyzer_schema.h"
#include "analyzer/views.h"
#include "common/schema.h"

/* SQL text, laid out as SQL */
/* clang-format off */
static const char tables_sql[] =
/* Lifetimes of mapped IOVA ranges (schema 7; analyzer/lifetimes.h): a map is one piece while
 * whole; an unmap of part of it ends that part and leaves the rest as pieces of their own. */
"CREATE TABLE IF NOT EXISTS map_pieces ("
"  session_id INTEGER NOT NULL REFERENCES sessions,"
"  map_id INTEGER NOT NULL,"		/* the map that made it */
"  domain_ptr INTEGER,"
"  iova INTEGER NOT NULL,"
"  paddr INTEGER NOT NULL,"
"  size_bytes INTEGER NOT NULL,"
"  mapped_ns INTEGER NOT NULL,"
"  unmapped_ns INTEGER,"			/* NULL: still mapped when the session ended */
"  unmap_id INTEGER,"			/* the unmap that ended it; NULL when remapped or live */
"  end_reason TEXT);"			/* unmap | remapped (mapped over, its unmap unseen) | NULL */
/* Which sessions map_pieces was computed for, and from how many events. */
"CREATE TABLE IF NOT EXISTS map_pieces_state ("
"  session_id INTEGER PRIMARY KEY REFERENCES sessions,"
"  maps INTEGER NOT NULL, unmaps INTEGER NOT NULL, pieces INTEGER NOT NULL);"
/* What was still mapped when the session ended, per map: the bytes of it never unmapped. */
"CREATE VIEW IF NOT EXISTS live_mappings_view AS SELECT p.session_id, p.map_id,"
"  " HEX("p.domain_ptr") " AS domain, p.domain_ptr, printf('0x%x', p.iova) AS iova_hex,"
"  printf('0x%x', p.paddr) AS paddr_hex, p.iova, p.paddr, p.size_bytes, p.mapped_ns, m.comm"
"  FROM map_pieces p LEFT JOIN maps m ON m.map_id = p.map_id WHERE p.unmapped_ns IS NULL;"
/* Live mapped bytes per domain after each change (a map, an unmap, the end of a remapped piece),
 * from map_pieces: MAX(live_bytes) is the domain's peak. */
"CREATE VIEW IF NOT EXISTS live_bytes_view AS"
"  WITH changes AS (SELECT session_id, domain_ptr, mapped_ns AS ts_ns, size_bytes AS delta"
"    FROM map_pieces UNION ALL SELECT session_id, domain_ptr, unmapped_ns, -size_bytes"
"    FROM map_pieces WHERE unmapped_ns IS NOT NULL),"
"  steps AS (SELECT session_id, domain_ptr, ts_ns, SUM(delta) AS delta FROM changes"
"    GROUP BY session_id, domain_ptr, ts_ns)"
"  SELECT session_id, domain_ptr, ts_ns, SUM(delta) OVER (PARTITION BY session_id, domain_ptr"
"    ORDER BY ts_ns ROWS UNBOUNDED PRECEDING) AS live_bytes FROM steps;"
/* The summaries of the lifetimes sweep (schema 9; analyzer/summary.h). */
"CREATE TABLE IF NOT EXISTS session_summary ("
"  session_id INTEGER PRIMARY KEY REFERENCES sessions,"
"  maps INTEGER NOT NULL, unmaps INTEGER NOT NULL, peak_live_bytes INTEGER NOT NULL);"
"CREATE TABLE IF NOT EXISTS domain_summary ("
"  session_id INTEGER NOT NULL REFERENCES sessions, domain_ptr INTEGER,"
"  maps INTEGER NOT NULL, map_bytes INTEGER NOT NULL,"
"  unmaps INTEGER NOT NULL, unmapped_bytes INTEGER NOT NULL,"
"  peak_live_bytes INTEGER NOT NULL, end_live_bytes INTEGER NOT NULL,"
"  live_maps INTEGER NOT NULL, remapped_bytes INTEGER NOT NULL);"
"CREATE TABLE IF NOT EXISTS call_size_summary ("
"  session_id INTEGER NOT NULL REFERENCES sessions, domain_ptr INTEGER,"
"  call_size_bytes INTEGER, maps INTEGER NOT NULL, map_bytes INTEGER NOT NULL);"
"CREATE TABLE IF NOT EXISTS page_size_summary ("
"  session_id INTEGER NOT NULL REFERENCES sessions, domain_ptr INTEGER,"
"  pgsize_bytes INTEGER NOT NULL, source TEXT NOT NULL,"
"  pages INTEGER NOT NULL, map_bytes INTEGER NOT NULL);"
"CREATE TABLE IF NOT EXISTS alike_maps ("
"  session_id INTEGER NOT NULL REFERENCES sessions, domain_ptr INTEGER,"
"  size_bytes INTEGER NOT NULL, in_bar INTEGER NOT NULL,"
"  page_mix TEXT, pages_source TEXT, entries INTEGER, written_page_bytes INTEGER,"
"  maps INTEGER NOT NULL, first_map_id INTEGER NOT NULL,"
"  iova INTEGER NOT NULL, paddr INTEGER NOT NULL);";
/* clang-format on */

const struct itdb_schema_part analyzer_schema = {
	.name = "analyzer",
	.since = 7,
	.sql =
		(const char *const[]){
			tables_sql,
			ANALYZER_MAP_PIECES_INDEX_SQL ";",
			analyzer_report_views_sql,
			analyzer_audit_views_sql,
			analyzer_runs_views_sql,
			analyzer_aggregate_views_sql,
			NULL,
		},
};
