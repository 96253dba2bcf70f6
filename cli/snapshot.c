/* `iommutrace snapshot`: what the IOMMU holds now. Reads each IOMMU group's current domain's
 * translation table, read-only, through tracer/snapshot_reader.h, and stores the leaves as runs
 * with the machine's inventory in a session of kind 'snapshot'. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/db.h"
#include "common/exit_codes.h"
#include "common/human_size.h"
#include "common/inventory.h"
#include "common/log.h"
#include "common/parse.h"
#include "common/privilege.h"
#include "common/schema.h"
#include "tracer/snapshot_reader.h"
#include "tracer/snapshot_store.h"
#include "cli/commands.h"
#include "cli/db_schema.h"
#include "cli/options.h"

#define MAX_DEVICES 64

/* the --help text, laid out as printed */
/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"usage: iommutrace snapshot -o FILE.db [--force | --append] [--device BDF]...\n"
"\n"
"Reads what the IOMMU holds now: for each IOMMU group (or those of the devices named), its\n"
"current domain and, for a translated one, every leaf of its translation table (IOVA, physical\n"
"address, page size, level, permissions), read-only, by an eBPF program that walks the table\n"
"through the kernel's direct map. Leaves of one size, contiguous in IOVA and physical address,\n"
"are stored as one run. Identity (passthrough) and blocked domains are stored as such. A read\n"
"during which the kernel mapped or unmapped in the domain (in any domain where the driver's\n"
"calls cannot be probed) is done again, three tries; one never quiet is stored inconsistent.\n"
"\n"
"Reads Intel VT-d tables as the kernel's intel-iommu driver keeps them (Linux 5.17 to 6.18) and\n"
"as its generic page table does (6.19 on); a domain in another format (AMD-Vi) is stored as\n"
"'unreadable'.\n"
"\n"
"  -o, --output FILE.db  the database (a new file unless --append)\n"
"  -f, --force           replace FILE.db\n"
"  -a, --append          add this snapshot's session to FILE.db when it exists\n"
"  -d, --device BDF      only the group of this PCI device (repeatable)\n"
"  -v, --verbose         debug messages\n"
"  -h, --help            this text\n"
"\n"
"Needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), kprobes and kernel BTF.\n"
"exit status: 0 ok, 1 failure, 2 bad usage, 3 BPF load/attach failed, 4 missing privilege\n");
}
/* clang-format on */

struct snapshot_opts {
	const char *db_path;
	bool force, append;
	char devices[MAX_DEVICES][13];
	unsigned n_devices;
};

static int on_option(void *ctx, int opt, const char *arg)
{
	struct snapshot_opts *o = ctx;

	switch (opt) {
	case 'o':
		o->db_path = arg;
		return 0;
	case 'f':
		o->force = true;
		return 0;
	case 'a':
		o->append = true;
		return 0;
	case 'd':
		if (o->n_devices == MAX_DEVICES) {
			log_error("snapshot: at most %d --device", MAX_DEVICES);
			return -1;
		}
		if (parse_bdf(arg, o->devices[o->n_devices])) {
			log_error("--device: '%s' is not a PCI address (e.g. 0000:01:00.0)", arg);
			return -1;
		}
		o->n_devices++;
		return 0;
	}
	return -1;
}

static const struct pci_device *find_device(const struct inventory *inv, const char *bdf)
{
	for (size_t i = 0; i < inv->n_devices; i++)
		if (!strcmp(inv->devices[i].bdf, bdf))
			return &inv->devices[i];
	return NULL;
}

/* The groups to read: those of the devices named, or every group with a device; -1 said */
static int choose_groups(const struct snapshot_opts *o, const struct inventory *inv, int *groups,
			 size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < (o->n_devices ? o->n_devices : inv->n_devices); i++) {
		const struct pci_device *dev =
			o->n_devices ? find_device(inv, o->devices[i]) : &inv->devices[i];
		bool seen = false;

		if (!dev) {
			log_error("snapshot: no PCI device %s (iommutrace devices lists them)",
				  o->devices[i]);
			return -1;
		}
		if (dev->iommu_group < 0) {
			if (!o->n_devices)
				continue;
			log_error("snapshot: %s is in no IOMMU group: no IOMMU translates for it",
				  dev->bdf);
			return -1;
		}
		for (size_t j = 0; j < *n; j++)
			seen |= groups[j] == dev->iommu_group;
		if (!seen)
			groups[(*n)++] = dev->iommu_group;
	}
	return 0;
}

/* "4 KiB x 512, 2 MiB x 3" */
static void print_pages(const struct snapshot_domain *d)
{
	uint64_t pages[64] = { 0 };
	char size[HUMAN_SIZE_LEN];
	const char *sep = "";

	for (size_t i = 0; i < d->nruns; i++)
		pages[__builtin_ctzll(d->runs[i].pgsize) & 63] += d->runs[i].count;
	for (unsigned b = 0; b < 64; b++) {
		if (!pages[b])
			continue;
		printf("%s%s x %llu", sep, human_size(1ull << b, size),
		       (unsigned long long)pages[b]);
		sep = ", ";
	}
}

static void print_group(int group_id, const struct snapshot_domain *d)
{
	printf("group %d: ", group_id);
	if (d->kind != IT_SNAP_TRANSLATED) {
		printf("%s domain\n", d->domain ? snapshot_kind_name(d->kind) : "no");
		return;
	}
	printf("translated domain, %u levels: %llu leaves in %zu runs", d->levels,
	       (unsigned long long)d->leaves, d->nruns);
	if (d->nruns) {
		printf(" (");
		print_pages(d);
		printf(")");
	}
	if (!d->consistent)
		printf("; maps or unmaps ran during each of %u reads: may be inconsistent",
		       d->attempts);
	printf("\n");
}

