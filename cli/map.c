/* `iommutrace map`: binds a device to vfio-pci, maps a buffer into its domain through VFIO type1
 * or iommufd, unmaps, and puts the device back, on every exit path. With -o it runs itself under
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
#include "probes/backing.h"
#include "probes/buffers.h"
#include "probes/device_setup.h"
#include "probes/map_report.h"
#include "probes/mapper.h"
#include "probes/probe_module.h"
#include "commands.h"
#include "options.h"
#include "self_record.h"
#include "stop_signal.h"

struct map_opts {
	char device[13];
	bool import;			/* --import-as: device is the importer, the kernel maps */
	const char *buffer_arg, *size_arg, *offset_arg, *iova_arg, *repeat_arg, *mapper_arg;
	struct buffer_spec buffer;
	enum mapper_kind mapper;
	uint64_t size, offset, iova, repeat;
	bool iova_given, hold, force, replace;
	const char *db_path;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: iommutrace map --device BDF --buffer KIND --size SIZE [--offset SIZE] [--iova ADDR]\n"
"                      [--mapper type1|iommufd] [--hold] [--repeat N] [-o FILE.db [--replace]]\n"
"                      [--force]\n"
"       iommutrace map --import-as BDF --buffer bar:BDF/INDEX --size SIZE [--offset SIZE]\n"
"                      [--hold] [-o FILE.db [--replace]]\n"
"\n"
"Maps a buffer into the IOMMU domain of a device as user-space drivers do: binds the device to\n"
"vfio-pci, gives it a domain of its own (a VFIO type1 container, or an iommufd IOAS), maps the\n"
"buffer, then unmaps and puts the device back on its original driver (also on errors and\n"
"SIGINT/SIGTERM/SIGHUP). Prints one line: iova, vaddr, size, buffer, for a BAR its start and\n"
"offset, and for host memory how much of it is THP or hugetlb and in how many physically\n"
"contiguous runs (read from /proc/self/pagemap and /proc/kpageflags while mapped).\n"
"\n"
"With --import-as the kernel maps instead, as a kernel driver would, into the DMA domain of the\n"
"device BDF, which stays on its own driver: a BAR window of another device goes through\n"
"dma_map_resource (what a GPU driver's dma-buf exporter does for a peer importer, and BaM's\n"
"path), by iommutrace's probe module (probes/kmod, /dev/iommutrace-probe), which must be loaded.\n"
"The DMA API chooses the IOVA. One mapping per run.\n"
"\n"
"  -d, --device BDF      the device whose domain receives the mapping\n"
"  -I, --import-as BDF   map through the kernel's DMA API on behalf of BDF (see above)\n"
"  -b, --buffer KIND     anon (huge pages refused), thp, hugetlb2m, hugetlb1g, memfd, or\n"
"                        bar:BDF/INDEX (a window of that device's BAR through its vfio mmap;\n"
"                        the device is bound to vfio-pci too)\n"
"  -s, --size SIZE       bytes to map (K/M/G suffixes or hex); a multiple of the buffer's pages\n"
"      --offset SIZE     bar: the window's offset into the BAR (default 0)\n"
"      --iova ADDR       IOVA of the mapping (default 1 GiB, or 4 GiB when the range would reach\n"
"                        0xfee00000: aligned to the largest page the buffer allows)\n"
"  -m, --mapper NAME     type1 (default: VFIO container and groups, every kernel) or iommufd\n"
"                        (/dev/iommu and the device's VFIO cdev; IOMMU_IOAS_MAP, and\n"
"                        IOMMU_IOAS_MAP_FILE for memfd and for bar, exported as a dma-buf)\n"
"      --hold            keep the mapping until SIGINT/SIGTERM/SIGHUP\n"
"      --repeat N        map and unmap N times (default 1)\n"
"  -o, --output FILE     record while mapping into a new database (as 'iommutrace record -o\n"
"                        FILE -- iommutrace map ...') and store this run with the session\n"
"                        (map_runs, map_backing, map_expected_pages); the exit status is the\n"
"                        mapping's\n"
"      --replace         with -o: replace an existing FILE\n"
"  -f, --force           take a device whose block devices are mounted or held\n"
"  -v, --verbose         debug messages\n"
"  -h, --help            this text\n"
"\n"
"Needs root (sysfs binding, VFIO). exit status: 0 ok, 1 failure, 2 bad usage,\n"
"3 BPF load/attach failed (-o), 4 missing privilege (-o)\n");
}

