/* The sections of iommutrace report (see report.h): each reads one session's rows of its
 * report_*_view, renders them, and adds the notes its numbers need, read from the same rows. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "common/db.h"
#include "common/human_size.h"
#include "common/log.h"
#include "common/untrusted_text.h"
#include "analyzer/aggregate_views.h"
#include "analyzer/report.h"
#include "analyzer/runs.h"

struct section {
	const char *name; /* for JSON and CSV */
	const char *title;
	const char *view;
	const char *columns; /* after session_id, which text leaves out (the header says) */
	const char *order; /* NULL: the view's own, kept in report_rows */
	/* the notes the rows need, read from report_rows */
	void (*notes)(struct render *r, sqlite3 *db, int64_t sid);
};

/* The first column of the first row of sql, ?1 (if any) bound to sid: 0 when NULL or no row, -1
 * when the query fails (logged, and the output marked failed). For the notes, which read the
 * section's rows (report_rows) and the session's. */
static int64_t query_int(struct render *r, sqlite3 *db, const char *sql, int64_t sid)
{
	sqlite3_stmt *st = itdb_prepare(db, sql);
	int64_t v = -1;
	int rc;

	if (!st) {
		r->failed = true;
		return -1;
	}
	sqlite3_bind_int64(st, 1, sid);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		v = sqlite3_column_int64(st, 0);
	} else if (rc == SQLITE_DONE) {
		v = 0;
	} else {
		log_error("reading the report: %s", sqlite3_errmsg(db));
		r->failed = true;
	}
	sqlite3_finalize(st);
	return v;
}

/* "2.5 s", "0.674 s", "1419 s" */
static void format_seconds(double s, char *buf, size_t len)
{
	snprintf(buf, len, s < 1000 ? "%.3g s" : "%.0f s", s);
}

/* The session's one-line summary: "session 3: record (bpf) 'COMMAND' on RELEASE: 12.3 s, 4567
 * events, none lost". */
/* ", small calls counted: under 2 MiB" for a session that counted calls (capture_settings),
 * "" for one that recorded every call; 0, or -1 when it cannot be read (logged) */
static int capture_mode(sqlite3 *db, int64_t sid, char *buf, size_t len)
{
	sqlite3_stmt *st = itdb_prepare(db, "SELECT mode, threshold_bytes FROM capture_settings"
					    " WHERE session_id = ?1");
	const char *mode;
	char size[HUMAN_SIZE_LEN];
	int rc;

	buf[0] = '\0';
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sid);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && (mode = (const char *)sqlite3_column_text(st, 0))) {
		if (!strcmp(mode, "threshold")) {
			human_size((uint64_t)sqlite3_column_int64(st, 1), size);
			snprintf(buf, len, ", calls under %s counted, not recorded", size);
		} else if (!strcmp(mode, "aggregate")) {
			snprintf(buf, len, ", every call counted, none recorded");
		}
	}
	if (rc == SQLITE_ROW) {
		sqlite3_finalize(st);
		return 0;
	}
	return itdb_finalize_read(st, rc, "reading the capture settings");
}

static int session_title(sqlite3 *db, int64_t sid, char *buf, size_t len)
{
	sqlite3_stmt *st =
		itdb_prepare(db,
			     "SELECT kind, capture, command, source_path, kernel_release, duration_s,"
			     " events_total, events_lost, complete FROM report_session_view"
			     " WHERE session_id = ?1");
	const char *command, *source, *release;
	char duration[32], lost[32], mode[64];
	size_t used;
	int rc = -1;

	if (!st || capture_mode(db, sid, mode, sizeof(mode)))
		goto cleanup;
	sqlite3_bind_int64(st, 1, sid);
	if (sqlite3_step(st) != SQLITE_ROW) {
		log_error("reading session %" PRId64 ": %s", sid, sqlite3_errmsg(db));
		goto cleanup;
	}
	command = (const char *)sqlite3_column_text(st, 2);
	source = (const char *)sqlite3_column_text(st, 3);
	release = (const char *)sqlite3_column_text(st, 4);
	if (sqlite3_column_type(st, 5) == SQLITE_NULL)
		snprintf(duration, sizeof(duration), "duration unknown");
	else
		format_seconds(sqlite3_column_double(st, 5), duration, sizeof(duration));
	if (sqlite3_column_int64(st, 7))
		snprintf(lost, sizeof(lost), "%lld lost", (long long)sqlite3_column_int64(st, 7));
	else
		snprintf(lost, sizeof(lost), "none lost");
	used = (size_t)snprintf(buf, len, "session %" PRId64 ": %s (%s)", sid,
				(const char *)sqlite3_column_text(st, 0),
				(const char *)sqlite3_column_text(st, 1));
	/* the session section lists the whole command; a header line keeps to its start */
	if (command && used < len)
		used += (size_t)snprintf(buf + used, len - used, " '%.160s%s'", command,
					 strlen(command) > 160 ? "..." : "");
	else if (source && used < len)
		used += (size_t)snprintf(buf + used, len - used, " of %s", source);
	if (release && used < len)
		used += (size_t)snprintf(buf + used, len - used, " on %s", release);
	if (used < len)
		snprintf(buf + used, len - used, ": %s, %lld events, %s%s%s", duration,
			 (long long)sqlite3_column_int64(st, 6), lost, mode,
			 sqlite3_column_int(st, 8) ? "" : ", incomplete");
	/* one line, also when an argument of the command held a line break; no escape sequence */
	text_for_terminal(buf);
	rc = 0;
cleanup:
	sqlite3_finalize(st);
	return rc;
}

