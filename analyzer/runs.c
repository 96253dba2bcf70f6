/* The runs sections of the report (see runs.h): tables from the runs views, notes in words. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "common/db.h"
#include "common/log.h"
#include "analyzer/runs.h"

/* A real for the text table: whole from 100 up, two decimals below (render prints reals with
 * three significant digits, which would turn 171526 ns into 1.72e+05). */
#define READABLE(x) \
	"CASE WHEN ABS(" x ") >= 100 THEN CAST(ROUND(" x ") AS INTEGER) ELSE ROUND(" x ", 2) END"

static const char run_sql[] =
	"SELECT r.engine, r.buffer_kind, v.iommu_state"
	"  FROM io_runs r LEFT JOIN (SELECT session_id, iommu_state FROM runs_view"
	"   WHERE session_id = ?1 LIMIT 1) v ON v.session_id = r.session_id"
	"  WHERE r.session_id = ?1";

static const char points_sql[] =
	"SELECT qd, devices, engine, workload, bs_bytes, buffer, iommu, repeats,"
	"  CAST(ROUND(iops) AS INTEGER) AS iops, gb_per_s,"
	"  " READABLE("mean_ns / 1e3") " AS mean_us, " READABLE(
		"p99_ns / 1e3") " AS p99_us,"
				"  page_sizes FROM runs_view WHERE session_id = ?1 ORDER BY qd";

static const char change_sql[] =
	"SELECT qd, off_session_id, off_engine, off_iommu, session_id AS on_session_id, on_engine,"
	"  CAST(ROUND(off_iops) AS INTEGER) AS off_iops, CAST(ROUND(on_iops) AS INTEGER) AS on_iops,"
	"  iops_change_pct, " READABLE(
		"off_mean_ns / 1e3") " AS off_mean_us,"
				     "  " READABLE(
					     "on_mean_ns / 1e3") " AS on_mean_us, mean_change_pct,"
								 "  " READABLE("off_p99_ns / 1e3") " AS off_p99_us, " READABLE(
									 "on_p99_ns / 1e3") " AS on_p99_us,"
											    "  p99_change_pct, ceiling_check FROM runs_iommu_change_view"
											    "  WHERE session_id = ?1 OR off_session_id = ?1 ORDER BY qd, off_session_id, session_id";

static const char at_ceiling_sql[] =
	"SELECT qd, off_session_id, off_engine, session_id, on_engine, off_peak_pct, on_peak_pct"
	"  FROM runs_iommu_change_view WHERE (session_id = ?1 OR off_session_id = ?1)"
	"  AND ceiling_check = 'at-ceiling' ORDER BY qd, off_session_id, session_id";

static const char validity_sql[] =
	"SELECT qd, repeats, spread_pct, spread_check, ROUND(in_flight, 2) AS in_flight,"
	"  expected_in_flight, littles_law_pct, littles_law_check, other_engines, engines_diff_pct,"
	"  engines_check, peak_pct, ceiling_check, verdict FROM runs_validity_view"
	"  WHERE session_id = ?1 ORDER BY qd";

static const char limits_sql[] =
	"SELECT spread_max_pct, littles_law_max_pct, engines_max_pct, ceiling_min_pct"
	"  FROM runs_limits_view";

struct run_facts {
	char engine[16], buffer_kind[16], iommu_state[8];
	bool has_state;
};

struct limits {
	double spread_pct, littles_law_pct, engines_pct, ceiling_pct;
};

/* The statement prepared with ?1 bound to the session, or NULL (logged). */
static sqlite3_stmt *session_query(sqlite3 *db, const char *sql, int64_t session_id)
{
	sqlite3_stmt *st = itdb_prepare(db, sql);

	if (st)
		sqlite3_bind_int64(st, 1, session_id);
	return st;
}

static const char *text_or(sqlite3_stmt *st, int col, const char *fallback)
{
	const char *s = (const char *)sqlite3_column_text(st, col);

	return s ? s : fallback;
}

