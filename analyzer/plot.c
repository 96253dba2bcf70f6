/* Figures of a session through gnuplot (see plot.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/array.h"
#include "common/db.h"
#include "common/human_size.h"
#include "common/log.h"
#include "common/out_path.h"
#include "common/untrusted_text.h"
#include "analyzer/plot.h"

#define MAX_DOMAINS 8 /* footprint: the domains with the largest peaks get a line */
#define MAX_SERIES 12 /* throughput, latency: runs drawn, this one first among its kind */

struct plot {
	sqlite3 *db;
	int64_t session_id;
	const char *dir;
	char work[PATH_MAX]; /* DIR/.iommutrace-plot-XXXXXX: the figures until they are done */
	char gnuplot[PATH_MAX];
	int made;
};

/* One figure's files while they are written: DIR/NAME.dat and DIR/NAME.gp. */
struct figure {
	char name[64]; /* session-N-WHAT */
	FILE *dat, *gp;
};

static bool executable_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* gnuplot's absolute path into p->gnuplot: $IOMMUTRACE_GNUPLOT, else the first in PATH. */
static int find_gnuplot(struct plot *p)
{
	const char *env = getenv("IOMMUTRACE_GNUPLOT"), *path = getenv("PATH");
	char candidate[PATH_MAX];

	if (env && *env) {
		if (executable_file(env) && realpath(env, p->gnuplot))
			return 0;
		log_error("--plot: IOMMUTRACE_GNUPLOT=%s is not an executable file: unset it to use"
			  " gnuplot from PATH, or install gnuplot: apt-get install gnuplot-nox",
			  env);
		return -1;
	}
	for (const char *dir = path ? path : "/usr/bin:/bin"; dir;) {
		const char *colon = strchr(dir, ':');
		int n = colon ? (int)(colon - dir) : (int)strlen(dir);

		/* only absolute entries: an empty or relative one is the working folder, whose
		 * files the user running iommutrace (root) need not trust */
		if (n && *dir == '/' &&
		    snprintf(candidate, sizeof(candidate), "%.*s/gnuplot", n, dir) <
			    (int)sizeof(candidate) &&
		    executable_file(candidate) && realpath(candidate, p->gnuplot))
			return 0;
		dir = colon ? colon + 1 : NULL;
	}
	log_error("--plot needs gnuplot, which is not installed (not in PATH): apt-get install"
		  " gnuplot-nox");
	return -1;
}

/* DIR, made when absent; an existing one must be a folder, not a link to one. Then a folder
 * only we can enter inside it, where the figures are made: gnuplot writes each PNG there, never
 * through a link someone left at its name in DIR. */
static int make_dirs(struct plot *p)
{
	struct stat st;
	int err = 0;

	if (mkdir(p->dir, 0777) && (err = errno) != EEXIST) {
		log_error("--plot %s: %s", p->dir, strerror(err));
		return -1;
	}
	if (lstat(p->dir, &st) || !S_ISDIR(st.st_mode)) {
		log_error("--plot %s: %s: give a folder (made when absent)", p->dir,
			  S_ISLNK(st.st_mode) ?
				  "is a symbolic link, which iommutrace does not write"
				  " through" :
				  "exists and is not a folder");
		return -1;
	}
	if ((size_t)snprintf(p->work, sizeof(p->work), "%s/.iommutrace-plot-XXXXXX", p->dir) >=
		    sizeof(p->work) - 64 ||
	    !mkdtemp(p->work)) {
		log_error("--plot %s: cannot make a folder in it: %s", p->dir,
			  strlen(p->dir) >= sizeof(p->work) - 96 ? "path too long" :
								   strerror(errno));
		return -1;
	}
	return 0;
}

/* Moves the first keep of the figure's files (data, script, PNG) from the work folder to DIR,
 * each replacing a file of its name there (never a link, device or folder); removes the rest. */
static int figure_settle(const struct plot *p, const char *name, size_t keep)
{
	static const char *const exts[] = { "dat", "gp", "png" };
	char from[PATH_MAX + 80], to[PATH_MAX + 80], err[PATH_MAX + 128];
	int ret = 0;

	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		snprintf(from, sizeof(from), "%s/%s.%s", p->work, name, exts[i]);
		snprintf(to, sizeof(to), "%s/%s.%s", p->dir, name, exts[i]);
		if (i < keep && !ret && out_path_check_file(to, err, sizeof(err))) {
			log_error("--plot: %s", err);
			ret = -1;
		}
		if (i < keep && !ret && rename(from, to)) {
			log_error("--plot: cannot rename %s to %s: %s", from, to, strerror(errno));
			ret = -1;
		}
		unlink(from);
	}
	return ret;
}

