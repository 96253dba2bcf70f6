/* `iommutrace map`: binds a device to vfio-pci, maps a buffer into its domain through VFIO type1
 * or iommufd, unmaps, and puts the device back, on every exit path; with --import-as the kernel
 * maps instead (cli/map_import.c). With -o it runs itself under
 * the recorder (tracer/recorder.h), so the database holds exactly this command's mappings, and
 * stores what the mapping process reports (probes/map_report.h) with the session. */
#include <getopt.h>
#include <limits.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/child_report.h"
#include "common/exit_codes.h"
#include "common/human_size.h"
#include "common/leaf.h"
#include "common/log.h"
#include "common/parse.h"
#include "common/privilege.h"
#include "common/stop_signal.h"
#include "probes/buffers.h"
#include "probes/device_setup.h"
#include "probes/map_report.h"
#include "probes/mapper.h"
#include "cli/commands.h"
#include "cli/map_run.h"
#include "cli/options.h"
#include "cli/self_record.h"

/* the --help text, laid out as printed */
/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"usage: iommutrace map --device BDF --buffer KIND --size SIZE [--offset SIZE] [--iova ADDR]\n"
"                      [--mapper type1|iommufd] [--hold] [--repeat N]\n"
"                      [-o FILE.db [--replace | --append]] [--force]\n"
"       iommutrace map --import-as BDF --buffer KIND --size SIZE [--offset SIZE] [--hold]\n"
"                      [--repeat N] [-o FILE.db [--replace | --append]] [--force]\n"
"\n"
"Maps a buffer into the IOMMU domain of a device as user-space drivers do: binds the device to\n"
"vfio-pci, gives it a domain of its own (a VFIO type1 container, or an iommufd IOAS), maps the\n"
"buffer, then unmaps and puts the device back on its original driver (also on errors and\n"
"SIGINT/SIGTERM/SIGHUP). Prints one line: iova, vaddr, size, buffer, for a BAR its start and\n"
"offset, and for host memory how much of it is THP or hugetlb and in how many physically\n"
"contiguous runs (read from /proc/self/pagemap and /proc/kpageflags while mapped).\n"
"\n"
"With --import-as the kernel maps instead, as a kernel driver would, into the DMA domain of the\n"
"device BDF, which stays on its own driver, by iommutrace's probe module (probes/kmod,\n"
"/dev/iommutrace-probe), which must be loaded. A dma-buf (gpu, udmabuf, vgem, dmabuf-bar) is\n"
"made, then attached and mapped as BDF (dma_buf_dynamic_attach with peer-to-peer allowed, then\n"
"dma_buf_map_attachment: the exporter maps it); a bar: window of another device goes through\n"
"dma_map_resource (what a GPU driver's dma-buf exporter does for a peer importer, and BaM's\n"
"path). The DMA API chooses the IOVA. A dma-buf import prints the DMA segments it gave.\n"
"\n"
"  -d, --device BDF      the device whose domain receives the mapping\n"
"  -I, --import-as BDF   map through the kernel's DMA API on behalf of BDF (see above)\n"
"  -b, --buffer KIND     anon (huge pages refused), thp, hugetlb2m, hugetlb1g, memfd, or\n"
"                        bar:BDF/INDEX (a window of that device's BAR through its vfio mmap;\n"
"                        the device is bound to vfio-pci too); with --import-as also the\n"
"                        dma-bufs gpu[:N] (CUDA device N's memory, cuMemAlloc; libcuda.so.1\n"
"                        is loaded at run time), gpu-vmm[:N] (cuMemCreate + cuMemMap),\n"
"                        udmabuf (a memfd), udmabuf:hugetlb2m, udmabuf:hugetlb1g, vgem (a\n"
"                        GEM object), dmabuf-bar:BDF/INDEX (a BAR window vfio-pci exports;\n"
"                        Linux 6.19+, and a P2PDMA path between the two devices)\n"
"  -s, --size SIZE       bytes to map (K/M/G suffixes or hex); a multiple of the buffer's pages\n"
"      --offset SIZE     bar, dmabuf-bar: the window's offset into the BAR (default 0)\n"
"      --iova ADDR       IOVA of the mapping (default 1 GiB, or 4 GiB when the range would reach\n"
"                        0xfee00000: aligned to the largest page the buffer allows)\n"
"  -m, --mapper NAME     type1 (default: VFIO container and groups, every kernel) or iommufd\n"
"                        (/dev/iommu and the device's VFIO cdev; IOMMU_IOAS_MAP, and\n"
"                        IOMMU_IOAS_MAP_FILE for memfd and for bar, exported as a dma-buf)\n"
"      --hold            keep the mapping until SIGINT/SIGTERM/SIGHUP\n"
"      --repeat N        map and unmap N times (default 1); --import-as: import (or map)\n"
"                        and release the one buffer N times\n"
"  -o, --output FILE     record while mapping into a new database (as 'iommutrace record -o\n"
"                        FILE -- iommutrace map ...') and store this run with the session\n"
"                        (map_runs, map_backing, map_expected_pages, map_dma_segments); the\n"
"                        exit status is the mapping's\n"
"      --replace         with -o: replace an existing FILE\n"
"      --append          with -o: add this run's session to FILE when it exists (several\n"
"                        runs in one database, which report compares)\n"
"  -f, --force           take a device (or a BAR's device) whose block devices are mounted,\n"
"                        swap or held (dm, md, LVM); warns per use, naming the user, on\n"
"                        stderr and in the kernel log\n"
"  -v, --verbose         debug messages\n"
"  -h, --help            this text\n"
"\n"
"Needs CAP_SYS_ADMIN, CAP_DAC_OVERRIDE and CAP_IPC_LOCK (with --import-as the first two):\n"
"root. exit status: 0 ok, 1 failure, 2 bad usage, 3 BPF load/attach failed (-o),\n"
"4 missing privilege\n");
}
/* clang-format on */

