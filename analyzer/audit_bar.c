/* audit bar: the rows of audit_bar_view and audit_bar_summary_view with a conclusion against an
 * IOTLB of --iotlb-entries entries (see audit_bar.h). */
#include <stdio.h>
#include "common/db.h"
#include "common/log.h"
#include "audit_bar.h"

/* "1 entry", "512 entries" */
#define ENTRIES(n) "(" n " || CASE WHEN " n " = 1 THEN ' entry' ELSE ' entries' END)"
/* The largest page of a pages text ("1 GiB x 1 + 2 MiB x 1": "1 GiB"; largest first) */
#define LARGEST(pages) "substr(" pages ", 1, instr(" pages ", ' x ') - 1)"
/* "of 2 MiB" for pages of one size, else the pages in parentheses */
#define OF_PAGES(pages) \
	"CASE WHEN instr(" pages ", ' + ') = 0 THEN ' of ' || " LARGEST(pages) \
	" ELSE ' (' || " pages " || ')' END"
/* ": fits the 64-entry IOTLB" or ": more than the 64-entry IOTLB" (?2: its entries) */
#define AGAINST_IOTLB(n) \
	"CASE WHEN " n " <= ?2 THEN ': fits the ' ELSE ': more than the ' END || ?2 ||" \
	" '-entry IOTLB'"

/* Per window: "covered by 512 entries of 2 MiB: more than the 64-entry IOTLB; at 1 GiB pages 1
 * entry would cover it". */
#define WINDOW_CONCLUSION \
	"CASE WHEN entries IS NULL THEN 'pages not recorded'" \
	" ELSE 'covered by ' || " ENTRIES("entries") " || " OF_PAGES("pages") " || " \
	AGAINST_IOTLB("entries") " END ||" \
	" CASE WHEN best_entries IS NULL THEN ''" \
	"  WHEN entries IS NOT NULL AND best_entries >= entries THEN" \
	"   CASE WHEN entries > ?2 THEN '; no page size of this IOMMU would take fewer' ELSE '' END" \
	"  ELSE '; at ' || " LARGEST("best_pages") " || ' pages ' ||" \
	"   CASE WHEN best_entries > ?2 THEN 'it would still take ' || " ENTRIES("best_entries") \
	"    ELSE " ENTRIES("best_entries") " END ||" \
	"   CASE WHEN instr(best_pages, ' + ') = 0 THEN '' ELSE ' (' || best_pages || ')' END ||" \
	"   CASE WHEN best_entries > ?2 THEN '' ELSE ' would cover it' END END"

/* Per BAR: "2 windows take 514 entries: more than the 64-entry IOTLB; aligned to the largest
 * pages, 2 entries" */
#define BAR_CONCLUSION \
	"windows || CASE WHEN windows = 1 THEN ' window takes ' ELSE ' windows take ' END ||" \
	" CASE WHEN entries IS NULL THEN 'unknown entries'" \
	"  ELSE " ENTRIES("entries") " || " AGAINST_IOTLB("entries") " END ||" \
	" CASE WHEN windows_pages_unknown > 0 AND entries IS NOT NULL" \
	"  THEN ' (' || windows_pages_unknown || ' without pages recorded)' ELSE '' END ||" \
	" CASE WHEN best_entries IS NOT NULL AND best_entries < IFNULL(entries, best_entries + 1)" \
	"  THEN '; aligned to the largest pages, ' || " ENTRIES("best_entries") " ELSE '' END"

/* ?1 session, ?2 IOTLB entries, ?3 the device or NULL (every device) */
#define BAR_FILTER " WHERE session_id = ?1 AND (?3 IS NULL OR bar_device = ?3)"
#define WINDOW_ORDER " ORDER BY gpu_bar1 DESC, bar_device, bar_index, bar_offset_bytes, iova"

static const char text_windows_sql[] =
	"SELECT ROW_NUMBER() OVER (" WINDOW_ORDER ") AS \"#\", bar_device AS device,"
	" CASE WHEN gpu_bar1 THEN 'GPU BAR1' ELSE 'BAR' || bar_index END AS bar,"
	" bar_offset_bytes, size_bytes, maps, iova, paddr_align_bytes, iova_align_bytes, pages,"
	" entries, best_pages, best_entries"
	" FROM audit_bar_view" BAR_FILTER WINDOW_ORDER;
static const char all_windows_sql[] =
	"SELECT *, ?2 AS iotlb_entries, " WINDOW_CONCLUSION " AS conclusion"
	" FROM audit_bar_view" BAR_FILTER WINDOW_ORDER;