/* A fact of the session, from report_session_view: expr over its columns ("complete = 0");
 * 1 true, 0 false, -1 failed (logged). Only the report's own constant text goes into the SQL. */
static int64_t session_is(struct render *r, sqlite3 *db, int64_t sid, const char *expr)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "SELECT %s FROM report_session_view WHERE session_id = ?1",
		 expr);
	return query_int(r, db, sql, sid);
}

/* How many of the section's rows (report_rows) meet cond ("1": all of them). */
static int64_t rows_where(struct render *r, sqlite3 *db, const char *cond)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM report_rows WHERE %s", cond);
	return query_int(r, db, sql, -1);
}

static void session_notes(struct render *r, sqlite3 *db, int64_t sid)
{
	if (session_is(r, db, sid, "complete = 0") > 0)
		render_note(r, "the session is incomplete: its recorder was killed, or is still "
			       "recording; duration, churn and losses are unknown (losses are "
			       "written at the end)");
	if (session_is(r, db, sid, "kind = 'import'") > 0)
		render_note(r, "an import: timestamps in the file's trace clock; ftrace records "
			       "no domains and no driver page sizes, so pages are derived by the "
			       "leaf rule");
	else if (session_is(r, db, sid, "capture = 'tracefs'") > 0)
		render_note(r, "a tracefs capture: no domains and no driver page sizes, so pages "
			       "are derived by the leaf rule");
}

static void probes_notes(struct render *r, sqlite3 *db, int64_t sid)
{
	if (session_is(r, db, sid, "capture = 'bpf'") <= 0 || rows_where(r, db, "1") <= 0)
		return;
	if (rows_where(r, db, "role = 'driver-map-range' AND attached") > 0)
		render_note(r, "driver-map-range probes (Linux 7.1+) see a range, not its page "
			       "size: the pages of those maps are derived by the leaf rule");
	else if (rows_where(r, db, "role = 'driver-map' AND attached") == 0)
		render_note(r, "no driver map_pages probe attached: page sizes are derived by the "
			       "leaf rule, not observed");
}

static void domains_notes(struct render *r, sqlite3 *db, int64_t sid)
{
	if (rows_where(r, db, "domain IS NULL") > 0)
		render_note(r, "the row without a domain: maps and unmaps whose domain is unknown "
			       "(tracefs capture, import, or no domain probe)");
	if (rows_where(r, db, "domain = 'all' AND pages > 0") > 0)
		render_note(r, "pages counts the leaf page-table entries written for these maps "
			       "(a 2 MiB page is one): observed in the driver's map_pages calls, "
			       "derived by the leaf rule, or mixed");
	if (rows_where(r, db, "domain IS NOT 'all' AND unmapped_bytes > map_bytes") > 0)
		render_note(r, "unmapped_bytes above map_bytes: unmaps of what was mapped before "
			       "the session started");
}

static void live_notes(struct render *r, sqlite3 *db, int64_t sid)
{
	sqlite3_stmt *st;
	char duration[32];
	int rc;

	if (rows_where(r, db, "domain IS NOT 'all'") > 0)
		render_note(r,
			    "live bytes from map_pieces: each map's lifetime, split where part "
			    "of it was unmapped; what was mapped before the session is not seen");
	if (rows_where(r, db, "domain = 'all' AND remapped_bytes > 0") > 0)
		render_note(r,
			    "remapped_bytes were mapped over while still mapped: their unmap "
			    "was not seen (lost, or not traced), and the old mapping ends there");
	st = itdb_prepare(db, "SELECT duration_s FROM report_session_view WHERE session_id = ?1");
	if (!st) {
		r->failed = true;
		return;
	}
	sqlite3_bind_int64(st, 1, sid);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		itdb_log_failure(db, "reading the session's duration", sqlite3_errmsg(db));
		r->failed = true;
	} else if (rc != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL) {
		render_note(r, "no churn: the session has no duration (incomplete, or an import "
			       "without events)");
	} else if (sqlite3_column_double(st, 0) <= 0) {
		render_note(r, "no churn: the session's events share one timestamp (duration 0)");
	} else {
		format_seconds(sqlite3_column_double(st, 0), duration, sizeof(duration));
		render_note(r, "maps_per_s and map_bytes_per_s are over the session's %s",
			    duration);
	}
	sqlite3_finalize(st);
}

