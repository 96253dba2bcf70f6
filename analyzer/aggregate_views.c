/* The aggregated calls' report section (see aggregate_views.h). */
#include <string.h>
#include "common/db.h"
#include "analyzer/aggregate_views.h"
#include "analyzer/views.h"

/* report_aggregates_view: per session, domain, op, call size class and page size, the calls,
 * bytes and pages counted over every flush */
/* SQL text, laid out as SQL */
/* clang-format off */
const char analyzer_aggregate_views_sql[] =
/* call_sizes: the class [2^k, 2^(k+1)) of the call's length; NULL for qi_submit (no length) */
"DROP VIEW IF EXISTS report_aggregates_view;"
"CREATE VIEW report_aggregates_view AS SELECT session_id, domain, op,"
"  CASE WHEN call_size_min_bytes IS NULL THEN NULL ELSE call_size_class || '..' ||"
"  " SIZE_TEXT("(call_size_min_bytes * 2)") " END AS call_sizes, size_log2, pgsize_bytes,"
"  SUM(count) AS calls, SUM(bytes) AS bytes, SUM(pages) AS pages"
"  FROM map_aggregates_view GROUP BY session_id, domain_ptr, op, size_log2, pgsize_bytes"
"  ORDER BY session_id, domain_ptr IS NULL, domain_ptr, op, size_log2, pgsize_bytes;";
/* clang-format on */

void aggregate_notes(struct render *r, sqlite3 *db, int64_t sid)
{
	sqlite3_stmt *st =
		itdb_prepare(db,
			     "SELECT mode, threshold_bytes, " SIZE_TEXT(
				     "threshold_bytes") " FROM capture_settings WHERE session_id = ?1");
	const char *mode;
	int rc;

	if (!st) {
		r->failed = true;
		return;
	}
	sqlite3_bind_int64(st, 1, sid);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		if (rc == SQLITE_DONE)
			render_note(r, "capture mode: every call recorded (an import, a tracefs "
				       "capture, or a file from before capture modes)");
		else
			itdb_log_failure(db, "reading the capture settings", sqlite3_errmsg(db));
		r->failed |= rc != SQLITE_DONE;
		goto cleanup;
	}
	/* a crafted file's column may hold NULL */
	mode = sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "unknown";
	if (!strcmp(mode, "threshold"))
		render_note(r,
			    "capture mode threshold: maps and unmaps under %s, their driver "
			    "pages and IOTLB invalidations were aggregated (counted here), not "
			    "recorded: the sections built from recorded calls (domains, live, call "
			    "and page sizes, mappings never unmapped) leave them out; a big map "
			    "unmapped by small calls shows there as never unmapped",
			    (const char *)sqlite3_column_text(st, 2));
	else if (!strcmp(mode, "aggregate"))
		render_note(r, "capture mode aggregate: every map, unmap, driver page and "
			       "invalidation was aggregated (counted here), none recorded: the "
			       "sections built from recorded calls are empty of them");
	else
		render_note(r, "capture mode %s: every call recorded", mode);
cleanup:
	sqlite3_finalize(st);
}