/* What --import-as takes: a dma-buf, or a BAR window (dma_map_resource); the DMA API's IOVA. */
static int check_import(const struct map_opts *o)
{
	if (!buffer_is_dmabuf(o->buffer.kind) && o->buffer.kind != BUF_BAR) {
		log_error("--import-as takes a dma-buf (gpu, udmabuf, vgem, dmabuf-bar:) or a bar: "
			  "window; %s memory is mapped for a device with --device",
			  buffer_kind_name(o->buffer.kind));
		return -1;
	}
	if (o->iova_arg || o->mapper_arg) {
		log_error("--import-as: the kernel's DMA API chooses the IOVA and maps; --iova and "
			  "--mapper are for --device");
		return -1;
	}
	if ((o->buffer.kind == BUF_BAR || o->buffer.kind == BUF_DMABUF_BAR) &&
	    !strcmp(o->buffer.bar_bdf, o->device)) {
		log_error("--import-as %s with its own BAR: a device's DMA to itself does not go "
			  "through the IOMMU; name another device's BAR",
			  o->device);
		return -1;
	}
	return 0;
}

/* The command line as given, before it is checked. */
struct map_args {
	struct map_opts *o;
	const char *device, *importer;
};

static int on_option(void *ctx, int opt, const char *arg)
{
	struct map_args *m = ctx;
	struct map_opts *o = m->o;

	switch (opt) {
	case 'd':
		m->device = arg;
		break;
	case 'I':
		m->importer = arg;
		break;
	case 'b':
		o->buffer_arg = arg;
		break;
	case 's':
		o->size_arg = arg;
		break;
	case 'O':
		o->offset_arg = arg;
		break;
	case 'i':
		o->iova_arg = arg;
		break;
	case 'H':
		o->hold = true;
		break;
	case 'r':
		o->repeat_arg = arg;
		break;
	case 'm':
		o->mapper_arg = arg;
		break;
	case 'o':
		o->db_path = arg;
		break;
	case 'f':
		o->force = true;
		break;
	case 'R':
		o->replace = true;
		break;
	case 'A':
		o->append = true;
		break;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct map_opts *o)
{
	static const struct option long_opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "import-as", required_argument, NULL, 'I' },
		{ "buffer", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 's' },
		{ "offset", required_argument, NULL, 'O' },
		{ "iova", required_argument, NULL, 'i' },
		{ "hold", no_argument, NULL, 'H' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "mapper", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "replace", no_argument, NULL, 'R' },
		{ "append", no_argument, NULL, 'A' },
		{},
	};
	static const struct cli_command cmd = {
		.name = "map",
		.short_opts = "d:I:b:s:m:o:f",
		.long_opts = long_opts,
		.usage = usage,
		.on_option = on_option,
		.operands = CLI_NO_OPERANDS,
	};
	struct map_args m = { .o = o };
	const char *device, *importer;
	int status;

	o->repeat = 1;
	if (!cli_parse(&cmd, argc, argv, &m, &status))
		return status == IT_EXIT_OK ? 1 : -1;
	device = m.device;
	importer = m.importer;
	if (device && importer) {
		log_error("--device and --import-as name the same thing, the device whose domain "
			  "receives the mapping: give one");
		return -1;
	}
	o->import = importer != NULL;
	if (importer)
		device = importer;
	if (!device || !o->buffer_arg || !o->size_arg) {
		log_error(
			"map needs --device (or --import-as), --buffer and --size; see 'iommutrace "
			"map --help'");
		return -1;
	}
	if (self_record_check_options(o->db_path, o->replace, o->append))
		return -1;
	if (parse_bdf(device, o->device)) {
		log_error("bad PCI address '%s': give DDDD:BB:DD.F, e.g. 0000:00:05.0", device);
		return -1;
	}
	if (buffer_parse(o->buffer_arg, &o->buffer)) {
		log_error("bad buffer '%s': give anon, thp, hugetlb2m, hugetlb1g, memfd, "
			  "bar:BDF/INDEX (INDEX 0-5), or with --import-as gpu[:N], gpu-vmm[:N], "
			  "udmabuf[:hugetlb2m|:hugetlb1g], vgem, dmabuf-bar:BDF/INDEX",
			  o->buffer_arg);
		return -1;
	}
	if (o->mapper_arg && mapper_parse(o->mapper_arg, &o->mapper)) {
		log_error("bad mapper '%s': give type1 or iommufd", o->mapper_arg);
		return -1;
	}
	if (!o->import && buffer_is_dmabuf(o->buffer.kind)) {
		log_error("a %s buffer is a dma-buf, which the kernel imports on behalf of a device: "
			  "give --import-as BDF instead of --device%s",
			  buffer_kind_name(o->buffer.kind),
			  o->buffer.kind == BUF_DMABUF_BAR ?
				  " (or map the same window with --buffer "
				  "bar:BDF/INDEX --mapper iommufd, which imports it as a dma-buf)" :
				  "");
		return -1;
	}
	return o->import ? check_import(o) : 0;
}