static FILE *open_in_dir(const struct plot *p, const char *name, const char *ext)
{
	char path[PATH_MAX + 80];
	FILE *f = NULL;

	if (snprintf(path, sizeof(path), "%s/%s.%s", p->work, name, ext) < (int)sizeof(path))
		f = fopen(path, "wx");
	if (!f)
		log_error("--plot: cannot write %s: %s", path, strerror(errno));
	return f;
}

/* Opens the figure's files and writes what every script starts with: the PNG terminal this
 * gnuplot has (pngcairo, else png), the output, the title. */
static int figure_open(const struct plot *p, struct figure *fig, const char *what, int width,
		       int height)
{
	snprintf(fig->name, sizeof(fig->name), "session-%lld-%s", (long long)p->session_id, what);
	fig->dat = open_in_dir(p, fig->name, "dat");
	fig->gp = fig->dat ? open_in_dir(p, fig->name, "gp") : NULL;
	if (!fig->gp) {
		if (fig->dat)
			fclose(fig->dat);
		figure_settle(p, fig->name, 0);
		return -1;
	}
	fprintf(fig->gp,
		"# iommutrace: session %lld, %s. Made in this folder by 'gnuplot %s.gp', from"
		" %s.dat.\n"
		"set encoding utf8\n"
		"if (strstrt(GPVAL_TERMINALS . \" \", \" pngcairo \") > 0) {\n"
		"    set terminal pngcairo size %d,%d noenhanced font \",11\"\n"
		"} else {\n"
		"    set terminal png size %d,%d noenhanced\n"
		"}\n"
		"set output \"%s.png\"\n"
		"set grid\n",
		(long long)p->session_id, what, fig->name, fig->name, width, height, width, height,
		fig->name);
	return 0;
}

/* Runs gnuplot on the script in DIR, its output on our standard error (standard output may be
 * the report). */
