/* `iommutrace audit align DB` and `iommutrace audit bar DB`: why map calls got the pages they got
 * (analyzer/audit_align.h), and what the mappings of PCI BARs cost the IOTLB
 * (analyzer/audit_bar.h), session by session, as text, JSON or CSV. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "analyzer/analysis.h"
#include "analyzer/audit_align.h"
#include "analyzer/audit_bar.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "common/parse.h"
#include "common/untrusted_text.h"
#include "cli/analysis_options.h"
#include "cli/commands.h"
#include "cli/db_schema.h"
#include "cli/options.h"

#define EXIT_STATUS_HELP \
	"exit status: 0 ok, 1 failure (unreadable DB, not an iommutrace database, a newer schema,\n" \
	"no such session), 2 bad usage\n"

#define MIGRATE_HELP \
	"An older database is migrated first, and map lifetimes computed where missing: audit writes\n" \
	"to DB, or, when it cannot (read-only media, no permission), to a copy of DB in memory.\n"

/* the --help text, laid out as printed */
/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"usage: iommutrace audit align DB [--session N] [--json | --csv | --format FORMAT]\n"
"       iommutrace audit bar DB [--device BDF] [--iotlb-entries N] [--session N]\n"
"                            [--json | --csv | --format FORMAT]\n"
"\n"
"Audits the IOMMU page-table entries a database recorded:\n"
"  align   why each map call got the page sizes it got (alignment of IOVA and physical\n"
"          address, length, the domain's page sizes, the driver), and what would give it\n"
"          larger ones\n"
"  bar     the mappings of PCI BARs (a GPU's BAR1 first): the IOTLB entries they take, at the\n"
"          pages written and at the largest pages the IOMMU has\n"
"\n"
"'iommutrace audit align --help' and 'iommutrace audit bar --help' describe each.\n"
"\n" EXIT_STATUS_HELP);
}
/* clang-format on */

/* the --help text, laid out as printed */
/* clang-format off */
static void usage_align(FILE *f)
{
	fprintf(f,
"usage: iommutrace audit align DB [--session N] [--json | --csv | --format FORMAT]\n"
"\n"
"Explains the page sizes of every map call, grouped where alike (same domain, size, IOVA and\n"
"physical alignment, pages written), the groups with the most bytes below the largest page\n"
"possible first. Per group: the pages written (observed in the driver, or derived by the leaf\n"
"rule), the alignment of IOVA and physical address, the largest page that alignment and the\n"
"length allow, the largest the domain's page sizes allow, and the reason the pages are not\n"
"larger: iova misaligned, paddr misaligned, iova and paddr misaligned, length (the mapping is\n"
"too short), hardware (the domain or the IOMMU lacks the larger page: superpages off), driver\n"
"(it wrote smaller pages than alignment and domain allow) or none (the largest page the IOMMU\n"
"has); with the fix: a BAR offset or IOVA aligned to the larger page, hugetlb memory, a boot\n"
"option. Then the bytes mapped with the largest page possible for their length, and below it.\n"
"Text shows the first 20 groups and every group below that page, each fix as a note under the\n"
"table; JSON and CSV give every group with every column.\n"
"The tables are audit_align_view and audit_align_summary_view (per map:\n"
"audit_align_maps_view) of the database, with session_id, for sqlite3 (docs/schema.md).\n"
"\n" MIGRATE_HELP
"\n"
"  DB                    a database of iommutrace record, import, map -o or io -o\n"
ANALYSIS_OPTIONS_HELP
"  -v, --verbose         debug messages\n"
"  -h, --help            this text\n"
"\n" EXIT_STATUS_HELP);
}
/* clang-format on */

/* the --help text, laid out as printed */
/* clang-format off */
static void usage_bar(FILE *f)
{
	fprintf(f,
"usage: iommutrace audit bar DB [--device BDF] [--iotlb-entries N] [--session N]\n"
"                            [--json | --csv | --format FORMAT]\n"
"\n"
"Lists the windows of PCI BARs that map calls mapped (a GPU's BAR1 first: the gpu_bar1\n"
"table, or BAR1 of an NVIDIA display controller), per device and BAR, calls alike counted\n"
"once: where in the BAR, the alignment, the pages written and the IOTLB entries they take,\n"
"against the entries the same length would take aligned to the largest pages the IOMMU has,\n"
"and a conclusion against an IOTLB of N entries; then the windows of each BAR together.\n"
"Text shows the first 20 windows and every window that aligning would shrink; JSON and CSV\n"
"give every window with every column. The tables are audit_bar_view and\n"
"audit_bar_summary_view of the database, with session_id, for sqlite3 (docs/schema.md); the\n"
"conclusion is computed here, for N.\n"
"\n" MIGRATE_HELP
"\n"
"  DB                    a database of iommutrace record, map -o or io -o (an import has no\n"
"                        BARs)\n"
"  -d, --device BDF      only the BARs of device BDF (e.g. 0000:01:00.0)\n"
"  -n, --iotlb-entries N\n"
"                        the IOTLB's entries (default %d, pcie-bench's estimate of an\n"
"                        IOTLB's size)\n"
ANALYSIS_OPTIONS_HELP
"  -v, --verbose         debug messages\n"
"  -h, --help            this text\n"
"\n"
"exit status: 0 ok, 1 failure (unreadable DB, not an iommutrace database, a newer schema,\n"
"no such session, no BAR of --device recorded), 2 bad usage\n", AUDIT_IOTLB_ENTRIES);
}
/* clang-format on */