/* Sizes, offset, IOVA and repeat count, checked before anything is bound. */
static int check_numbers(struct map_opts *o)
{
	uint64_t granule = buffer_granule(&o->buffer);
	bool bar = o->buffer.kind == BUF_BAR || o->buffer.kind == BUF_DMABUF_BAR;
	char g[HUMAN_SIZE_LEN];

	if (parse_size(o->size_arg, &o->size) || !o->size) {
		log_error("bad size '%s': give bytes with K/M/G suffixes or hex, e.g. 1G",
			  o->size_arg);
		return -1;
	}
	if (o->size % granule) {
		log_error("size %s is not a multiple of the %s buffer's %s pages", o->size_arg,
			  buffer_kind_name(o->buffer.kind), human_size(granule, g));
		return -1;
	}
	if (o->offset_arg &&
	    (!bar || parse_size(o->offset_arg, &o->offset) || o->offset % LEAF_4K)) {
		log_error("bad offset '%s': only for bar and dmabuf-bar buffers, a multiple of 4 KiB",
			  o->offset_arg);
		return -1;
	}
	if (o->iova_arg && (parse_u64(o->iova_arg, &o->iova) || o->iova % LEAF_4K)) {
		log_error("bad IOVA '%s': give a multiple of 4 KiB, e.g. 0x40000000", o->iova_arg);
		return -1;
	}
	o->iova_given = o->iova_arg != NULL;
	if (o->repeat_arg && (parse_u64(o->repeat_arg, &o->repeat) || !o->repeat)) {
		log_error("bad repeat count '%s': give a number >= 1", o->repeat_arg);
		return -1;
	}
	return 0;
}

/* -o, in the recorder: the mapping process's report, stored with the session. */
static int store_report(sqlite3 *db, int64_t session_id, int report_fd)
{
	struct map_report r;
	int rc = map_report_read(report_fd, &r);

	if (rc > 0) {
		log_warn("the map command reported nothing (it ended before it began); the session "
			 "has no map_runs row");
		return 0;
	}
	if (rc == 0)
		rc = map_report_store(db, session_id, &r);
	map_report_free(&r);
	return rc;
}

/* While the first mapping holds the buffer pinned (pinning may migrate pages): where it is in
 * physical memory, and what the mapper says the domain's page sizes are. */
static int measure(struct run_report *rep, struct mapper *m, const struct buffer *b)
{
	struct map_report *r = &rep->r;

	r->vaddr = (uintptr_t)b->vaddr;
	r->mapper_pgsize_bitmap = mapper_pgsizes(m);
	if (b->spec.kind == BUF_BAR)
		r->bar_start = b->bar_start;
	return map_report_measure(r, b->vaddr, b->size,
				  b->spec.kind == BUF_BAR ? b->bar_start + b->bar_offset : 0);
}