static int run_gnuplot(const struct plot *p, const char *script)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		log_error("--plot: cannot start gnuplot: %s", strerror(errno));
		return -1;
	}
	if (!pid) {
		if (chdir(p->work) || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(126);
		/* -d: no gnuplotrc, no ~/.gnuplot (a user's, under sudo -E), only our script */
		execl(p->gnuplot, "gnuplot", "-d", script, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			log_error("--plot: waiting for gnuplot: %s", strerror(errno));
			return -1;
		}
	}
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	log_error("gnuplot (%s) failed on %s/%s with %s %d; its messages are above", p->gnuplot,
		  p->dir, script, WIFEXITED(status) ? "exit status" : "signal",
		  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return -1;
}

/* Closes the files (failed: nothing is drawn) and draws the figure. */
static int figure_draw(struct plot *p, struct figure *fig, bool failed)
{
	char script[80];
	bool written = !ferror(fig->dat) && !ferror(fig->gp);

	written &= !fclose(fig->dat);
	written &= !fclose(fig->gp);
	if (!failed && !written)
		log_error("--plot: writing %s/%s failed", p->work, fig->name);
	snprintf(script, sizeof(script), "%s.gp", fig->name);
	if (failed || !written) {
		figure_settle(p, fig->name, 0);
		return -1;
	}
	/* a script gnuplot failed on stays in DIR beside its data, to be looked at */
	if (run_gnuplot(p, script)) {
		figure_settle(p, fig->name, 2);
		return -1;
	}
	if (figure_settle(p, fig->name, 3))
		return -1;
	log_info("figure: %s/%s.png", p->dir, fig->name);
	p->made++;
	return 0;
}

static sqlite3_stmt *session_query(const struct plot *p, const char *sql)
{
	sqlite3_stmt *st = itdb_prepare(p->db, sql);

	if (st)
		sqlite3_bind_int64(st, 1, p->session_id);
	return st;
}

/* Whether a stepping loop ended at the end of its rows; logs otherwise. */
static bool stepped_to_end(const struct plot *p, int rc, const char *what)
{
	char context[96];

	if (rc == SQLITE_DONE)
		return true;
	snprintf(context, sizeof(context), "--plot: reading %s", what);
	itdb_log_failure(p->db, context, sqlite3_errmsg(p->db));
	return false;
}

/* ---- pages: pages mapped per page size, observed and derived ---- */

static const char pages_sql[] =
	"SELECT pgsize_bytes, SUM(CASE WHEN source = 'observed' THEN pgcount ELSE 0 END),"
	"  SUM(CASE WHEN source = 'derived' THEN pgcount ELSE 0 END) FROM driver_maps"
	"  WHERE session_id = ?1 AND op = 'map' AND map_id IS NOT NULL"
	"  GROUP BY pgsize_bytes ORDER BY pgsize_bytes";

static int plot_pages(struct plot *p)
{
	sqlite3_stmt *st = session_query(p, pages_sql);
	struct figure fig;
	char size[HUMAN_SIZE_LEN];
	int rc;

	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW || figure_open(p, &fig, "pages", 800, 550)) {
		sqlite3_finalize(st);
		return rc == SQLITE_ROW || !stepped_to_end(p, rc, "driver_maps") ? -1 : 0;
	}
	fprintf(fig.dat,
		"# session %lld: IOMMU pages mapped per page size (driver_maps rows of"
		" op 'map')\n# page_size pgsize_bytes observed derived\n",
		(long long)p->session_id);
	for (; rc == SQLITE_ROW; rc = sqlite3_step(st))
		fprintf(fig.dat, "\"%s\" %lld %lld %lld\n",
			human_size((uint64_t)sqlite3_column_int64(st, 0), size),
			(long long)sqlite3_column_int64(st, 0),
			(long long)sqlite3_column_int64(st, 1),
			(long long)sqlite3_column_int64(st, 2));
	sqlite3_finalize(st);
	/* clustered boxes of two series sit at -1/6 and +1/6 of their cluster's centre; a zero count
	 * gets an empty label at 1, not an undefined point: gnuplot 5.4.4 crashes (SIGSEGV) on a
	 * labels plot whose points are all undefined */
	fprintf(fig.gp,
		"set title \"Session %lld: IOMMU pages mapped, per page size\"\n"
		"set xlabel \"page size\"\n"
		"set ylabel \"pages (log scale)\"\n"
		"set logscale y\n"
		"set yrange [0.5:*]\n"
		"set grid noxtics\n"
		"set style data histograms\n"
		"set style histogram clustered gap 1\n"
		"set style fill solid 0.85 border -1\n"
		"set key top right\n"
		"plot \"%s.dat\" using 3:xtic(1) title \"observed (as the driver wrote them)\""
		" lc rgb \"#1b9e77\", \\\n"
		"     \"\" using 4 title \"derived (the leaf rule)\" lc rgb \"#d95f02\", \\\n"
		"     \"\" using ($0 - 1.0/6):($3 > 0 ? $3 : 1):($3 > 0 ? sprintf(\"%%.0f\", $3) : \"\")"
		" with labels offset 0,0.8 notitle, \\\n"
		"     \"\" using ($0 + 1.0/6):($4 > 0 ? $4 : 1):($4 > 0 ? sprintf(\"%%.0f\", $4) : \"\")"
		" with labels offset 0,0.8 notitle\n",
		(long long)p->session_id, fig.name);
	return figure_draw(p, &fig, !stepped_to_end(p, rc, "driver_maps"));
}

/* ---- footprint: live mapped bytes per domain over time ---- */

static const char domains_sql[] =
	"SELECT domain_ptr, MAX(live_bytes) AS peak,"
	"  (SELECT group_concat(device, ', ') FROM (SELECT DISTINCT v.device"
	"    FROM domain_devices_view v WHERE v.session_id = l.session_id"
	"    AND v.domain_ptr = l.domain_ptr ORDER BY v.device))"
	"  FROM live_bytes_view l WHERE session_id = ?1 GROUP BY domain_ptr"
	"  ORDER BY peak DESC, domain_ptr";

static const char live_sql[] =
	"SELECT domain_ptr, ts_ns, live_bytes FROM live_bytes_view WHERE session_id = ?1"
	"  ORDER BY domain_ptr, ts_ns";

static const char span_sql[] =
	"SELECT IFNULL(start_mono_ns, (SELECT MIN(mapped_ns) FROM map_pieces"
	"  WHERE session_id = ?1)), end_mono_ns FROM sessions WHERE session_id = ?1";

struct domain_line {
	bool known; /* domain_ptr not NULL */
	int64_t ptr;
	char label[160];
};