/* The IOTLB sizes worth stating: a real one has tens to thousands of entries. */
#define IOTLB_ENTRIES_MAX (1 << 24)

/* --device and --iotlb-entries of `audit bar`: 0, or -1 (logged). */
static int bar_option(int opt, const char *arg, struct audit_bar_opts *bar)
{
	uint64_t n;

	if (opt == 'd') {
		if (parse_bdf(arg, bar->device)) {
			log_error("bad PCI address '%s': give DDDD:BB:DD.F, e.g. 0000:01:00.0",
				  arg);
			return -1;
		}
		return 0;
	}
	if (parse_u64(arg, &n) || n == 0 || n > IOTLB_ENTRIES_MAX) {
		log_error("bad --iotlb-entries '%s': give a number of entries from 1 to %d", arg,
			  IOTLB_ENTRIES_MAX);
		return -1;
	}
	bar->iotlb_entries = (int64_t)n;
	return 0;
}

struct audit_opts {
	struct analysis_opts a;
	struct audit_bar_opts *bar; /* NULL: audit align */
	const char *command;
};

static int on_option(void *ctx, int opt, const char *arg)
{
	struct audit_opts *o = ctx;
	int rc = analysis_option(&o->a, opt, arg, o->command);

	return rc <= 0 ? rc : bar_option(opt, arg, o->bar); /* 'd', 'n': audit bar's */
}

/* Options of `audit align` (bar NULL) or `audit bar`: 0, 1 after --help, -1 bad usage. */
static int parse_args(int argc, char **argv, const char *command, struct analysis_opts *o,
		      struct audit_bar_opts *bar)
{
	static const struct option align_opts[] = {
		ANALYSIS_LONG_OPTIONS,
		{},
	};
	static const struct option bar_opts[] = {
		ANALYSIS_LONG_OPTIONS,
		{ "device", required_argument, NULL, 'd' },
		{ "iotlb-entries", required_argument, NULL, 'n' },
		{},
	};
	const struct cli_command cmd = {
		.name = command,
		.short_opts = bar ? ANALYSIS_SHORT_OPTIONS "d:n:" : ANALYSIS_SHORT_OPTIONS,
		.long_opts = bar ? bar_opts : align_opts,
		.usage = bar ? usage_bar : usage_align,
		.on_option = on_option,
		.operands = CLI_OPERANDS,
	};
	struct audit_opts ao = { .bar = bar, .command = command };
	int status;

	analysis_opts_init(&ao.a);
	if (!cli_parse(&cmd, argc, argv, &ao, &status))
		return status == IT_EXIT_OK ? 1 : -1;
	*o = ao.a;
	return analysis_db_argument(o, argc, argv, command);
}

/* Runs one subcommand: bar == NULL for align. */
static int audit(int argc, char **argv, const char *command, struct audit_bar_opts *bar)
{
	struct analysis_opts o;
	struct analysis a;
	struct render r;
	char suffix[48] = "", word[PATH_MAX + 64];
	int rc = parse_args(argc, argv, command, &o, bar), failed = 0;

	if (rc)
		return rc > 0 ? IT_EXIT_OK : IT_EXIT_USAGE;
	if (analysis_open(&a, o.db_path, &iommutrace_schema, o.session))
		return IT_EXIT_FAILURE;
	if (bar && bar->device[0]) {
		rc = audit_bar_device_known(a.db, bar->device);
		if (rc == 0)
			log_error("%s recorded no BAR of %s: 'sqlite3 %s \"SELECT DISTINCT bdf FROM "
				  "bars\"' lists the devices with BARs",
				  o.db_path, bar->device,
				  shell_word(word, sizeof(word), o.db_path));
		if (rc <= 0) {
			analysis_close(&a);
			return IT_EXIT_FAILURE;
		}
	}
	render_begin(&r, o.format, stdout, command, o.db_path);
	for (size_t i = 0; i < a.nsessions && !failed; i++) {
		if (a.nsessions > 1)
			snprintf(suffix, sizeof(suffix), " (session %lld)",
				 (long long)a.sessions[i]);
		failed = bar ? audit_bar_render(&r, a.db, a.sessions[i], suffix, bar) :
			       audit_align_render(&r, a.db, a.sessions[i], suffix);
	}
	if (render_end(&r))
		failed = 1;
	analysis_close(&a);
	return failed ? IT_EXIT_FAILURE : IT_EXIT_OK;
}

int cmd_audit(int argc, char **argv)
{
	struct audit_bar_opts bar = { .iotlb_entries = AUDIT_IOTLB_ENTRIES };

	if (argc < 2) {
		log_error("audit needs a subcommand: align or bar; see 'iommutrace audit --help'");
		return IT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return IT_EXIT_OK;
	}
	optind = 1;
	if (!strcmp(argv[1], "align"))
		return audit(argc - 1, argv + 1, "audit align", NULL);
	if (!strcmp(argv[1], "bar"))
		return audit(argc - 1, argv + 1, "audit bar", &bar);
	if (argv[1][0] == '-')
		log_error("unknown option '%s': audit takes align or bar first; see 'iommutrace "
			  "audit --help'",
			  argv[1]);
	else
		log_error("unknown audit subcommand '%s': give align or bar; see 'iommutrace audit "
			  "--help'",
			  argv[1]);
	return IT_EXIT_USAGE;
}