/* 1 and the run's facts, 0 when the session has no io run, -1 on failure. */
static int read_run(sqlite3 *db, int64_t session_id, struct run_facts *f)
{
	sqlite3_stmt *st = session_query(db, run_sql, session_id);
	int rc;

	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		snprintf(f->engine, sizeof(f->engine), "%s", text_or(st, 0, ""));
		snprintf(f->buffer_kind, sizeof(f->buffer_kind), "%s", text_or(st, 1, ""));
		f->has_state = sqlite3_column_type(st, 2) != SQLITE_NULL;
		snprintf(f->iommu_state, sizeof(f->iommu_state), "%s", text_or(st, 2, ""));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		log_error("reading the io run of session %lld: %s", (long long)session_id,
			  sqlite3_errmsg(db));
		return -1;
	}
	return rc == SQLITE_ROW;
}

static int read_limits(sqlite3 *db, struct limits *l)
{
	sqlite3_stmt *st = itdb_prepare(db, limits_sql);
	int rc;

	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*l = (struct limits){ sqlite3_column_double(st, 0), sqlite3_column_double(st, 1),
				      sqlite3_column_double(st, 2), sqlite3_column_double(st, 3) };
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW) {
		log_error("reading runs_limits_view: %s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

static void points_notes(struct render *r, const struct run_facts *f, long rows)
{
	if (!rows) {
		render_note(r, "no points: the run ended before its first point completed");
		return;
	}
	render_note(r,
		    "iops, gb_per_s (10^9 bytes/s): each repeat's sum over the devices, then the"
		    " mean over the repeats; mean_us: over every completed command; p99_us: of all"
		    " the repeats' commands together (their latency histograms merged)");
	if (!strcmp(f->engine, "uio"))
		render_note(r,
			    "page_sizes: none, the uio engine gives the device physical addresses"
			    " and the IOMMU maps nothing");
	else if (!strcmp(f->engine, "uring"))
		render_note(r, "page_sizes: the IOMMU pages of the maps made during the points of"
			       " that queue depth (the kernel maps each command)");
	else
		render_note(r,
			    "page_sizes: the IOMMU pages of the buffers' IOVA ranges, mapped once"
			    " for the whole run");
	render_note(r, "observed: the page sizes the IOMMU driver was seen writing; derived: the"
		       " leaf rule's, where no driver probe saw them");
}

static int change_notes(struct render *r, sqlite3 *db, int64_t session_id,
			const struct run_facts *f, long rows)
{
	sqlite3_stmt *st;
	int rc;

	if (!rows) {
		if (!f->has_state)
			render_note(r,
				    "nothing to compare: whether this run's DMA was translated is"
				    " unknown (io_devices.iommu)");
		else
			render_note(r,
				    "nothing to compare: no run with the IOMMU %s at the same"
				    " workload, block size, buffer kind (%s), device count and queue"
				    " depth in this database: add that run to it with 'io ... -o DB --append'",
				    strcmp(f->iommu_state, "on") ?
					    "on (translated)" :
					    "off (engine uio, or iommu off or passthrough)",
				    f->buffer_kind);
		if (f->has_state && !strcmp(f->iommu_state, "on") && !strcmp(f->buffer_kind, "bar"))
			render_note(r, "the uio engine, the only one that runs with the IOMMU off,"
				       " cannot read into a BAR window");
		return 0;
	}
	render_note(r, "*_change_pct: (on / off - 1) x 100; what the IOMMU costs shows as fewer"
		       " IOPS and more latency");
	st = session_query(db, at_ceiling_sql, session_id);
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		render_note(r,
			    "qd %lld: session %lld (%s, off) and session %lld (%s, on) are both at"
			    " the throughput ceiling (%.1f%% and %.1f%% of the devices' peak): the"
			    " device limits both, a translation cost cannot show, so no change is given",
			    (long long)sqlite3_column_int64(st, 0),
			    (long long)sqlite3_column_int64(st, 1), text_or(st, 2, "?"),
			    (long long)sqlite3_column_int64(st, 3), text_or(st, 4, "?"),
			    sqlite3_column_double(st, 5), sqlite3_column_double(st, 6));
	return itdb_finalize_read(st, rc, "reading the runs at the throughput ceiling");
}

/* One note per failed check of a validity row (columns as in validity_sql). */
static void validity_row_notes(struct render *r, sqlite3_stmt *st, const struct limits *l,
			       const struct run_facts *f)
{
	long long qd = sqlite3_column_int64(st, 0), expected = sqlite3_column_int64(st, 5);
	double little = sqlite3_column_double(st, 6);

	if (!strcmp(text_or(st, 3, ""), "spread"))
		render_note(r,
			    "qd %lld: the %lld repeats' IOPS spread %.1f%% of their mean (standard"
			    " deviation; up to %g%% counts as stable): run each point longer (--time)"
			    " or more often (--repeat) before comparing it",
			    qd, (long long)sqlite3_column_int64(st, 1),
			    sqlite3_column_double(st, 2), l->spread_pct);
	if (!strcmp(text_or(st, 7, ""), "littles-law"))
		render_note(r,
			    "qd %lld: IOPS x mean latency gives %.2f commands in flight, against"
			    " %lld kept in flight (devices x qd): %+.1f%%, beyond %g%%; %s",
			    qd, sqlite3_column_double(st, 4), expected, little, l->littles_law_pct,
			    little < 0 ?
				    "the queue was not kept full (time between a completion and"
				    " the next command counts in neither)" :
				    "the latencies hold time the commands were not in flight");
	if (!strcmp(text_or(st, 10, ""), "engines-disagree"))
		render_note(r,
			    "qd %lld: %s made %.1f%% %s IOPS than %s at the same point with the"
			    " IOMMU in the same state (more than %g%% apart): the engines' own costs"
			    " differ here, so compare runs of one engine",
			    qd, f->engine, fabs(sqlite3_column_double(st, 9)),
			    sqlite3_column_double(st, 9) < 0 ? "fewer" : "more",
			    text_or(st, 8, "?"), l->engines_pct);
	if (!strcmp(text_or(st, 12, ""), "at-ceiling"))
		render_note(r,
			    "qd %lld: %.1f%% of the devices' peak throughput (from %g%% on counts as"
			    " the ceiling): the device limits it, so what the IOMMU costs cannot show"
			    " here",
			    qd, sqlite3_column_double(st, 11), l->ceiling_pct);
}

static int validity_notes(struct render *r, sqlite3 *db, int64_t session_id,
			  const struct run_facts *f)
{
	bool single = false, no_engines = true, ceiling = false;
	sqlite3_stmt *st;
	struct limits l;
	int rc;

	if (read_limits(db, &l))
		return -1;
	st = session_query(db, validity_sql, session_id);
	if (!st)
		return -1;
	render_note(r,
		    "limits (runs_limits_view): spread up to %g%% of the mean IOPS, Little's law"
		    " within %g%%, engines within %g%%, the ceiling from %g%% of the peak",
		    l.spread_pct, l.littles_law_pct, l.engines_pct, l.ceiling_pct);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		single |= sqlite3_column_int64(st, 1) < 2;
		no_engines &= sqlite3_column_type(st, 10) == SQLITE_NULL;
		ceiling |= !strcmp(text_or(st, 12, ""), "at-ceiling");
		validity_row_notes(r, st, &l, f);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		log_error("reading runs_validity_view: %s", sqlite3_errmsg(db));
		return -1;
	}
	if (single)
		render_note(r,
			    "spread: a queue depth run once has nothing to compare (io --repeat N)");
	if (no_engines)
		render_note(r,
			    "engines: no other engine ran these points with the IOMMU in the same"
			    " state in this database");
	if (ceiling)
		render_note(r,
			    "the peak is the highest bandwidth these devices reach at any queue"
			    " depth of any run in this database: where a sweep never levels off, its"
			    " top point is at the ceiling too");
	return 0;
}

int runs_render(struct render *r, sqlite3 *db, int64_t session_id)
{
	struct run_facts f = { 0 };
	long rows;
	int has = read_run(db, session_id, &f);

	if (has <= 0)
		return has;
	rows = render_query(r, db, "runs",
			    "I/O run per queue depth: throughput, latency, IOMMU"
			    " page sizes",
			    points_sql, session_id);
	if (rows < 0)
		return -1;
	points_notes(r, &f, rows);
	if (!rows)
		return 0;
	rows = render_query(r, db, "runs_iommu_change",
			    "what the IOMMU changed: this run beside"
			    " comparable runs with it off or on",
			    change_sql, session_id);
	if (rows < 0 || change_notes(r, db, session_id, &f, rows))
		return -1;
	rows = render_query(r, db, "runs_validity",
			    "do the numbers hold: spread of repeats,"
			    " Little's law, engines, throughput ceiling",
			    validity_sql, session_id);
	if (rows < 0 || validity_notes(r, db, session_id, &f))
		return -1;
	return 0;
}