/* Seconds from t0, exactly: "-0.000001500". */
static void print_seconds(FILE *f, int64_t ns, int64_t t0)
{
	int64_t d = ns - t0;
	unsigned long long a = d < 0 ? 0ULL - (unsigned long long)d : (unsigned long long)d;

	fprintf(f, "%s%llu.%09llu", d < 0 ? "-" : "", a / 1000000000ULL, a % 1000000000ULL);
}

static int pick_domains(struct plot *p, struct domain_line *lines, int *n, int *total,
			int64_t *peak)
{
	sqlite3_stmt *st = session_query(p, domains_sql);
	int rc;

	if (!st)
		return -1;
	*n = *total = 0;
	*peak = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct domain_line *l = &lines[*n];
		const char *devices = (const char *)sqlite3_column_text(st, 2);

		if ((*total)++ >= MAX_DOMAINS)
			continue;
		l->known = sqlite3_column_type(st, 0) != SQLITE_NULL;
		l->ptr = sqlite3_column_int64(st, 0);
		if (l->known)
			snprintf(l->label, sizeof(l->label), "domain %#llx%s%s%s",
				 (unsigned long long)l->ptr, devices ? " (" : "",
				 devices ? devices : "", devices ? ")" : "");
		else
			snprintf(l->label, sizeof(l->label), "domain unknown");
		text_for_terminal(l->label); /* devices come from the database */
		if (sqlite3_column_int64(st, 1) > *peak)
			*peak = sqlite3_column_int64(st, 1);
		(*n)++;
	}
	sqlite3_finalize(st);
	return stepped_to_end(p, rc, "live_bytes_view") ? 0 : -1;
}

static int read_span(struct plot *p, int64_t *t0, bool *has_end, int64_t *end)
{
	sqlite3_stmt *st = session_query(p, span_sql);
	int rc;

	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*t0 = sqlite3_column_int64(st, 0);
		*has_end = sqlite3_column_type(st, 1) != SQLITE_NULL;
		*end = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	log_error("--plot: reading session %lld: %s", (long long)p->session_id,
		  rc == SQLITE_DONE ? "no such session" : sqlite3_errmsg(p->db));
	return -1;
}

static const struct domain_line *line_of(const struct domain_line *lines, int n, sqlite3_stmt *st)
{
	bool known = sqlite3_column_type(st, 0) != SQLITE_NULL;

	for (int i = 0; i < n; i++)
		if (lines[i].known == known &&
		    (!known || lines[i].ptr == sqlite3_column_int64(st, 0)))
			return &lines[i];
	return NULL;
}

/* The live bytes of the picked domains as one block each (in live_sql's order, which the plot
 * command follows), each held until the session's end when that is known. */
static int write_live(struct plot *p, struct figure *fig, const struct domain_line *lines, int n,
		      const struct domain_line **order, int64_t t0, bool has_end, int64_t end)
{
	sqlite3_stmt *st = session_query(p, live_sql);
	const struct domain_line *cur = NULL;
	int64_t last = 0;
	int blocks = 0, rc;

	if (!st)
		return -1;
	fprintf(fig->dat,
		"# session %lld: live IOMMU-mapped bytes per domain (live_bytes_view),"
		" after each change; time from the session's start\n# seconds live_bytes\n",
		(long long)p->session_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const struct domain_line *l = line_of(lines, n, st);

		if (!l)
			continue;
		if (l != cur) {
			if (cur && has_end) {
				print_seconds(fig->dat, end, t0);
				fprintf(fig->dat, " %lld\n", (long long)last);
			}
			fprintf(fig->dat, "%s# %s\n", blocks ? "\n\n" : "", l->label);
			order[blocks++] = cur = l;
		}
		last = sqlite3_column_int64(st, 2);
		print_seconds(fig->dat, sqlite3_column_int64(st, 1), t0);
		fprintf(fig->dat, " %lld\n", (long long)last);
	}
	if (cur && has_end) {
		print_seconds(fig->dat, end, t0);
		fprintf(fig->dat, " %lld\n", (long long)last);
	}
	sqlite3_finalize(st);
	return stepped_to_end(p, rc, "live_bytes_view") ? blocks : -1;
}

