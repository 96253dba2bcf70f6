/* `iommutrace report DB`: explains a database, session by session (analyzer/report.h), as text,
 * JSON or CSV. */
#include <getopt.h>
#include <stdio.h>
#include "analyzer/analysis.h"
#include "analyzer/plot.h"
#include "analyzer/report.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "cli/analysis_options.h"
#include "cli/commands.h"
#include "cli/db_schema.h"
#include "cli/options.h"

/* the --help text, laid out as printed */
/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"usage: iommutrace report DB [--session N] [--json | --csv | --format FORMAT] [--plot DIR]\n"
"\n"
"Explains what a database recorded, per session: the session (command, kernel, duration,\n"
"events and losses) and the probes that attached; per IOMMU domain, with its devices, type\n"
"and page sizes, the maps and unmaps, the page-table entries written (observed in the driver,\n"
"or derived by the leaf rule), the peak and final live bytes and the churn; histograms of map\n"
"call sizes and of page sizes; the mappings never unmapped (text: the first 20); the lost\n"
"events; and a map -o or io -o run in short. Every table is a report_*_view of the database,\n"
"with session_id, for sqlite3 (docs/schema.md). An older database is migrated first, and map\n"
"lifetimes (map_pieces) computed where missing: report writes to DB, or, when it cannot\n"
"(read-only media, no permission), to a copy of DB in memory.\n"
"\n"
"  DB                    a database of iommutrace record, import, map -o or io -o\n"
ANALYSIS_OPTIONS_HELP
"  -P, --plot DIR        also draw each session's figures into DIR through gnuplot (PNG, with\n"
"                        the .dat data and the .gp script of each): page sizes, live bytes\n"
"                        over time, and for an io run throughput and latency against queue\n"
"                        depth beside the runs with the IOMMU off or on; gnuplot is\n"
"                        $IOMMUTRACE_GNUPLOT or the first in PATH (apt-get install gnuplot-nox)\n"
"  -v, --verbose         debug messages\n"
"  -h, --help            this text\n"
"\n"
"exit status: 0 ok, 1 failure (unreadable DB, not an iommutrace database, a newer schema,\n"
"no such session), 2 bad usage\n");
}
/* clang-format on */

struct report_opts {
	struct analysis_opts a;
	const char *plot_dir;
};

static int on_option(void *ctx, int opt, const char *arg)
{
	struct report_opts *o = ctx;
	int rc = analysis_option(&o->a, opt, arg, "report");

	if (rc <= 0)
		return rc;
	o->plot_dir = arg; /* 'P' */
	return 0;
}

/* 0, 1 after --help, -1 bad usage (said) */
static int parse_args(int argc, char **argv, struct analysis_opts *o, const char **plot_dir)
{
	static const struct option long_opts[] = {
		ANALYSIS_LONG_OPTIONS,
		{ "plot", required_argument, NULL, 'P' },
		{},
	};
	static const struct cli_command cmd = {
		.name = "report",
		.short_opts = ANALYSIS_SHORT_OPTIONS "P:",
		.long_opts = long_opts,
		.usage = usage,
		.on_option = on_option,
		.operands = CLI_OPERANDS,
	};
	struct report_opts ro = { .plot_dir = NULL };
	int status;

	analysis_opts_init(&ro.a);
	if (!cli_parse(&cmd, argc, argv, &ro, &status))
		return status == IT_EXIT_OK ? 1 : -1;
	*o = ro.a;
	*plot_dir = ro.plot_dir;
	return analysis_db_argument(o, argc, argv, "report");
}

int cmd_report(int argc, char **argv)
{
	struct analysis_opts o;
	struct analysis a;
	struct render r;
	const char *plot_dir = NULL;
	int rc = parse_args(argc, argv, &o, &plot_dir), failed = 0;

	if (rc)
		return rc > 0 ? IT_EXIT_OK : IT_EXIT_USAGE;
	if (analysis_open(&a, o.db_path, &iommutrace_schema, o.session))
		return IT_EXIT_FAILURE;
	render_begin(&r, o.format, stdout, "report", o.db_path);
	for (size_t i = 0; i < a.nsessions && !failed; i++)
		failed = report_session(&r, a.db, a.sessions[i]);
	if (render_end(&r))
		failed = 1;
	for (size_t i = 0; plot_dir && i < a.nsessions && !failed; i++) {
		int figures = plot_session(a.db, a.sessions[i], plot_dir);

		if (figures < 0)
			failed = 1;
		else
			log_info("session %lld: %d figures in %s", (long long)a.sessions[i],
				 figures, plot_dir);
	}
	analysis_close(&a);
	return failed ? IT_EXIT_FAILURE : IT_EXIT_OK;
}