static const char text_notes_sql[] =
	"SELECT ROW_NUMBER() OVER (" WINDOW_ORDER "), " WINDOW_CONCLUSION ","
	" CASE WHEN best_entries < IFNULL(entries, 0) THEN fix END"
	" FROM audit_bar_view" BAR_FILTER WINDOW_ORDER;

#define BAR_ORDER " ORDER BY gpu_bar1 DESC, bar_device, bar_index"
static const char text_bars_sql[] =
	"SELECT bar_device AS device,"
	" CASE WHEN gpu_bar1 THEN 'GPU BAR1' ELSE 'BAR' || bar_index END AS bar, bar_size_bytes,"
	" windows, maps, mapped_bytes, entries, best_entries, " BAR_CONCLUSION " AS conclusion"
	" FROM audit_bar_summary_view" BAR_FILTER BAR_ORDER;
static const char all_bars_sql[] =
	"SELECT *, ?2 AS iotlb_entries, " BAR_CONCLUSION " AS conclusion"
	" FROM audit_bar_summary_view" BAR_FILTER BAR_ORDER;

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql, int64_t session_id,
			     const struct audit_bar_opts *o)
{
	sqlite3_stmt *st = itdb_prepare(db, sql);

	if (!st)
		return NULL;
	sqlite3_bind_int64(st, 1, session_id);
	sqlite3_bind_int64(st, 2, o->iotlb_entries);
	if (o->device[0])
		sqlite3_bind_text(st, 3, o->device, -1, SQLITE_STATIC);
	return st;
}

static long render_sql(struct render *r, sqlite3 *db, const char *sql, const char *name,
		       const char *title, int64_t session_id, const struct audit_bar_opts *o)
{
	sqlite3_stmt *st = prepare(db, sql, session_id, o);
	long rows;

	if (!st) {
		r->failed = true;
		return -1;
	}
	rows = render_statement(r, st, name, title);
	sqlite3_finalize(st);
	return rows;
}

/* Text: each window's conclusion, and its fix where aligning would take fewer entries. */
static int text_notes(struct render *r, sqlite3 *db, int64_t session_id,
		      const struct audit_bar_opts *o)
{
	sqlite3_stmt *st = prepare(db, text_notes_sql, session_id, o);
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		render_note(r, "#%lld %s", (long long)sqlite3_column_int64(st, 0),
			    (const char *)sqlite3_column_text(st, 1));
		if (sqlite3_column_type(st, 2) != SQLITE_NULL)
			render_note(r, "   %s", (const char *)sqlite3_column_text(st, 2));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Why a session has no windows: no BARs recorded at all, or none mapped. */
static void note_empty(struct render *r, sqlite3 *db, int64_t session_id,
		       const struct audit_bar_opts *o)
{
	sqlite3_stmt *st = itdb_prepare(db, "SELECT COUNT(*) FROM bars WHERE session_id = ?1");

	if (!st)
		return;
	sqlite3_bind_int64(st, 1, session_id);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) == 0)
		render_note(r, "no PCI BARs recorded in this session (an import has none; "
			    "'iommutrace record' reads them)");
	else if (o->device[0])
		render_note(r, "no mapping into a BAR of %s in this session", o->device);
	else
		render_note(r, "no mapping into a PCI BAR in this session");
	sqlite3_finalize(st);
}

int audit_bar_render(struct render *r, sqlite3 *db, int64_t session_id, const char *title_suffix,
		     const struct audit_bar_opts *o)
{
	bool text = r->format == RENDER_TEXT;
	char title[200];
	long rows;

	snprintf(title, sizeof(title), "mappings of PCI BARs, GPU BAR1 first: IOTLB entries "
		 "against a %lld-entry IOTLB%s", (long long)o->iotlb_entries, title_suffix);
	rows = render_sql(r, db, text ? text_windows_sql : all_windows_sql, "bar", title,
			  session_id, o);
	if (rows < 0)
		return -1;
	if (rows == 0)
		note_empty(r, db, session_id, o);
	else if (text && text_notes(r, db, session_id, o))
		return -1;
	snprintf(title, sizeof(title), "per BAR%s", title_suffix);
	return render_sql(r, db, text ? text_bars_sql : all_bars_sql, "bar_summary", title,
			  session_id, o) < 0 ? -1 : 0;
}

int audit_bar_device_known(sqlite3 *db, const char *bdf)
{
	sqlite3_stmt *st = itdb_prepare(db, "SELECT EXISTS (SELECT 1 FROM bars WHERE bdf = ?1)");
	int known = -1;

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, bdf, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		known = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return known;
}