static int plot_footprint(struct plot *p)
{
	struct domain_line lines[MAX_DOMAINS];
	const struct domain_line *order[MAX_DOMAINS];
	static const struct {
		int64_t bytes;
		const char *name;
	} units[] = { { 1LL << 30, "GiB" },
		      { 1LL << 20, "MiB" },
		      { 1LL << 10, "KiB" },
		      { 1, "bytes" } };
	int n, total, blocks, u = 0;
	int64_t peak, t0 = 0, end = 0;
	bool has_end = false;
	struct figure fig;

	if (pick_domains(p, lines, &n, &total, &peak))
		return -1;
	if (!n)
		return 0;
	if (read_span(p, &t0, &has_end, &end) || figure_open(p, &fig, "footprint", 1000, 600))
		return -1;
	while (units[u].bytes > 1 && peak < units[u].bytes)
		u++;
	blocks = write_live(p, &fig, lines, n, order, t0, has_end, end);
	fprintf(fig.gp,
		"set title \"Session %lld: live IOMMU-mapped bytes per domain%s\"\n"
		"set xlabel \"time since the session started (s)\"\n"
		"set ylabel \"mapped (%s)\"\n"
		"set xrange [0:*]\n"
		"set yrange [0:*]\n"
		"set key below\n"
		"plot ",
		(long long)p->session_id, total > n ? " (the domains with the largest peaks)" : "",
		units[u].name);
	for (int i = 0; i < blocks; i++) {
		fprintf(fig.gp, "%s\"%s.dat\" index %d using 1:($2 / %lld) with steps lw 2 title ",
			i ? ", \\\n     " : "", fig.name, i, (long long)units[u].bytes);
		gnuplot_string(fig.gp, order[i]->label);
	}
	fputc('\n', fig.gp);
	if (total > n)
		fprintf(fig.gp, "# %d of the session's %d domains drawn\n", n, total);
	return figure_draw(p, &fig, blocks < 0);
}

/* ---- throughput and latency against queue depth, IOMMU off and on ---- */

static const char run_key_sql[] =
	"SELECT workload, bs_bytes, buffer, buffer_kind, device_count FROM io_runs"
	"  WHERE session_id = ?1";

/* The comparable runs (the same point but for queue depth, engine and IOMMU), off first, each
 * run's queue depths in order; a run of another session in this database counts too. */
static const char series_sql[] =
	"SELECT r.session_id, r.engine, r.iommu, r.iommu_state, r.qd, r.iops, r.gb_per_s,"
	"  IFNULL(v.spread_pct, 0), r.mean_ns / 1e3, r.p99_ns / 1e3, v.peak_pct"
	"  FROM runs_view r LEFT JOIN runs_validity_view v"
	"   ON v.session_id = r.session_id AND v.qd = r.qd"
	"  WHERE r.workload = ?1 AND r.bs_bytes = ?2 AND r.buffer_kind = ?3 AND r.devices = ?4"
	"  ORDER BY r.iommu_state IS NULL, r.iommu_state, r.session_id != ?5, r.engine,"
	"   r.session_id, r.qd";

struct run_key {
	char workload[16], buffer[64], buffer_kind[16];
	int64_t bs, devices;
};

struct series {
	int64_t session_id;
	char engine[16], iommu[16], state[8];
	int first, count; /* its rows in struct run_rows */
};

struct run_row {
	int64_t qd;
	double iops, gb_per_s, spread_pct, mean_us, p99_us;
	bool has_mean, has_p99;
};

struct run_rows {
	struct run_row *rows;
	int nrows;
	struct series series[MAX_SERIES];
	int nseries, total_series;
	int64_t last_session; /* of the row read last */
	double peak_gb_per_s; /* of this run's devices, 0 when unknown */
	double max_gb_per_s;
	double mean_us[2], p99_us[2]; /* the smallest and the largest; {0, 0}: none */
	int64_t min_qd, max_qd;
};

static void text_col(sqlite3_stmt *st, int col, char *out, size_t len)
{
	const char *s = (const char *)sqlite3_column_text(st, col);

	snprintf(out, len, "%s", s ? s : "");
}

static int read_key(struct plot *p, struct run_key *k)
{
	sqlite3_stmt *st = session_query(p, run_key_sql);
	int rc;

	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		text_col(st, 0, k->workload, sizeof(k->workload));
		k->bs = sqlite3_column_int64(st, 1);
		text_col(st, 2, k->buffer, sizeof(k->buffer));
		text_col(st, 3, k->buffer_kind, sizeof(k->buffer_kind));
		k->devices = sqlite3_column_int64(st, 4);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 1;
	return stepped_to_end(p, rc, "io_runs") ? 0 : -1;
}

static void widen(double range[2], double v)
{
	if (!range[1] || v < range[0])
		range[0] = v;
	if (v > range[1])
		range[1] = v;
}

