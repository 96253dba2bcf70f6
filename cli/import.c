/* `iommutrace import`: a trace-cmd trace.dat or ftrace text file into a new database session. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "analyzer/analysis.h"
#include "common/db.h"
#include "common/db_checkpoint.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "common/out_path.h"
#include "common/schema.h"
#include "common/untrusted_text.h"
#include "tracer/event_writer.h"
#include "tracer/import_text.h"
#include "tracer/import_tracedat.h"
#include "cli/commands.h"
#include "cli/db_schema.h"
#include "cli/options.h"

enum import_format {
	FORMAT_AUTO,
	FORMAT_DAT,
	FORMAT_TEXT,
};

struct import_ctx {
	struct event_writer *writer;
	bool seen; /* an event was read: first_ts_ns is its time (a boot trace's is 0) */
	uint64_t first_ts_ns;
	uint64_t last_ts_ns;
};

/* the --help text, laid out as printed */
/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"usage: iommutrace import FILE -o DB [--force] [--format auto|dat|text]\n"
"\n"
"Reads the IOMMU events of a trace-cmd trace.dat, or of ftrace text output (the tracefs\n"
"'trace' or 'trace_pipe' file, e.g. after booting with trace_event=iommu:*, or `trace-cmd\n"
"report` output), into a new database as one session (kind 'import'). The events read are\n"
"iommu:map, unmap, attach_device_to_domain, add_device_to_group, remove_device_from_group,\n"
"io_page_fault and intel_iommu:qi_submit, cache_tag_flush_range(_np); other events are\n"
"skipped and counted.\n"
"ftrace does not see IOMMU domains or driver page sizes: maps get the page sizes the leaf\n"
"rule derives. Timestamps stay in the file's trace clock. A FILE that is not a regular file\n"
"(a pipe, /dev/stdin) is read as text; 4 MiB of text without a line that parses are refused.\n"
"\n"
"  -o, --output DB       database to create (refused if it exists, unless --force)\n"
"  -f, --force           replace an existing DB\n"
"      --format FORMAT   auto (default: trace.dat by its magic bytes, else text), dat, text\n"
"  -v, --verbose         also list the lines that could not be parsed\n"
"  -h, --help            this text\n"
"\n"
"exit status: 0 ok, 1 failure (unreadable or unusable FILE, database error, refused DB path,\n"
"stopped by a signal), 2 bad usage\n");
}
/* clang-format on */

static int on_event(const struct it_event *e, void *ctx)
{
	struct import_ctx *ic = ctx;

	if (e->h.ts_ns > ic->last_ts_ns)
		ic->last_ts_ns = e->h.ts_ns;
	if (!ic->seen || e->h.ts_ns < ic->first_ts_ns)
		ic->first_ts_ns = e->h.ts_ns;
	ic->seen = true;
	return event_writer_add(ic->writer, e);
}

static int on_loss(uint32_t cpu, uint64_t lost, const char *reason, void *ctx)
{
	struct import_ctx *ic = ctx;

	return event_writer_add_loss(ic->writer, cpu, "any", lost, reason);
}

/* Checks that FILE can be read, and as the format asked for, before any database is touched;
 * settles auto: trace.dat by its magic bytes, else text. What is not a regular file (a FIFO, a
 * device, standard input as /dev/stdin) is read once, as text: it cannot be opened twice to be
 * looked at first, and a trace.dat is read twice (import_tracedat.h). */