/* What --import-as takes: a BAR window, the DMA API's own IOVA, one mapping. */
static int check_import(const struct map_opts *o)
{
	if (o->buffer.kind != BUF_BAR) {
		log_error("--import-as maps bar: windows (dma_map_resource); importing dma-bufs "
			  "(gpu, udmabuf, vgem) is not built yet");
		return -1;
	}
	if (o->iova_arg || o->mapper_arg || o->repeat_arg) {
		log_error("--import-as: the kernel's DMA API chooses the IOVA and maps once; --iova, "
			  "--mapper and --repeat are for --device");
		return -1;
	}
	if (!strcmp(o->buffer.bar_bdf, o->device)) {
		log_error("--import-as %s with its own BAR: a device's DMA to itself does not go "
			  "through the IOMMU; name another device's BAR", o->device);
		return -1;
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
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *device = NULL, *importer = NULL;
	int opt;

	o->repeat = 1;
	while ((opt = cli_getopt(argc, argv, "d:I:b:s:m:o:fvh", long_opts, "map")) != -1) {
		switch (opt) {
		case 'd': device = optarg; break;
		case 'I': importer = optarg; break;
		case 'b': o->buffer_arg = optarg; break;
		case 's': o->size_arg = optarg; break;
		case 'O': o->offset_arg = optarg; break;
		case 'i': o->iova_arg = optarg; break;
		case 'H': o->hold = true; break;
		case 'r': o->repeat_arg = optarg; break;
		case 'm': o->mapper_arg = optarg; break;
		case 'o': o->db_path = optarg; break;
		case 'f': o->force = true; break;
		case 'R': o->replace = true; break;
		case 'v': log_verbose++; break;
		case 'h': usage(stdout); return 1;
		default: return -1;
		}
	}
	if (optind < argc) {
		log_error("unexpected argument '%s'; see 'iommutrace map --help'", argv[optind]);
		return -1;
	}
	if (device && importer) {
		log_error("--device and --import-as name the same thing, the device whose domain "
			  "receives the mapping: give one");
		return -1;
	}
	o->import = importer != NULL;
	if (importer)
		device = importer;
	if (!device || !o->buffer_arg || !o->size_arg) {
		log_error("map needs --device (or --import-as), --buffer and --size; see 'iommutrace "
			  "map --help'");
		return -1;
	}
	if (o->replace && !o->db_path) {
		log_error("--replace replaces the -o database; give -o FILE");
		return -1;
	}
	if (parse_bdf(device, o->device)) {
		log_error("bad PCI address '%s': give DDDD:BB:DD.F, e.g. 0000:00:05.0", device);
		return -1;
	}
	if (buffer_parse(o->buffer_arg, &o->buffer)) {
		log_error("bad buffer '%s': give anon, thp, hugetlb2m, hugetlb1g, memfd or "
			  "bar:BDF/INDEX (INDEX 0-5)", o->buffer_arg);
		return -1;
	}
	if (o->mapper_arg && mapper_parse(o->mapper_arg, &o->mapper)) {
		log_error("bad mapper '%s': give type1 or iommufd", o->mapper_arg);
		return -1;
	}
	return o->import ? check_import(o) : 0;
}

/* Sizes, offset, IOVA and repeat count, checked before anything is bound. */
static int check_numbers(struct map_opts *o)
{
	uint64_t granule = buffer_granule(o->buffer.kind);
	char g[HUMAN_SIZE_LEN];

	if (parse_size(o->size_arg, &o->size) || !o->size) {
		log_error("bad size '%s': give bytes with K/M/G suffixes or hex, e.g. 1G", o->size_arg);
		return -1;
	}
	if (o->size % granule) {
		log_error("size %s is not a multiple of the %s buffer's %s pages", o->size_arg,
			  buffer_kind_name(o->buffer.kind), human_size(granule, g));
		return -1;
	}
	if (o->offset_arg && (o->buffer.kind != BUF_BAR || parse_size(o->offset_arg, &o->offset) ||
			      o->offset % LEAF_4K)) {
		log_error("bad offset '%s': only for bar buffers, a multiple of 4 KiB", o->offset_arg);
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

/* This run's report, written to fd when it runs under map -o's recorder. */
struct run_report {
	int fd;			/* -1: nobody asked */
	struct map_report r;
};

static void report_init(struct run_report *rep, const struct map_opts *o, int report_fd)
{
	struct map_report *r = &rep->r;

	memset(rep, 0, sizeof(*rep));
	rep->fd = report_fd;
	snprintf(r->mapper, sizeof(r->mapper), "%s",
		 o->import ? "dma_map_resource" : mapper_name(o->mapper));
	snprintf(r->device, sizeof(r->device), "%s", o->device);
	snprintf(r->buffer, sizeof(r->buffer), "%s", o->buffer_arg);
	snprintf(r->buffer_kind, sizeof(r->buffer_kind), "%s", buffer_kind_name(o->buffer.kind));
	if (o->buffer.kind == BUF_BAR) {
		snprintf(r->bar_device, sizeof(r->bar_device), "%s", o->buffer.bar_bdf);
		r->bar_index = (int32_t)o->buffer.bar_index;
		r->bar_offset = o->offset;
	}
	r->size = o->size;
	r->iova = o->iova;
	r->iova_given = o->iova_given;
	r->hold = o->hold;
	r->repeat = o->repeat;
}

static int report_write(struct run_report *rep)
{
	return rep->fd < 0 ? 0 : map_report_write(rep->fd, &rep->r);
}

/* While the first mapping holds the buffer pinned (pinning may migrate pages): where it is in
 * physical memory, and what the mapper says the domain's page sizes are. */
static int measure(struct run_report *rep, struct mapper *m, const struct buffer *b)
{
	struct map_report *r = &rep->r;
	struct backing back;

	r->vaddr = (uintptr_t)b->vaddr;
	r->mapper_pgsize_bitmap = mapper_pgsizes(m);
	if (b->spec.kind == BUF_BAR) {
		r->bar_start = b->bar_start;
		back.runs = calloc(1, sizeof(*back.runs));
		if (!back.runs) {
			log_error("out of memory");
			return -1;
		}
		back.runs[0] = (struct backing_run){ .paddr = b->bar_start + b->bar_offset,
						     .size = b->size };
		back.nruns = 1;
		back.thp_bytes = back.hugetlb_bytes = 0;
	} else if (backing_read(b->vaddr, b->size, &back)) {
		return -1;
	}
	free(r->runs);
	r->runs = back.runs;
	r->nruns = back.nruns;
	r->thp_bytes = back.thp_bytes;
	r->hugetlb_bytes = back.hugetlb_bytes;
	return 0;
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
		printf(" thp=%#llx hugetlb=%#llx phys_runs=%llu",
		       (unsigned long long)r->thp_bytes, (unsigned long long)r->hugetlb_bytes,
		       (unsigned long long)r->nruns);
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
	struct device_setup_opts so = { .bdf = o->device, .mapper = o->mapper, .buffer = o->buffer,
					.size = o->size, .offset = o->offset, .force = o->force,
					.stop = &stop_signal };
	struct run_report rep;
	int ret = IT_EXIT_FAILURE;

	stop_on_signals();
	if (!o->iova_given)
		o->iova = mapper_default_iova(o->size);
	report_init(&rep, o, report_fd);
	if (report_write(&rep) || device_setup_open(&s, &so))
		goto cleanup;
	/* with --hold a signal is how the run ends; otherwise it cut the run short */
	if (!stop_signal && !map_loop(o, &s.mapper, &s.buffer, &rep) && (!stop_signal || o->hold))
		ret = IT_EXIT_OK;
cleanup:
	if (report_write(&rep))
		ret = IT_EXIT_FAILURE;
	map_report_free(&rep.r);
	if (device_setup_close(&s))
		ret = IT_EXIT_FAILURE;
	if (stop_signal)
		log_info("stopped by signal %d; devices restored", (int)stop_signal);
	return ret;
}

/* --import-as: the probe module maps the BAR window for the device with dma_map_resource; the
 * IOVA is the DMA API's. The report's one physical run is the window itself. */
static int run_import(struct map_opts *o, int report_fd)
{
	struct probe_module pm = PROBE_MODULE_INIT;
	struct run_report rep;
	uint64_t phys = 0, dma = 0;
	uint32_t handle = 0;
	bool mapped = false;
	char s[HUMAN_SIZE_LEN];
	int ret = IT_EXIT_FAILURE;

	stop_on_signals();
	report_init(&rep, o, report_fd);
	rep.r.iova = 0;
	if (report_write(&rep) || probe_module_open(&pm) ||
	    probe_module_map_resource(&pm, o->device, o->buffer.bar_bdf, o->buffer.bar_index,
				      o->offset, o->size, &phys, &dma, &handle))
		goto cleanup;
	mapped = true;
	rep.r.maps_done = 1;
	rep.r.iova = dma;
	rep.r.bar_start = phys - o->offset;
	rep.r.runs = calloc(1, sizeof(*rep.r.runs));
	if (!rep.r.runs) {
		log_error("out of memory");
		goto cleanup;
	}
	rep.r.runs[0] = (struct backing_run){ .paddr = phys, .size = o->size };
	rep.r.nruns = 1;
	printf("mapped iova=%#llx size=%#llx (%s) for device=%s by dma_map_resource buffer=%s "
	       "bar_start=%#llx bar_offset=%#llx paddr=%#llx\n", (unsigned long long)dma,
	       (unsigned long long)o->size, human_size(o->size, s), o->device, o->buffer_arg,
	       (unsigned long long)rep.r.bar_start, (unsigned long long)o->offset,
	       (unsigned long long)phys);
	fflush(stdout);
	if (o->hold)
		wait_for_stop_signal();
	if (!stop_signal || o->hold)
		ret = IT_EXIT_OK;
cleanup:
	if (mapped && probe_module_release(&pm, handle))
		ret = IT_EXIT_FAILURE;
	probe_module_close(&pm);
	if (report_write(&rep))
		ret = IT_EXIT_FAILURE;
	map_report_free(&rep.r);
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
	/* before any device leaves its driver */
	if (!o.import && mapper_available(o.mapper))
		return IT_EXIT_FAILURE;
	if (o.db_path && report_fd < 0)
		return self_record_run(argc, argv, &(struct self_record){
			.db_path = o.db_path, .replace = o.replace, .store = store_report });
	return o.import ? run_import(&o, report_fd) : run_map(&o, report_fd);
}