static int add_row(struct run_rows *rr, sqlite3_stmt *st, int64_t session_id)
{
	int64_t sid = sqlite3_column_int64(st, 0);
	struct series *s;
	struct run_row *more, *row;

	if (!rr->total_series || rr->last_session != sid) {
		rr->last_session = sid;
		if (rr->total_series++ < MAX_SERIES) {
			s = &rr->series[rr->nseries++];
			s->session_id = sid;
			text_col(st, 1, s->engine, sizeof(s->engine));
			text_col(st, 2, s->iommu, sizeof(s->iommu));
			text_col(st, 3, s->state, sizeof(s->state));
			s->first = rr->nrows;
			s->count = 0;
		}
	}
	if (rr->total_series > MAX_SERIES)
		return 0;
	s = &rr->series[rr->nseries - 1];
	more = array_grow(rr->rows, (size_t)rr->nrows, sizeof(*more));
	if (!more) {
		log_error("out of memory");
		return -1;
	}
	rr->rows = more;
	row = &rr->rows[rr->nrows++];
	s->count++;
	*row = (struct run_row){ .qd = sqlite3_column_int64(st, 4),
				 .iops = sqlite3_column_double(st, 5),
				 .gb_per_s = sqlite3_column_double(st, 6),
				 .spread_pct = sqlite3_column_double(st, 7),
				 .mean_us = sqlite3_column_double(st, 8),
				 .p99_us = sqlite3_column_double(st, 9),
				 .has_mean = sqlite3_column_type(st, 8) != SQLITE_NULL,
				 .has_p99 = sqlite3_column_type(st, 9) != SQLITE_NULL };
	if (!rr->min_qd || row->qd < rr->min_qd)
		rr->min_qd = row->qd;
	if (row->qd > rr->max_qd)
		rr->max_qd = row->qd;
	if (row->gb_per_s > rr->max_gb_per_s)
		rr->max_gb_per_s = row->gb_per_s;
	if (row->has_mean)
		widen(rr->mean_us, row->mean_us);
	if (row->has_p99)
		widen(rr->p99_us, row->p99_us);
	/* this run's bandwidth over its share of the peak gives the peak */
	if (s->session_id == session_id && !rr->peak_gb_per_s &&
	    sqlite3_column_type(st, 10) != SQLITE_NULL && sqlite3_column_double(st, 10) > 0)
		rr->peak_gb_per_s = row->gb_per_s * 100 / sqlite3_column_double(st, 10);
	return 0;
}

static int read_series(struct plot *p, const struct run_key *k, struct run_rows *rr)
{
	sqlite3_stmt *st = itdb_prepare(p->db, series_sql);
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, k->workload, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, k->bs);
	sqlite3_bind_text(st, 3, k->buffer_kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, k->devices);
	sqlite3_bind_int64(st, 5, p->session_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (add_row(rr, st, p->session_id))
			break;
	sqlite3_finalize(st);
	return stepped_to_end(p, rc, "runs_view") ? 0 : -1;
}

static const char *engine_color(const char *engine)
{
	return !strcmp(engine, "uio")	? "#1b9e77" :
	       !strcmp(engine, "vfio")	? "#d95f02" :
	       !strcmp(engine, "uring") ? "#7570b3" :
					  "#e7298a";
}

/* "vfio, IOMMU on, session 2 (this run)". */
static void series_title(const struct plot *p, const struct series *s, char *out, size_t len)
{
	bool detail = *s->iommu && strcmp(s->iommu, "off") && strcmp(s->iommu, "translated");

	snprintf(out, len, "%s, IOMMU %s%s%s%s, session %lld%s", s->engine,
		 *s->state ? s->state : "unknown", detail ? " (" : "", detail ? s->iommu : "",
		 detail ? ")" : "", (long long)s->session_id,
		 s->session_id == p->session_id ? " (this run)" : "");
	text_for_terminal(out); /* engine and IOMMU state come from the database */
}

/* The style of a series: colour by engine, dashed with the IOMMU on, thicker for this run. */
static void series_style(const struct plot *p, const struct series *s, FILE *gp)
{
	fprintf(gp, "lc rgb \"%s\" dt %d lw %s pt 7 ps %s", engine_color(s->engine),
		!strcmp(s->state, "off") ? 1 :
		!strcmp(s->state, "on")	 ? 2 :
					   3,
		s->session_id == p->session_id ? "3" : "1.5",
		s->session_id == p->session_id ? "1.2" : "0.8");
}