static void print_mapping(const struct map_opts *o, const struct buffer *b,
			  const struct map_report *r)
{
	char s[HUMAN_SIZE_LEN];

	printf("mapped iova=%#llx vaddr=%p size=%#llx (%s) device=%s buffer=%s mapper=%s",
	       (unsigned long long)o->iova, b->vaddr, (unsigned long long)b->size,
	       human_size(b->size, s), o->device, o->buffer_arg, mapper_name(o->mapper));
	if (b->spec.kind == BUF_BAR)
		printf(" bar_start=%#llx bar_offset=%#llx paddr=%#llx",
		       (unsigned long long)b->bar_start, (unsigned long long)b->bar_offset,
		       (unsigned long long)(b->bar_start + b->bar_offset));
	else
		printf(" thp=%#llx hugetlb=%#llx phys_runs=%llu", (unsigned long long)r->thp_bytes,
		       (unsigned long long)r->hugetlb_bytes, (unsigned long long)r->nruns);
	printf(" align=%#llx\n", (unsigned long long)b->align);
	fflush(stdout);
}

/* Map, (hold,) unmap, repeat times; stops early on a signal. */
static int map_loop(const struct map_opts *o, struct mapper *m, struct buffer *b,
		    struct run_report *rep)
{
	for (uint64_t i = 0; i < o->repeat && !stop_signal; i++) {
		if (mapper_map(m, b, o->iova))
			return -1;
		rep->r.maps_done++;
		if (i == 0) {
			if (measure(rep, m, b)) {
				mapper_unmap(m, o->iova, b->size);
				return -1;
			}
			print_mapping(o, b, &rep->r);
		}
		if (o->hold)
			wait_for_stop_signal();
		if (mapper_unmap(m, o->iova, b->size))
			return -1;
	}
	return 0;
}

static int run_map(struct map_opts *o, int report_fd)
{
	struct device_setup s = DEVICE_SETUP_INIT;
	struct device_setup_opts so = { .bdf = o->device,
					.mapper = o->mapper,
					.buffer = o->buffer,
					.size = o->size,
					.offset = o->offset,
					.force = o->force,
					.stop = &stop_signal };
	struct run_report rep;
	int ret = IT_EXIT_FAILURE;

	stop_on_signals();
	if (!o->iova_given)
		o->iova = mapper_default_iova(o->size);
	map_report_init(&rep, o, mapper_name(o->mapper), report_fd);
	if (map_report_update(&rep) || device_setup_open(&s, &so))
		goto cleanup;
	/* with --hold a signal is how the run ends; otherwise it cut the run short */
	if (!stop_signal && !map_loop(o, &s.mapper, &s.buffer, &rep) && (!stop_signal || o->hold))
		ret = IT_EXIT_OK;
cleanup:
	if (map_report_update(&rep))
		ret = IT_EXIT_FAILURE;
	map_report_free(&rep.r);
	if (device_setup_close(&s))
		ret = IT_EXIT_FAILURE;
	if (stop_signal)
		log_info("stopped by signal %d; devices restored", (int)stop_signal);
	return ret;
}

int cmd_map(int argc, char **argv)
{
	struct map_opts o = { 0 };
	int report_fd = child_report_take(), rc = parse_args(argc, argv, &o);

	if (rc)
		return rc > 0 ? IT_EXIT_OK : IT_EXIT_USAGE;
	if (check_numbers(&o))
		return IT_EXIT_USAGE;
	if (o.import ?
		    privilege_require("map --import-as", PRIV_SYS_ADMIN | PRIV_DAC_OVERRIDE,
				      "it loads the probe module, opens root's device nodes and "
				      "reads physical addresses") :
		    privilege_require("map", PRIV_SYS_ADMIN | PRIV_DAC_OVERRIDE | PRIV_IPC_LOCK,
				      "it rebinds the device in sysfs, reads the buffer's physical addresses "
				      "and pins it for DMA"))
		return IT_EXIT_PRIVILEGE;
	/* before any device leaves its driver */
	if (!o.import && mapper_available(o.mapper))
		return IT_EXIT_FAILURE;
	if (o.db_path && report_fd < 0)
		return self_record_run(argc, argv,
				       &(struct self_record){ .db_path = o.db_path,
							      .replace = o.replace,
							      .append = o.append,
							      .store = store_report });
	return o.import ? map_import_run(&o, report_fd) : run_map(&o, report_fd);
}
