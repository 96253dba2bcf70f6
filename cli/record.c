/* `iommutrace record`: options and help; the work is in tracer/recorder.c. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "analyzer/analysis.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "common/parse.h"
#include "tracer/aggregates.h"
#include "tracer/recorder.h"
#include "cli/commands.h"
#include "cli/db_schema.h"
#include "cli/options.h"

/* the --help text, laid out as printed */
/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"usage: iommutrace record -o FILE.db [-d TIME] [--force | --append] [--ring-size SIZE] [--tracefs]\n"
"                         [--mode MODE] [--threshold SIZE] [--flush-interval TIME]\n"
"                         [--tracepoints-only]\n"
"                         [--root DIR] [-- COMMAND ARGS...]\n"
"       iommutrace record --list-probes [--tracefs | --tracepoints-only]\n"
"\n"
"Records every IOMMU mapping (iova, physical address, size, domain), the page sizes the IOMMU\n"
"driver writes, attach and group events, faults and IOTLB invalidations into a new SQLite\n"
"database, with the machine's PCI devices, BARs, IOMMU units and boot options.\n"
"Traces until the duration ends, COMMAND exits, or SIGINT/SIGTERM/SIGHUP; the database is complete\n"
"in every case, and readable with sqlite3 while recording.\n"
"\n"
"  -o, --output FILE     database to create (refused if it exists, unless --force)\n"
"  -d, --duration TIME   stop after TIME: seconds, or with a unit (us, ms, s, m, h)\n"
"  -f, --force           replace an existing FILE\n"
"  -a, --append          add this session to FILE when it exists (an iommutrace database; an\n"
"                        older one is migrated): several sessions in one file, which report\n"
"                        shows one by one and compares (IOMMU off against on)\n"
"      --ring-size SIZE  BPF ring buffer size (default 16M; K/M/G suffixes)\n"
"      --mode MODE       what becomes a row (eBPF capture):\n"
"                          threshold (default): maps and unmaps of at least --threshold,\n"
"                            with their driver pages, are rows; smaller ones are counted\n"
"                            per domain and class of call (map_aggregates), as are IOTLB\n"
"                            invalidations\n"
"                          per-event: every map, unmap, driver page and invalidation is a row\n"
"                          aggregate: all of those are counted, none is a row\n"
"                        attach, group, fault and domain records are rows in every mode\n"
"      --threshold SIZE  the threshold mode's boundary (default 2M; K/M/G suffixes)\n"
"      --flush-interval TIME  how often counts are stored (default 1s; aggregate and\n"
"                        threshold modes)\n"
"      --tracefs         capture the tracepoints through tracefs instead of eBPF\n"
"                        (no domains, no driver page sizes)\n"
"      --tracepoints-only\n"
"                        eBPF on the iommu:* tracepoints alone, like trace-cmd -e iommu: no\n"
"                        invalidations, no domain or driver probes (no domains; page sizes\n"
"                        derived by the leaf rule), the lightest capture\n"
"      --list-probes     show which probes attach on this kernel, how, and why not\n"
"      --root DIR        read the machine inventory (sysfs, /proc/cmdline) under DIR\n"
"  -v, --verbose         debug messages; twice (-v -v) adds libbpf's and the verifier's\n"
"  -h, --help            this text\n"
"\n"
"Needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) for eBPF; without them, or without kernel\n"
"BTF, it falls back to tracefs, which needs write access to /sys/kernel/tracing.\n"
"exit status: 0 ok, 1 failure, 2 bad usage, 3 BPF load/attach failed, 4 missing privilege\n");
}
/* clang-format on */

/* The command line: the recorder's options, and what is checked once all are read. */
struct record_args {
	struct recorder_opts o;
	bool list, mode_given;
	const char *threshold, *flush;
};

