/* audit bar: the rows of audit_bar_view and audit_bar_summary_view with a conclusion against an
 * IOTLB of --iotlb-entries entries (see audit_bar.h). The session's windows are worked out once,
 * into a temporary copy that the table, its notes and the per-BAR summary read. */
#include <stdio.h>
#include "common/db.h"
#include "common/log.h"
#include "analyzer/audit_bar.h"

/* "1 entry", "512 entries" */
#define ENTRIES(n) "(" n " || CASE WHEN " n " = 1 THEN ' entry' ELSE ' entries' END)"
/* The largest page of a pages text ("1 GiB x 1 + 2 MiB x 1": "1 GiB"; largest first) */
#define LARGEST(pages) "substr(" pages ", 1, instr(" pages ", ' x ') - 1)"
/* "of 2 MiB" for pages of one size, else the pages in parentheses */
#define OF_PAGES(pages) \
	"CASE WHEN instr(" pages \
	", ' + ') = 0 THEN ' of ' || " LARGEST(pages) " ELSE ' (' || " pages " || ')' END"
/* ": fits the 64-entry IOTLB" or ": more than the 64-entry IOTLB" (?1: its entries) */
#define AGAINST_IOTLB(n) \
	"CASE WHEN " n " <= ?1 THEN ': fits the ' ELSE ': more than the ' END || ?1 ||" \
	" '-entry IOTLB'"

/* Per window: "covered by 512 entries of 2 MiB: more than the 64-entry IOTLB; at 1 GiB pages 1
 * entry would cover it". */
#define WINDOW_CONCLUSION \
	"CASE WHEN entries IS NULL THEN 'pages not recorded'" \
	" ELSE 'covered by ' || " ENTRIES("entries") " || " OF_PAGES("pages") " || " AGAINST_IOTLB( \
		"entries") " END ||" \
			   " CASE WHEN best_entries IS NULL THEN ''" \
			   "  WHEN entries IS NOT NULL AND best_entries >= entries THEN" \
			   "   CASE WHEN entries > ?1 THEN '; no page size of this IOMMU would take fewer' ELSE '' END" \
			   "  ELSE '; at ' || " LARGEST( \
				   "best_pages") " || ' pages ' ||" \
						 "   CASE WHEN best_entries > ?1 THEN 'it would still take ' || " ENTRIES( \
							 "best_entries") "    ELSE " ENTRIES("best_entries") " END ||" \
													     "   CASE WHEN instr(best_pages, ' + ') = 0 THEN '' ELSE ' (' || best_pages || ')' END ||" \
													     "   CASE WHEN best_entries > ?1 THEN '' ELSE ' would cover it' END END"

/* Per BAR: "2 windows take 514 entries: more than the 64-entry IOTLB; aligned to the largest
 * pages, 2 entries" */
#define BAR_CONCLUSION \
	"windows || CASE WHEN windows = 1 THEN ' window takes ' ELSE ' windows take ' END ||" \
	" CASE WHEN entries IS NULL THEN 'unknown entries'" \
	"  ELSE " ENTRIES("entries") " || " AGAINST_IOTLB( \
		"entries") " END ||" \
			   " CASE WHEN windows_pages_unknown > 0 AND entries IS NOT NULL" \
			   "  THEN ' (' || windows_pages_unknown || ' without pages recorded)' ELSE '' END ||" \
			   " CASE WHEN best_entries IS NOT NULL AND best_entries < IFNULL(entries, best_entries + 1)" \
			   "  THEN '; aligned to the largest pages, ' || " ENTRIES( \
				   "best_entries") " ELSE '' END"

/* The session's rows of audit_bar_view (for one device, or every one): worked out once, by
 * copy_windows, and read by the table, its notes and the per-BAR summary. ?1 below: the IOTLB
 * entries. */
#define WINDOWS "temp.audit_bar_windows"
#define WINDOW_ORDER " ORDER BY gpu_bar1 DESC, bar_device, bar_index, bar_offset_bytes, iova"

