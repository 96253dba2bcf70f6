/* iommutrace: git-style dispatch to the subcommands. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "common/exit_codes.h"
#include "common/log.h"
#include "cli/commands.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "record", cmd_record,
	  "trace IOMMU mappings into a database (eBPF, or tracefs as fallback)" },
	{ "devices", cmd_devices, "show PCI devices, IOMMU groups, BARs and IOMMU capabilities" },
	{ "import", cmd_import, "read a trace-cmd trace.dat or ftrace text file into a database" },
	{ "map", cmd_map,
	  "map a buffer into a device's IOMMU domain through VFIO (recording with -o)" },
	{ "io", cmd_io,
	  "read (or write) NVMe namespaces through a user-space driver or the kernel's; IOPS, latency" },
	{ "report", cmd_report,
	  "explain a database: maps, page sizes, live bytes, churn, runs, per session and domain" },
	{ "audit", cmd_audit,
	  "audit align: why pages are not larger; audit bar: mappings of PCI BARs, IOTLB reach" },
	{ "snapshot", cmd_snapshot,
	  "read what the IOMMU holds now: each domain's translation table, as runs of pages" },
	{ "restore", cmd_restore,
	  "put back devices a killed map or io left on vfio-pci or uio_pci_generic" },
};

/* the --help text, laid out as printed */
/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f, "usage: iommutrace [-v] [--version] COMMAND [ARGS...]\n\n"
		   "Shows how the IOMMU maps memory for devices.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'iommutrace COMMAND --help' describes each command.\n\n"
		   "exit status: 0 ok, 1 failure, 2 bad usage, 3 BPF load/attach failed,\n"
		   "             4 missing privilege\n");
}
/* clang-format on */

int main(int argc, char **argv)
{
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			log_verbose = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return IT_EXIT_OK;
		} else if (!strcmp(argv[i], "--version")) {
			printf("iommutrace %s\n", IT_VERSION);
			return IT_EXIT_OK;
		} else {
			log_error("unknown option '%s'; see 'iommutrace --help'", argv[i]);
			return IT_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return IT_EXIT_USAGE;
	}
	for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
		if (!strcmp(argv[i], commands[c].name)) {
			optind = 1;
			return commands[c].run(argc - i, argv + i);
		}
	}
	log_error("unknown command '%s'; see 'iommutrace --help'", argv[i]);
	return IT_EXIT_USAGE;
}
