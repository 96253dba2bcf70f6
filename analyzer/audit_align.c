/* audit align: the rows of audit_align_view and audit_align_summary_view (see audit_align.h).
 * The session's groups are worked out once, into a temporary copy that the table, its notes and
 * the summary read (the view works every reason out, over the session's alike_maps). */
#include <stdio.h>
#include "common/db.h"
#include "common/log.h"
#include "analyzer/audit_align.h"

#define GROUPS "temp.audit_align_groups"

/* Text lists the first TEXT_GROUPS groups and every group below the largest page possible. */
#define TEXT_GROUPS 20
#define STR(x) STR_(x)
#define STR_(x) #x
#define TEXT_GROUPS_WHERE " WHERE (group_no <= " STR(TEXT_GROUPS) " OR short_bytes > 0)"

/* Text: what a person compares; the fix follows as a note, every column in JSON and CSV. The
 * domain is named by its devices where the recording tied it to some. */
static const char text_groups_sql[] =
	"SELECT group_no AS \"#\", maps, size_bytes,"
	" IFNULL(devices, CASE WHEN domain_ptr IS NOT NULL THEN printf('0x%x', domain_ptr) END)"
	" AS domain,"
	" CASE WHEN bar_device IS NOT NULL THEN bar_device || '/' || bar_index END AS bar,"
	" bar_offset_bytes, iova_align_bytes, paddr_align_bytes, pages, pages_source,"
	" aligned_page_bytes, hw_page_bytes, reason"
	" FROM " GROUPS TEXT_GROUPS_WHERE " ORDER BY group_no";
static const char all_groups_sql[] = "SELECT * FROM " GROUPS " ORDER BY group_no";
static const char text_summary_sql[] =
	"SELECT maps, mapped_bytes, at_possible_bytes, below_possible_bytes, pages_unknown_bytes,"
	" at_possible_pct FROM (" AUDIT_ALIGN_SUMMARY_SQL(GROUPS) ")";
static const char all_summary_sql[] = AUDIT_ALIGN_SUMMARY_SQL(GROUPS);

/* The notes under the text table: each group's fix, then what the columns rest on where it is
 * less than the domain's own page sizes and the pages recorded. */
static int text_notes(struct render *r, sqlite3 *db)
{
	sqlite3_stmt *st =
		itdb_prepare(db, "SELECT group_no, reason, fix FROM " GROUPS TEXT_GROUPS_WHERE
				 " AND fix IS NOT NULL ORDER BY group_no");
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		render_note(r, "#%lld %s: %s", (long long)sqlite3_column_int64(st, 0),
			    (const char *)sqlite3_column_text(st, 1),
			    (const char *)sqlite3_column_text(st, 2));
	if (itdb_finalize_read(st, rc, "reading the audit's fixes"))
		return -1;
	st = itdb_prepare(db,
			  "SELECT IFNULL(SUM(pages IS NULL), 0),"
			  " IFNULL(SUM(hw_source = 'iommu'), 0),"
			  " IFNULL(SUM(hw_source = 'session'), 0), IFNULL(SUM(hw_source = 'x86'), 0),"
			  " IFNULL(SUM(group_no > " STR(TEXT_GROUPS) " AND short_bytes = 0), 0)"
								     " FROM " GROUPS);
	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_int64(st, 0))
		render_note(r, "pages '-': no driver_maps row for those maps; their reason is the "
			       "leaf rule's");
	if (rc == SQLITE_ROW && sqlite3_column_int64(st, 1))
		render_note(r, "hw_page from the IOMMU's capability where the domain's page sizes "
			       "were not recorded");
	if (rc == SQLITE_ROW && sqlite3_column_int64(st, 2))
		render_note(r, "hw_page from the session's page sizes (derive_pgsize_bitmap) where "
			       "neither the domain nor the IOMMU was recorded");
	if (rc == SQLITE_ROW && sqlite3_column_int64(st, 3))
		render_note(r, "hw_page assumed (4 KiB, 2 MiB, 1 GiB) where nothing recorded says");
	if (rc == SQLITE_ROW && sqlite3_column_int64(st, 4))
		render_note(r,
			    "%lld more groups, each with the largest page possible for its "
			    "length: --json or --csv lists every group",
			    (long long)sqlite3_column_int64(st, 4));
	return itdb_finalize_read(st, rc == SQLITE_ROW ? SQLITE_DONE : rc,
				  "reading the audit's notes");
}

/* The session's rows of audit_align_view into GROUPS. */
static int copy_groups(sqlite3 *db, int64_t session_id)
{
	sqlite3_stmt *st;

	if (itdb_exec(db, "DROP TABLE IF EXISTS " GROUPS, "audit align"))
		return -1;
	st = itdb_prepare(db, "CREATE TABLE " GROUPS " AS SELECT * FROM audit_align_view"
			      " WHERE session_id = ?1");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, session_id);
	if (sqlite3_step(st) != SQLITE_DONE) {
		log_error("audit align: %s", sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

int audit_align_render(struct render *r, sqlite3 *db, int64_t session_id, const char *title_suffix)
{
	bool text = r->format == RENDER_TEXT;
	char title[160];
	int rc = -1;

	if (copy_groups(db, session_id))
		return -1;
	snprintf(title, sizeof(title),
		 "map calls, most bytes below the largest page possible "
		 "first%s",
		 title_suffix);
	if (render_query(r, db, "align", title, text ? text_groups_sql : all_groups_sql, -1) < 0)
		goto out;
	if (text && text_notes(r, db))
		goto out;
	snprintf(title, sizeof(title),
		 "bytes mapped with the largest page possible for their "
		 "length%s",
		 title_suffix);
	if (render_query(r, db, "align_summary", title, text ? text_summary_sql : all_summary_sql,
			 -1) < 0)
		goto out;
	rc = 0;
out:
	itdb_exec(db, "DROP TABLE IF EXISTS " GROUPS, "audit align");
	return rc;
}