static void call_sizes_notes(struct render *r, sqlite3 *db, int64_t sid)
{
	if (rows_where(r, db, "1") > 0)
		render_note(r, "call_size_bytes is each iommu:map call's size rounded up to a "
			       "power of two (16 KiB: more than 8 KiB, up to 16 KiB)");
}

static void page_sizes_notes(struct render *r, sqlite3 *db, int64_t sid)
{
	if (rows_where(r, db, "1") <= 0)
		return;
	render_note(r, "observed pages are as the driver's map_pages was called; derived ones "
		       "follow the leaf rule: the largest of the domain's page sizes that IOVA and "
		       "physical address are both aligned to and that fits");
	render_note(r, "bytes_pct is the share of the domain's page bytes");
}

static void live_mappings_notes(struct render *r, sqlite3 *db, int64_t sid)
{
	int64_t n = rows_where(r, db, "1");

	if (r->format == RENDER_TEXT && n > REPORT_TEXT_LIVE_MAPPINGS)
		render_note(r,
			    "%" PRId64 " more: --json or --csv lists all, as does 'SELECT * "
			    "FROM report_live_mappings_view WHERE session_id = %" PRId64 "'",
			    n - REPORT_TEXT_LIVE_MAPPINGS, sid);
	if (rows_where(r, db, "live_bytes < size_bytes") > 0)
		render_note(r, "live_bytes below size_bytes: part of that map was unmapped");
}

static void losses_notes(struct render *r, sqlite3 *db, int64_t sid)
{
	if (session_is(r, db, sid, "complete = 0") > 0)
		render_note(r, "no losses known: they are written when the session completes");
}

static void map_runs_notes(struct render *r, sqlite3 *db, int64_t sid)
{
	if (rows_where(r, db, "1") > 0)
		render_note(r, "pages_agree is 1 when the driver wrote, over all mappings, the "
			       "pages the leaf rule expects from the buffer's physical runs "
			       "(map_pages_check_view); empty when no page sizes were known to "
			       "expect any");
}

static void io_runs_notes(struct render *r, sqlite3 *db, int64_t sid)
{
	if (rows_where(r, db, "1") > 0)
		render_note(r, "best_iops is the highest mean IOPS of all devices together "
			       "(io_total_view), at queue depth best_qd");
}

static void snapshot_groups_notes(struct render *r, sqlite3 *db, int64_t sid)
{
	if (rows_where(r, db, "kind = 'unreadable'") > 0)
		render_note(r,
			    "unreadable: a translating domain whose table snapshot does not read "
			    "(AMD-Vi, a nested or SVA domain); its leaves are unknown");
	if (rows_where(r, db, "consistent = 0") > 0)
		render_note(r,
			    "consistent 0: maps or unmaps ran during each read of that table (in it, "
			    "or in some domain where snapshot_domains.changes_seen_in is 'any'); its "
			    "leaves may mix its state before and after them");
}