/* Each series a block of the data file, after a comment line with its title. */
static void write_blocks(const struct plot *p, const struct run_rows *rr, FILE *dat,
			 void (*write_row)(FILE *, const struct run_row *))
{
	char title[128];

	for (int i = 0; i < rr->nseries; i++) {
		const struct series *s = &rr->series[i];

		series_title(p, s, title, sizeof(title));
		fprintf(dat, "%s# %s\n", i ? "\n\n" : "", title);
		for (int j = s->first; j < s->first + s->count; j++)
			write_row(dat, &rr->rows[j]);
	}
}

static void throughput_row(FILE *dat, const struct run_row *r)
{
	fprintf(dat, "%lld %.6g %.6g %.6g %.6g\n", (long long)r->qd, r->iops,
		r->iops * r->spread_pct / 100, r->gb_per_s, r->gb_per_s * r->spread_pct / 100);
}

/* An unknown latency is NaN, which gnuplot leaves out. */
static void latency_row(FILE *dat, const struct run_row *r)
{
	fprintf(dat, "%lld", (long long)r->qd);
	if (r->has_mean)
		fprintf(dat, " %.6g", r->mean_us);
	else
		fputs(" NaN", dat);
	if (r->has_p99)
		fprintf(dat, " %.6g\n", r->p99_us);
	else
		fputs(" NaN\n", dat);
}

static void write_plot_command(const struct plot *p, const struct run_rows *rr,
			       const struct figure *fig, const char *using, FILE *gp)
{
	char title[128];

	fputs("plot ", gp);
	for (int i = 0; i < rr->nseries; i++) {
		series_title(p, &rr->series[i], title, sizeof(title));
		fprintf(gp, "%s\"%s.dat\" index %d using %s title ", i ? ", \\\n     " : "",
			fig->name, i, using);
		gnuplot_string(gp, title);
		fputc(' ', gp);
		series_style(p, &rr->series[i], gp);
	}
	fputc('\n', gp);
	if (rr->total_series > rr->nseries)
		fprintf(gp, "# %d of the %d comparable runs drawn\n", rr->nseries,
			rr->total_series);
}

/* "randread of 4 KiB into hugetlb2m, 1 device" */
static void run_caption(const struct run_key *k, char *out, size_t len)
{
	char bs[HUMAN_SIZE_LEN];

	snprintf(out, len, "%s of %s into %s, %lld device%s", k->workload,
		 human_size((uint64_t)k->bs, bs), k->buffer, (long long)k->devices,
		 k->devices == 1 ? "" : "s");
	text_for_terminal(out); /* workload and buffer come from the database */
}

static void write_axes(const struct run_rows *rr, FILE *gp)
{
	fprintf(gp,
		"set xlabel \"queue depth per device (log scale)\"\n"
		"set logscale x 2\n"
		"set xrange [%g:%g]\n",
		(double)rr->min_qd / 1.5, (double)rr->max_qd * 1.5);
}

static void write_throughput_script(const struct plot *p, const struct run_key *k,
				    const struct run_rows *rr, const struct figure *fig)
{
	double top = rr->peak_gb_per_s > rr->max_gb_per_s ? rr->peak_gb_per_s : rr->max_gb_per_s;
	char caption[160];

	run_caption(k, caption, sizeof(caption));
	fprintf(fig->gp,
		"set title \"Session %lld: throughput against queue depth, IOMMU off and"
		" on\\n\" . ",
		(long long)p->session_id);
	gnuplot_string(fig->gp, caption);
	fputs(" . \"; error bars: standard deviation of the repeats\"\n", fig->gp);
	write_axes(rr, fig->gp);
	/* IOPS on the right: the same curves, as bandwidth is IOPS x the block size, so both axes
	 * run from 0 to the same point (gnuplot 5.4's `set link y2` draws no tics here) */
	top = top > 0 ? top * 1.15 : 1;
	fprintf(fig->gp,
		"set ylabel \"throughput (GB/s, 10^9 bytes/s)\"\n"
		"set yrange [0:%g]\n"
		"set ytics nomirror\n"
		"set y2label \"IOPS, all devices\"\n"
		"set y2range [0:%g]\n"
		"set y2tics\n"
		"set format y2 \"%%.0f\"\n"
		"set key bottom right\n",
		top, top * 1e9 / (double)k->bs);
	if (rr->peak_gb_per_s > 0)
		fprintf(fig->gp,
			"set arrow from graph 0, first %g to graph 1, first %g nohead dt 3"
			" lc rgb \"gray40\"\n"
			"set label \"peak of these devices in this database\" at graph 0.02, first %g"
			" offset 0,0.7 tc rgb \"gray40\"\n",
			rr->peak_gb_per_s, rr->peak_gb_per_s, rr->peak_gb_per_s);
	write_plot_command(p, rr, fig, "1:4:5 with yerrorlines", fig->gp);
}