static int check_input(const char *path, enum import_format *format)
{
	unsigned char head[TRACEDAT_MAGIC_LEN];
	struct stat st;
	bool magic;
	FILE *f;
	size_t n;

	if (stat(path, &st)) {
		log_error("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		if (*format == FORMAT_DAT) {
			log_error("%s is not a regular file: a trace.dat is read from a file; copy it"
				  " into one first",
				  path);
			return -1;
		}
		*format = FORMAT_TEXT;
		return 0;
	}
	f = fopen(path, "rb");
	if (!f) {
		log_error("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	n = fread(head, 1, sizeof(head), f);
	fclose(f);
	magic = tracedat_has_magic(head, n);
	if (*format == FORMAT_DAT && !magic) {
		log_error("%s is not a trace-cmd trace.dat file (its first bytes are not the "
			  "trace.dat magic); for ftrace text give --format text",
			  path);
		return -1;
	}
	if (*format == FORMAT_AUTO)
		*format = magic ? FORMAT_DAT : FORMAT_TEXT;
	return 0;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Reads FILE into the writer. Returns 0, or -1 after saying why. */
static int read_input(const char *path, enum import_format format, const struct ftrace_sink *sink,
		      struct ftrace_stats *st, struct tracedat_info *info)
{
	char err[512];
	FILE *f;
	int ret;

	if (format == FORMAT_DAT) {
		if (import_tracedat(path, sink, st, info, err, sizeof(err))) {
			if (err[0])
				log_error("%s", err);
			return -1;
		}
		return 0;
	}
	f = fopen(path, "r");
	if (!f) {
		log_error("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	ret = import_text_stream(f, path, sink, st);
	fclose(f);
	if (ret)
		return -1;
	if (!ftrace_stats_total(st) && !st->skipped && !st->lost && st->malformed) {
		log_error("%s holds no ftrace event line (%llu lines could not be parsed); is it "
			  "ftrace text output? (-v lists them)",
			  path, (unsigned long long)st->malformed);
		return -1;
	}
	return 0;
}

static void print_summary(const char *path, const char *db_path, enum import_format format,
			  const struct ftrace_stats *st, const struct tracedat_info *info)
{
	printf("imported %llu IOMMU events from %s into %s (",
	       (unsigned long long)ftrace_stats_total(st), path, db_path);
	for (uint32_t k = 1, first = 1; k < IT_EV_KIND_MAX; k++) {
		if (!st->events[k])
			continue;
		printf("%s%s %llu", first ? "" : ", ", it_event_kind_name(k),
		       (unsigned long long)st->events[k]);
		first = 0;
	}
	printf("%s); skipped %llu other events, %llu malformed %s, %llu lost events",
	       ftrace_stats_total(st) ? "" : "none", (unsigned long long)st->skipped,
	       (unsigned long long)st->malformed, format == FORMAT_DAT ? "records" : "lines",
	       (unsigned long long)st->lost);
	if (format == FORMAT_DAT) {
		char clock[sizeof(info->clock)];

		snprintf(clock, sizeof(clock), "%s", info->clock[0] ? info->clock : "not recorded");
		printf("; trace clock %s", text_for_terminal(clock)); /* the file's words */
	}
	printf("\n");
}

/* What a signal stops: the import's private folder, removed by the handler, and its line. */
static const struct private_dir *stopped_dir;
static char stopped_line[PATH_MAX + 96];

/* SIGINT, SIGTERM, SIGHUP: nothing of a stopped import is kept, so the handler removes it and
 * ends the process at once (a long stretch without IOMMU events would not notice a flag) */
static void on_stop_signal(int sig)
{
	ssize_t n;

	if (stopped_dir)
		private_dir_remove(stopped_dir);
	n = write(STDERR_FILENO, stopped_line, strlen(stopped_line));
	(void)n;
	_exit(IT_EXIT_FAILURE);
}

static void set_stop_signals(void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler };

	sigfillset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static void block_stop_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, old);
}

/* The import is written in a folder of its own beside DB_PATH (DB_PATH.partial-XXXXXX, only
 * this user can enter it) and moved to DB_PATH once complete: a failed or stopped import leaves
 * no half-filled database, --force replaces the old one only on success, and of two imports
 * aimed at one new name one gets it. */
static int run_import(const char *path, const char *db_path, bool force, enum import_format format)
{
	struct import_ctx ic = { 0 };
	struct ftrace_sink sink = { on_event, on_loss, &ic };
	struct ftrace_stats st = { 0 };
	struct tracedat_info info = { 0 };
	struct itdb_session_end end = { .end_reason = "end-of-input" };
	struct db_checkpointer *ckpt = NULL;
	static struct private_dir pd;
	sigset_t old_mask;
	char err[512], real[PATH_MAX];
	sqlite3 *db = NULL;
	int64_t sid;
	int ret = IT_EXIT_FAILURE;

	if (check_input(path, &format))
		return IT_EXIT_FAILURE;
	if (same_file(path, db_path)) {
		log_error("the output %s is the input file", db_path);
		return IT_EXIT_USAGE;
	}
	if (itdb_check_create(db_path, force, NULL, err, sizeof(err)) ||
	    private_dir_make(&pd, db_path, err, sizeof(err))) {
		log_error("%s", err);
		return IT_EXIT_FAILURE;
	}
	snprintf(stopped_line, sizeof(stopped_line),
		 "iommutrace: error: import stopped by a signal: "
		 "nothing written to %s\n",
		 db_path);
	stopped_dir = &pd;
	set_stop_signals(on_stop_signal);
	db = itdb_open(pd.files[0], ITDB_CREATE, &iommutrace_schema, err, sizeof(err));
	if (!db) {
		log_error("%s", err);
		goto cleanup;
	}
	/* reading the input goes on while a checkpoint syncs */
	ckpt = db_checkpointer_start(db, DB_CHECKPOINT_BYTES, err, sizeof(err));
	if (!ckpt)
		log_debug("checkpoints stay on the import's thread: %s", err);
	if (itdb_session_begin(db,
			       &(struct itdb_session_info){
				       .kind = "import",
				       .imported = 1,
				       .derive_pgsize_bitmap = EVENT_WRITER_DEFAULT_PGSIZES,
				       .capture =
					       format == FORMAT_DAT ? "trace.dat" : "ftrace-text",
				       .source_path = realpath(path, real) ? real : path },
			       &sid))
		goto cleanup;
	ic.writer = event_writer_new(db, sid, &(struct event_writer_opts){ 0 });
	if (!ic.writer || read_input(path, format, &sink, &st, &info))
		goto cleanup;
	end.has_start_mono_ns = ic.seen;
	end.start_mono_ns = ic.first_ts_ns;
	end.end_mono_ns = ic.last_ts_ns;
	end.trace_clock = info.clock[0] ? info.clock : NULL;
	end.events_total = event_writer_count(ic.writer);
	end.events_lost = st.lost;
	if (event_writer_finish(ic.writer))
		goto cleanup;
	db_checkpointer_stop(ckpt);
	ckpt = NULL;
	if (itdb_session_end(db, sid, &end) ||
	    itdb_exec(db, it_capture_index_sql, "create the capture's indexes") ||
	    analysis_session_finish(db, sid))
		goto cleanup;
	ret = IT_EXIT_OK;
cleanup:
	event_writer_free(ic.writer);
	db_checkpointer_stop(ckpt);
	/* from here the import ends as it is: a signal waits until it is installed or removed */
	block_stop_signals(&old_mask);
	if (itdb_close(db))
		ret = IT_EXIT_FAILURE;
	if (ret == IT_EXIT_OK &&
	    out_path_install(pd.files[0], db_path, force, NULL, err, sizeof(err))) {
		log_error("%s", err);
		ret = IT_EXIT_FAILURE;
	}
	/* with what a failure (a full disk) left in it */
	if (private_dir_remove(&pd))
		log_warn("could not remove %s: %s", pd.dir, strerror(errno));
	if (ret == IT_EXIT_OK)
		print_summary(path, db_path, format, &st, &info);
	set_stop_signals(SIG_DFL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	return ret;
}

struct import_opts {
	const char *db_path;
	bool force;
	enum import_format format;
};

static int on_option(void *ctx, int opt, const char *arg)
{
	struct import_opts *o = ctx;

	switch (opt) {
	case 'o':
		o->db_path = arg;
		return 0;
	case 'f':
		o->force = true;
		return 0;
	default: /* 'F' */
		if (!strcmp(arg, "auto")) {
			o->format = FORMAT_AUTO;
		} else if (!strcmp(arg, "dat")) {
			o->format = FORMAT_DAT;
		} else if (!strcmp(arg, "text")) {
			o->format = FORMAT_TEXT;
		} else {
			log_error("bad format '%s': give auto, dat or text", arg);
			return -1;
		}
		return 0;
	}
}

int cmd_import(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "format", required_argument, NULL, 'F' },
		{},
	};
	static const struct cli_command cmd = {
		.name = "import",
		.short_opts = "o:f",
		.long_opts = long_opts,
		.usage = usage,
		.on_option = on_option,
		.operands = CLI_OPERANDS,
	};
	struct import_opts o = { .format = FORMAT_AUTO };
	int status;

	if (!cli_parse(&cmd, argc, argv, &o, &status))
		return status;
	if (optind != argc - 1) {
		log_error(optind == argc ?
				  "no input file: give the trace.dat or text file to read" :
				  "more than one input file: import reads one file per run");
		return IT_EXIT_USAGE;
	}
	if (!o.db_path) {
		log_error("no output database: give -o DB");
		return IT_EXIT_USAGE;
	}
	return run_import(argv[optind], o.db_path, o.force, o.format);
}