/* Text lists the first TEXT_WINDOWS windows and every one that aligning would shrink (a
 * recording of a large BAR can have tens of thousands); JSON and CSV list every window. */
#define TEXT_WINDOWS 20
#define STR(x) STR_(x)
#define STR_(x) #x
#define NUMBERED_WINDOWS \
	" FROM (SELECT ROW_NUMBER() OVER (" WINDOW_ORDER ") AS n, * FROM " WINDOWS ")" \
	" WHERE n <= " STR(TEXT_WINDOWS) " OR best_entries < IFNULL(entries, 0) ORDER BY n"

static const char text_windows_sql[] =
	"SELECT n AS \"#\", bar_device AS device,"
	" CASE WHEN gpu_bar1 THEN 'GPU BAR1' ELSE 'BAR' || bar_index END AS bar,"
	" bar_offset_bytes, size_bytes, maps, iova, paddr_align_bytes, iova_align_bytes, pages,"
	" entries, best_pages, best_entries" NUMBERED_WINDOWS;
static const char all_windows_sql[] =
	"SELECT *, ?1 AS iotlb_entries, " WINDOW_CONCLUSION " AS conclusion"
	" FROM " WINDOWS WINDOW_ORDER;
static const char text_notes_sql[] =
	"SELECT n, " WINDOW_CONCLUSION
	", CASE WHEN best_entries < IFNULL(entries, 0) THEN fix END" NUMBERED_WINDOWS;

#define BAR_ORDER " ORDER BY gpu_bar1 DESC, bar_device, bar_index"
static const char text_bars_sql[] =
	"SELECT bar_device AS device,"
	" CASE WHEN gpu_bar1 THEN 'GPU BAR1' ELSE 'BAR' || bar_index END AS bar, bar_size_bytes,"
	" windows, maps, mapped_bytes, entries, best_entries, " BAR_CONCLUSION " AS conclusion"
	" FROM (" AUDIT_BAR_SUMMARY_SQL(WINDOWS) ")" BAR_ORDER;
static const char all_bars_sql[] = "SELECT *, ?1 AS iotlb_entries, " BAR_CONCLUSION " AS conclusion"
				   " FROM (" AUDIT_BAR_SUMMARY_SQL(WINDOWS) ")" BAR_ORDER;