static const struct section sections[REPORT_SECTIONS] = {
	[REPORT_SESSION] = { "session", NULL, "report_session_view",
			     "kind, capture, hostname, kernel_release, duration_s, events_total, events_lost,"
			     " complete, end_reason, command_exit_status, command, source_path",
			     NULL, session_notes },
	[REPORT_SNAPSHOT_GROUPS] = { "snapshot_groups",
				     "what the IOMMU held: each group's domain (snapshot)",
				     "report_snapshot_groups_view",
				     "group_id, devices, domain, type, kind, levels, leaves, runs, consistent",
				     "group_id", snapshot_groups_notes },
	[REPORT_SNAPSHOT_PAGES] = { "snapshot_pages", "pages of each size per domain (snapshot)",
				    "report_snapshot_pages_view",
				    "domain, pgsize_bytes, pages, mapped_bytes, runs",
				    "domain, pgsize_bytes", NULL },
	[REPORT_AGGREGATES] = { "aggregates",
				"aggregated calls per domain, call size and page size",
				"report_aggregates_view", AGGREGATES_SECTION_COLUMNS, NULL,
				aggregate_notes },
	[REPORT_PROBES] = { "probes", "which probes attached, how, and why the others did not",
			    "report_probes_view",
			    "role, attached, mechanism, probes, reason, targets", NULL,
			    probes_notes },
	[REPORT_DOMAINS] = { "domains", "maps, unmaps and page-table entries per IOMMU domain",
			     "report_domains_view",
			     "domain, type, pgsize_bitmap, maps, map_bytes, unmaps,"
			     " unmapped_bytes, pages, pages_source, devices",
			     "domain IS 'all', domain", domains_notes },
	[REPORT_LIVE] = { "live", "live bytes and churn per domain", "report_live_view",
			  "domain, peak_live_bytes, end_live_bytes, live_maps, remapped_bytes, maps_per_s,"
			  " map_bytes_per_s",
			  "domain IS 'all', domain", live_notes },
	[REPORT_CALL_SIZES] = { "call_sizes", "map call sizes per domain", "report_call_sizes_view",
				"domain, call_size_bytes, maps, map_bytes",
				"domain, call_size_bytes", call_sizes_notes },
	[REPORT_PAGE_SIZES] = { "page_sizes", "page sizes per domain", "report_page_sizes_view",
				"domain, pgsize_bytes, source, pages, map_bytes, bytes_pct",
				"domain, pgsize_bytes, source", page_sizes_notes },
	[REPORT_LIVE_MAPPINGS] = { "live_mappings", "mappings never unmapped",
				   "report_live_mappings_view",
				   "map_id, domain, iova, paddr, size_bytes, live_bytes, mapped_at_s, comm",
				   "map_id", live_mappings_notes },
	[REPORT_LOSSES] = { "losses", "lost events", "report_losses_view",
			    "event, reason, lost, meaning, cpus", "event, reason", losses_notes },
	[REPORT_MAP_RUNS] = { "map_runs", "map run", "report_map_runs_view",
			      "mapper, device, buffer, size_bytes, repeat_count, maps_done, pages_agree",
			      NULL, map_runs_notes },
	[REPORT_IO_RUNS] = { "io_runs", "io run", "report_io_runs_view",
			     "engine, workload, bs_bytes, buffer, devices, qds, best_iops, best_qd",
			     NULL, io_runs_notes },
};

/* Reads the section's rows from its view once, into temp.report_rows: the notes look at them
 * again. */
static int load_rows(struct render *r, sqlite3 *db, int64_t sid, const struct section *sec)
{
	char sql[256];
	sqlite3_stmt *st;
	int rc;

	if (itdb_exec(db, "DROP TABLE IF EXISTS temp.report_rows", "reading the report"))
		goto fail;
	/* only the report's own view names go into the text; the session is bound */
	snprintf(sql, sizeof(sql),
		 "CREATE TEMP TABLE report_rows AS SELECT * FROM %s"
		 " WHERE session_id = ?1",
		 sec->view);
	st = itdb_prepare(db, sql);
	if (!st)
		goto fail;
	sqlite3_bind_int64(st, 1, sid);
	rc = itdb_step_done(st, "reading the report");
	sqlite3_finalize(st);
	if (!rc)
		return 0;
fail:
	r->failed = true;
	return -1;
}

int report_section(struct render *r, sqlite3 *db, int64_t session_id, enum report_section s)
{
	const struct section *sec = &sections[s];
	char sql[512], title[512];
	sqlite3_stmt *st;
	long rows;

	if (load_rows(r, db, session_id, sec))
		return -1;
	/* text leaves out the runs and snapshots a session does not have (most have none), and a
	 * snapshot's capture sections, which it cannot have */
	if (r->format == RENDER_TEXT &&
	    (s == REPORT_MAP_RUNS || s == REPORT_IO_RUNS || s == REPORT_SNAPSHOT_GROUPS ||
	     s == REPORT_SNAPSHOT_PAGES) &&
	    rows_where(r, db, "1") == 0)
		return 0;
	if (r->format == RENDER_TEXT && s >= REPORT_AGGREGATES && s <= REPORT_LOSSES &&
	    session_is(r, db, session_id, "kind = 'snapshot'") > 0)
		return 0;
	if (s == REPORT_SESSION) {
		if (session_title(db, session_id, title, sizeof(title)))
			return -1;
	} else {
		snprintf(title, sizeof(title), "%s", sec->title);
	}
	snprintf(sql, sizeof(sql), "SELECT %s%s FROM report_rows ORDER BY %s LIMIT ?1",
		 r->format == RENDER_TEXT ? "" : "session_id, ", sec->columns,
		 sec->order ? sec->order : "rowid");
	st = itdb_prepare(db, sql);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1,
			   s == REPORT_LIVE_MAPPINGS && r->format == RENDER_TEXT ?
				   REPORT_TEXT_LIVE_MAPPINGS :
				   -1);
	rows = render_statement(r, st, sec->name, title);
	sqlite3_finalize(st);
	if (rows < 0)
		return -1;
	if (sec->notes)
		sec->notes(r, db, session_id);
	return 0;
}

int report_session(struct render *r, sqlite3 *db, int64_t session_id)
{
	for (int s = 0; s < REPORT_SECTIONS; s++)
		if (report_section(r, db, session_id, (enum report_section)s))
			return -1;
	return runs_render(r, db, session_id);
}