static bool has_intel_iommu(const struct inventory *inv)
{
	for (size_t i = 0; i < inv->n_iommus; i++)
		if (inv->iommus[i].vendor == IOMMU_VENDOR_INTEL)
			return true;
	return false;
}

static int take(const struct snapshot_opts *o, const struct inventory *inv, const int *groups,
		size_t n)
{
	struct snapshot_reader *r = NULL;
	sqlite3 *db = NULL;
	int64_t sid = -1;
	int ret = IT_EXIT_FAILURE;
	unsigned unreadable = 0;
	char err[512];
	bool intel = has_intel_iommu(inv), existed = !access(o->db_path, F_OK) && o->append;

	r = snapshot_reader_open(intel);
	if (!r)
		return IT_EXIT_BPF;
	db = itdb_open(o->db_path,
		       o->append ? ITDB_APPEND :
		       o->force	 ? ITDB_CREATE_FORCE :
				   ITDB_CREATE,
		       &iommutrace_schema, err, sizeof(err));
	if (!db) {
		log_error("%s", err);
		goto out;
	}
	if (itdb_session_begin(db,
			       &(struct itdb_session_info){ .kind = "snapshot",
							    .capture = "bpf",
							    .trace_clock = "mono" },
			       &sid) ||
	    itdb_exec(db, "BEGIN", "begin the snapshot") || inventory_store(db, sid, inv))
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct snapshot_domain d;

		if (snapshot_reader_read(r, NULL, groups[i], &d))
			goto out;
		print_group(groups[i], &d);
		unreadable += d.kind == IT_SNAP_UNREADABLE;
		if (snapshot_store_group(db, sid, groups[i], &d)) {
			free(d.runs);
			goto out;
		}
		free(d.runs);
	}
	if (unreadable)
		log_warn("%u %s in a format snapshot does not read (%s); stored as unreadable, "
			 "without leaves",
			 unreadable, unreadable == 1 ? "group's domain is" : "groups' domains are",
			 intel ? "a domain of another kind (nested, SVA), or a kernel whose BTF shows "
				 "neither of the VT-d driver's table layouts, or without page_offset_base" :
				 "the walker reads Intel VT-d tables only");
	if (itdb_exec(db, "COMMIT", "commit the snapshot") ||
	    itdb_session_end(db, sid, &(struct itdb_session_end){ .end_reason = "end-of-input" }))
		goto out;
	ret = IT_EXIT_OK;
out:
	/* a failed snapshot leaves nothing: its rows rolled back, its session row (committed at
	 * its start) deleted, and a file it made removed */
	if (ret != IT_EXIT_OK && db) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		if (sid >= 0) {
			sqlite3_stmt *st =
				itdb_prepare(db, "DELETE FROM sessions WHERE session_id = ?1");

			if (st) {
				sqlite3_bind_int64(st, 1, sid);
				itdb_step_done(st, "remove the failed snapshot's session");
				sqlite3_finalize(st);
			}
		}
	}
	if (itdb_close(db))
		ret = IT_EXIT_FAILURE;
	if (ret != IT_EXIT_OK && db && !existed && itdb_remove(o->db_path, err, sizeof(err)))
		log_warn("%s", err);
	snapshot_reader_close(r);
	return ret;
}

int cmd_snapshot(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "append", no_argument, NULL, 'a' },
		{ "device", required_argument, NULL, 'd' },
		{},
	};
	static const struct cli_command cmd = {
		.name = "snapshot",
		.short_opts = "o:fad:",
		.long_opts = long_opts,
		.usage = usage,
		.on_option = on_option,
		.operands = CLI_NO_OPERANDS,
	};
	struct snapshot_opts o = { 0 };
	struct inventory inv;
	char err[512], missing[128];
	int status, *groups = NULL;
	size_t n = 0;

	if (!cli_parse(&cmd, argc, argv, &o, &status))
		return status;
	if (!o.db_path) {
		log_error("snapshot: -o FILE.db is needed: where the snapshot goes");
		return IT_EXIT_USAGE;
	}
	if (o.force && o.append) {
		log_error("--force replaces FILE and --append adds to it: give one");
		return IT_EXIT_USAGE;
	}
	if (!privilege_can_trace_bpf(missing, sizeof(missing))) {
		log_error("iommutrace snapshot needs %s: it loads a BPF program that reads the IOMMU's "
			  "tables; run it as root",
			  missing);
		return IT_EXIT_PRIVILEGE;
	}
	if (o.append ? itdb_check_append(o.db_path, err, sizeof(err)) :
		       itdb_check_create(o.db_path, o.force, NULL, err, sizeof(err))) {
		log_error("%s", err);
		return IT_EXIT_FAILURE;
	}
	if (inventory_read(NULL, &inv))
		return IT_EXIT_FAILURE;
	status = IT_EXIT_FAILURE;
	if (!inv.n_iommus) {
		log_error(
			"snapshot: no IOMMU on this machine (nothing in /sys/class/iommu): nothing "
			"translates, so there is no table to read");
		goto out;
	}
	groups = calloc(inv.n_devices + 1, sizeof(*groups));
	if (!groups) {
		log_error("snapshot: out of memory");
		goto out;
	}
	if (choose_groups(&o, &inv, groups, &n))
		goto out;
	status = take(&o, &inv, groups, n);
out:
	free(groups);
	inventory_free(&inv);
	return status;
}