/* The session's rows of audit_bar_view, of o->device's BARs or every device's, into WINDOWS. */
static int copy_windows(sqlite3 *db, int64_t session_id, const struct audit_bar_opts *o)
{
	sqlite3_stmt *st;
	int rc;

	if (itdb_exec(db, "DROP TABLE IF EXISTS " WINDOWS, "audit bar"))
		return -1;
	st = itdb_prepare(db, "CREATE TABLE " WINDOWS " AS SELECT * FROM audit_bar_view"
			      " WHERE session_id = ?1 AND (?2 IS NULL OR bar_device = ?2)");
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, session_id);
	if (o->device[0])
		sqlite3_bind_text(st, 2, o->device, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE)
		log_error("audit bar: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The rows copy_windows made, or -1 (logged) */
static long window_count(sqlite3 *db)
{
	sqlite3_stmt *st = itdb_prepare(db, "SELECT COUNT(*) FROM " WINDOWS);
	long n = -1;

	if (st && sqlite3_step(st) == SQLITE_ROW)
		n = (long)sqlite3_column_int64(st, 0);
	else if (st)
		log_error("audit bar: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return n;
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql, const struct audit_bar_opts *o)
{
	sqlite3_stmt *st = itdb_prepare(db, sql);

	if (st)
		sqlite3_bind_int64(st, 1, o->iotlb_entries);
	return st;
}

static long render_sql(struct render *r, sqlite3 *db, const char *sql, const char *name,
		       const char *title, const struct audit_bar_opts *o)
{
	sqlite3_stmt *st = prepare(db, sql, o);
	long rows;

	if (!st) {
		r->failed = true;
		return -1;
	}
	rows = render_statement(r, st, name, title);
	sqlite3_finalize(st);
	return rows;
}

/* Text: each listed window's conclusion, and its fix where aligning would take fewer entries;
 * then how many were left out. rows: the windows in all. */
static int text_notes(struct render *r, sqlite3 *db, const struct audit_bar_opts *o, long rows)
{
	sqlite3_stmt *st = prepare(db, text_notes_sql, o);
	long listed = 0;
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		listed++;
		render_note(r, "#%lld %s", (long long)sqlite3_column_int64(st, 0),
			    (const char *)sqlite3_column_text(st, 1));
		if (sqlite3_column_type(st, 2) != SQLITE_NULL)
			render_note(r, "   %s", (const char *)sqlite3_column_text(st, 2));
	}
	if (itdb_finalize_read(st, rc, "reading the audit's notes"))
		return -1;
	if (listed < rows)
		render_note(r,
			    "%ld more windows that aligning would not shrink, or whose pages were "
			    "not recorded: --json or --csv lists every window",
			    rows - listed);
	return 0;
}

/* Why a session has no windows: no BARs recorded at all, or none mapped. */
static void note_empty(struct render *r, sqlite3 *db, int64_t session_id,
		       const struct audit_bar_opts *o)
{
	sqlite3_stmt *st = itdb_prepare(db, "SELECT COUNT(*) FROM bars WHERE session_id = ?1");
	int rc;

	if (!st) {
		r->failed = true;
		return;
	}
	sqlite3_bind_int64(st, 1, session_id);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		itdb_log_failure(db, "counting the recorded BARs", sqlite3_errmsg(db));
		r->failed = true;
	} else if (sqlite3_column_int64(st, 0) == 0) {
		render_note(r, "no PCI BARs recorded in this session (an import has none; "
			       "'iommutrace record' reads them)");
	} else if (o->device[0]) {
		render_note(r, "no mapping into a BAR of %s in this session", o->device);
	} else {
		render_note(r, "no mapping into a PCI BAR in this session");
	}
	sqlite3_finalize(st);
}

int audit_bar_render(struct render *r, sqlite3 *db, int64_t session_id, const char *title_suffix,
		     const struct audit_bar_opts *o)
{
	bool text = r->format == RENDER_TEXT;
	char title[200];
	long rows;
	int rc = -1;

	if (copy_windows(db, session_id, o))
		return -1;
	snprintf(title, sizeof(title),
		 "mappings of PCI BARs, GPU BAR1 first: IOTLB entries "
		 "against a %lld-entry IOTLB%s",
		 (long long)o->iotlb_entries, title_suffix);
	rows = window_count(db);
	if (rows < 0 ||
	    render_sql(r, db, text ? text_windows_sql : all_windows_sql, "bar", title, o) < 0)
		goto out;
	if (rows == 0)
		note_empty(r, db, session_id, o);
	else if (text && text_notes(r, db, o, rows))
		goto out;
	snprintf(title, sizeof(title), "per BAR%s", title_suffix);
	if (render_sql(r, db, text ? text_bars_sql : all_bars_sql, "bar_summary", title, o) < 0)
		goto out;
	rc = 0;
out:
	itdb_exec(db, "DROP TABLE IF EXISTS " WINDOWS, "audit bar");
	return rc;
}

int audit_bar_device_known(sqlite3 *db, const char *bdf)
{
	sqlite3_stmt *st = itdb_prepare(db, "SELECT EXISTS (SELECT 1 FROM bars WHERE bdf = ?1)");
	int known = -1, rc;

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, bdf, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		known = sqlite3_column_int(st, 0);
	return itdb_finalize_read(st, rc == SQLITE_ROW ? SQLITE_DONE : rc,
				  "reading the recorded BARs") ?
		       -1 :
		       known;
}