/* A log scale where the latencies span a decade or more, else a linear one from 0. */
static void write_latency_axis(FILE *gp, const char *which, const double range[2])
{
	bool log_scale = range[0] > 0 && range[1] >= 10 * range[0];

	fprintf(gp,
		"set title \"%s\"\n"
		"%s\n"
		"set ylabel \"%s latency (µs%s)\"\n",
		which,
		log_scale ? "set logscale y\nset yrange [*:*]" :
			    "unset logscale y\nset yrange [0:*]",
		which, log_scale ? ", log scale" : "");
}

/* Mean and p99 side by side; the p99 alone is left out where no run has latency buckets. */
static void write_latency_script(const struct plot *p, const struct run_key *k,
				 const struct run_rows *rr, const struct figure *fig)
{
	bool p99 = rr->p99_us[1] > 0;
	char caption[160];

	run_caption(k, caption, sizeof(caption));
	fprintf(fig->gp,
		"set multiplot layout 1,%d title \"Session %lld: latency against queue"
		" depth, IOMMU off and on\\n\" . ",
		p99 ? 2 : 1, (long long)p->session_id);
	gnuplot_string(fig->gp, caption);
	fputc('\n', fig->gp);
	write_axes(rr, fig->gp);
	fputs("set offsets 0, 0, graph 0.1, 0\n"
	      "set key top left\n",
	      fig->gp);
	write_latency_axis(fig->gp, "mean", rr->mean_us);
	write_plot_command(p, rr, fig, "1:2 with linespoints", fig->gp);
	if (p99) {
		fputs("unset key\n", fig->gp);
		write_latency_axis(fig->gp, "p99", rr->p99_us);
		write_plot_command(p, rr, fig, "1:3 with linespoints", fig->gp);
	}
	fputs("unset multiplot\n", fig->gp);
}

static int plot_throughput(struct plot *p, const struct run_key *k, const struct run_rows *rr)
{
	struct figure fig;

	if (figure_open(p, &fig, "throughput", 1000, 650))
		return -1;
	fprintf(fig.dat,
		"# session %lld and the comparable runs (runs_view): per queue depth the"
		" mean over the repeats and its standard deviation\n"
		"# qd iops iops_stddev gb_per_s gb_per_s_stddev\n",
		(long long)p->session_id);
	write_blocks(p, rr, fig.dat, throughput_row);
	write_throughput_script(p, k, rr, &fig);
	return figure_draw(p, &fig, false);
}

/* Not made when no run has a mean latency (none completed a command). */
static int plot_latency(struct plot *p, const struct run_key *k, const struct run_rows *rr)
{
	struct figure fig;

	if (!(rr->mean_us[1] > 0))
		return 0;
	if (figure_open(p, &fig, "latency", 1300, 600))
		return -1;
	fprintf(fig.dat,
		"# session %lld and the comparable runs (runs_view): latency per queue"
		" depth in microseconds\n# qd mean_us p99_us\n",
		(long long)p->session_id);
	write_blocks(p, rr, fig.dat, latency_row);
	write_latency_script(p, k, rr, &fig);
	return figure_draw(p, &fig, false);
}

static int plot_runs(struct plot *p)
{
	struct run_rows rr = { 0 };
	struct run_key k;
	int rc = read_key(p, &k);

	if (rc <= 0)
		return rc;
	rc = read_series(p, &k, &rr);
	if (!rc && rr.nrows)
		rc = plot_throughput(p, &k, &rr) || plot_latency(p, &k, &rr) ? -1 : 0;
	free(rr.rows);
	return rc;
}

int plot_session(sqlite3 *db, int64_t session_id, const char *dir)
{
	struct plot p = { .db = db, .session_id = session_id, .dir = dir };
	int ret;

	if (find_gnuplot(&p) || make_dirs(&p))
		return -1;
	ret = plot_pages(&p) || plot_footprint(&p) || plot_runs(&p) ? -1 : p.made;
	if (rmdir(p.work))
		log_warn("--plot: cannot remove %s: %s", p.work, strerror(errno));
	return ret;
}