static int on_option(void *ctx, int opt, const char *arg)
{
	struct record_args *a = ctx;
	struct recorder_opts *o = &a->o;
	uint64_t size;

	switch (opt) {
	case 'o':
		o->db_path = arg;
		break;
	case 'd':
		if (parse_duration_ns(arg, &o->duration_ns)) {
			log_error("bad duration '%s': give seconds (e.g. 10, 0.5) or a number with us, "
				  "ms, s, m or h",
				  arg);
			return -1;
		}
		break;
	case 'f':
		o->force = true;
		break;
	case 'a':
		o->append = true;
		break;
	case 'r':
		if (parse_size(arg, &size) || size < 4096 || size > (1ull << 31)) {
			log_error("bad ring size '%s': give 4K to 2G (e.g. 64M)", arg);
			return -1;
		}
		o->ringbuf_bytes = size;
		break;
	case 't':
		o->use_tracefs = true;
		break;
	case 'P':
		o->tracepoints_only = true;
		break;
	case 'l':
		a->list = true;
		break;
	case 's':
		o->sysfs_root = arg;
		break;
	case 'm':
		if (cli_parse_capture_mode(arg, &o->mode))
			return -1;
		a->mode_given = true;
		break;
	case 'T':
		if (parse_size(arg, &o->threshold_bytes) || !o->threshold_bytes) {
			log_error("bad threshold '%s': give a size above 0 (e.g. 64K, 2M)", arg);
			return -1;
		}
		a->threshold = arg;
		break;
	case 'F':
		if (parse_duration_ns(arg, &o->flush_interval_ns) ||
		    o->flush_interval_ns < 1000000) {
			log_error("bad flush interval '%s': give 1ms or more (e.g. 500ms, 2s)",
				  arg);
			return -1;
		}
		a->flush = arg;
		break;
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "force", no_argument, NULL, 'f' },
		{ "append", no_argument, NULL, 'a' },
		{ "ring-size", required_argument, NULL, 'r' },
		{ "tracefs", no_argument, NULL, 't' },
		{ "list-probes", no_argument, NULL, 'l' },
		{ "root", required_argument, NULL, 's' },
		{ "mode", required_argument, NULL, 'm' },
		{ "threshold", required_argument, NULL, 'T' },
		{ "flush-interval", required_argument, NULL, 'F' },
		{ "tracepoints-only", no_argument, NULL, 'P' },
		{},
	};
	static const struct cli_command cmd = {
		.name = "record",
		.short_opts = "+o:d:fa",
		.long_opts = long_opts,
		.usage = usage,
		.on_option = on_option,
		.operands = CLI_OPERANDS,
	};
	struct record_args a = {
		.o = { .sysfs_root = "/",
		       .mode = CAPTURE_THRESHOLD,
		       .schema = &iommutrace_schema,
		       .finish = analysis_session_finish },
	};
	struct recorder_opts *o = &a.o;
	int status;

	if (!cli_parse(&cmd, argc, argv, &a, &status))
		return status;
	if (optind < argc) {
		o->command = argv + optind;
		if (strcmp(argv[optind - 1], "--")) {
			log_error("unexpected argument '%s': put the command to trace after '--'",
				  argv[optind]);
			return IT_EXIT_USAGE;
		}
	}
	if (a.list)
		return recorder_list_probes(o);
	if (!o->db_path) {
		log_error("no output database: give -o FILE.db");
		return IT_EXIT_USAGE;
	}
	if (a.threshold && o->mode != CAPTURE_THRESHOLD) {
		log_error("--threshold sets the threshold mode's boundary: drop it or --mode %s",
			  capture_mode_name(o->mode));
		return IT_EXIT_USAGE;
	}
	if (a.flush && o->mode == CAPTURE_PER_EVENT) {
		log_error("--flush-interval stores counts, which --mode per-event does not keep: "
			  "give one");
		return IT_EXIT_USAGE;
	}
	if (o->use_tracefs && a.mode_given && o->mode != CAPTURE_PER_EVENT) {
		log_error("--tracefs records every call: --mode %s needs eBPF capture",
			  capture_mode_name(o->mode));
		return IT_EXIT_USAGE;
	}
	if (o->force && o->append) {
		log_error("--force replaces FILE and --append adds to it: give one");
		return IT_EXIT_USAGE;
	}
	return recorder_run(o);
}
