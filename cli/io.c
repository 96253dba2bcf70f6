/* `iommutrace io`: reads from (or, with --allow-write, writes the testbed pattern to) an NVMe
 * namespace on one or more devices through an I/O engine (io/engine.h), each device in its own
 * pinned worker thread, into a buffer of any kind `map` takes, for each queue depth of a sweep and
 * each repeat, and reports IOPS, bandwidth and latency percentiles per point, then the means per
 * queue depth. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/exit_codes.h"
#include "common/human_size.h"
#include "common/leaf.h"
#include "common/log.h"
#include "common/parse.h"
#include "common/privilege.h"
#include "common/stop_signal.h"
#include "common/sysfs_file.h"
#include "common/child_report.h"
#include "io/device_cpu.h"
#include "io/engine.h"
#include "io/io_report.h"
#include "io/io_workers.h"
#include "io/nvme_io.h"
#include "cli/commands.h"
#include "cli/io_output.h"
#include "cli/options.h"
#include "cli/self_record.h"

#define MAX_QDS 16
#define MAX_BS (2u << 20) /* a PRP list of one page per command */
#define NVME_PCI_CLASS 0x010802 /* mass storage, non-volatile memory, NVM Express */

struct io_opts {
	char devices[IO_MAX_DEVICES][13];
	uint32_t ndevices;
	const struct io_engine_ops *engine;
	enum mapper_kind mapper;
	struct buffer_spec buffer;
	const char *buffer_arg;
	enum io_workload workload;
	uint64_t bs, size, offset, window, iova, duration_ns, repeat, nsid, seed;
	uint32_t qds[MAX_QDS], nqds, max_qd;
	bool verify, json, force, replace, append, allow_write, nsid_given;
	const char *db_path;
	int report_fd; /* -1 unless io -o's recorder runs this */
	const char *sysfs_root; /* where the devices are found (as for sysfs_path): NULL,
					 * the live system; tests point it at a fixture tree */
};

/* the --help text, laid out as printed */
/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"usage: iommutrace io --device BDF [--device BDF...] [--engine vfio|uring|uio] [--nsid N]\n"
"                     [--workload randread|seqread|randwrite|seqwrite] [--allow-write]\n"
"                     [--bs SIZE] [--qd LIST] [--time SECONDS] [--repeat N]\n"
"                     [--buffer KIND] [--size SIZE] [--offset SIZE] [--window SIZE]\n"
"                     [--iova ADDR] [--mapper type1|iommufd] [--verify] [--json]\n"
"                     [-o FILE.db [--replace | --append]] [--force]\n"
"\n"
"Reads from an NVMe namespace into a buffer and measures IOPS, bandwidth and latency, for each\n"
"queue depth of --qd and each repeat. Several --device run each point at the same time, one\n"
"worker thread per device, pinned to a CPU of the device's NUMA node, each with its own buffer.\n"
"The vfio engine binds the device to vfio-pci, drives it with a user-space NVMe driver (admin\n"
"queue, Identify, one I/O queue pair, PRP lists, completions polled without interrupts) and puts\n"
"it back on its driver afterwards, also on errors and SIGINT/SIGTERM/SIGHUP. The uring engine\n"
"reads through the kernel's nvme driver (io_uring, O_DIRECT, one registered buffer), which maps\n"
"and unmaps every read in the IOMMU. The uio engine is the IOMMU-off case: the user-space driver\n"
"over uio_pci_generic, given physical addresses of a hugetlb buffer. Nothing is written unless\n"
"a write workload is named together with --allow-write and an explicit --nsid.\n"
"\n"
"  -d, --device BDF      an NVMe controller; repeat for several (up to %d)\n"
"  -e, --engine NAME     vfio (default): the user-space driver over VFIO; uring: the kernel\n"
"                        driver through io_uring on the namespace's block device; uio: the\n"
"                        user-space driver over uio_pci_generic, IOMMU off or passthrough,\n"
"                        hugetlb buffers only\n"
"  -n, --nsid N          namespace (default 1)\n"
"  -w, --workload NAME   randread (default: bs-aligned offsets, uniform over the namespace),\n"
"                        seqread (from block 0 on, wrapping), or randwrite and seqwrite, which\n"
"                        overwrite the namespace with the testbed's pattern (each 512-byte\n"
"                        sector stamped with its number, as tests/vm/lib/disk.sh writes it)\n"
"      --allow-write     let a write workload write; it also needs --nsid given explicitly\n"
"      --bs SIZE         bytes per command (default 4K), a multiple of the block size, <= 2M\n"
"      --qd LIST         queue depths, e.g. 1,2,4,8,16,32 (default 1; each <= %u and what\n"
"                        the device takes: below the controller's queue size, MQES, for vfio\n"
"                        and uio; the io_uring's completion entries for uring)\n"
"  -t, --time SECONDS    per point (default 5; 250ms, 2s, 1m accepted)\n"
"      --repeat N        times each point runs (default 1); the table shows means\n"
"  -b, --buffer KIND     where the data lands: anon (default), thp, hugetlb2m, hugetlb1g, memfd,\n"
"                        or bar:BDF/INDEX (a window of another device's BAR: the GPU-memory\n"
"                        case; several --device share it, each reading into its own --size\n"
"                        part at --offset + i x --size: vfio engine, type1 mapper)\n"
"  -s, --size SIZE       of each device's buffer (default: bs x the deepest qd, rounded up to\n"
"                        2 MiB, or to the buffer's page size when larger)\n"
"      --offset SIZE     bar: the window's offset into the BAR (default 0)\n"
"      --window SIZE     bytes of the buffer the commands' data addresses cycle through (default:\n"
"                        all of it): with 4 KiB IOMMU pages an IOTLB of 64 entries covers 256 KiB\n"
"      --iova ADDR       IOVA of the buffer (default 1 GiB, or 4 GiB for large buffers)\n"
"  -m, --mapper NAME     type1 (default) or iommufd, as for map (vfio engine)\n"
"      --verify          check every read against the testbed disk's pattern (tests/vm)\n"
"      --json            results as JSON on stdout (progress lines on stderr)\n"
"  -o, --output FILE     record while running into a new database (as 'iommutrace record -o\n"
"                        FILE -- iommutrace io ...') and store the run with the session\n"
"                        (io_runs, io_devices, io_points, io_latency_buckets, io_summary_view,\n"
"                        io_total_view), so each point's throughput joins the mappings made\n"
"                        during it\n"
"      --replace         with -o: replace an existing FILE\n"
"      --append          with -o: add this run's session to FILE when it exists (several\n"
"                        runs in one database, which report compares)\n"
"  -f, --force           take a device whose block devices are mounted, swap or held (dm,\n"
"                        md, LVM); warns per use, naming the user, on stderr and in the\n"
"                        kernel log\n"
"  -v, --verbose         debug messages\n"
"  -h, --help            this text\n"
"\n"
"The vfio and uio engines need CAP_SYS_ADMIN, CAP_DAC_OVERRIDE and CAP_IPC_LOCK (root); uring\n"
"needs access to the namespace's block device. exit status: 0 ok, 1 failure (also: a command\n"
"failed or read data that --verify found wrong), 2 bad usage, 4 missing privilege\n",
IO_MAX_DEVICES, NVME_IO_MAX_QD);
}
/* clang-format on */

static int parse_qds(const char *s, struct io_opts *o)
{
	char buf[256], *save = NULL, *tok;
	uint64_t qd;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	o->nqds = 0;
	o->max_qd = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nqds == MAX_QDS || parse_u64(tok, &qd) || qd < 1 || qd > NVME_IO_MAX_QD)
			return -1;
		o->qds[o->nqds++] = (uint32_t)qd;
		if (qd > o->max_qd)
			o->max_qd = (uint32_t)qd;
	}
	return o->nqds ? 0 : -1;
}

/* --device, once more: a new, valid BDF. */
static int add_device(struct io_opts *o, const char *arg)
{
	char bdf[13];

	if (parse_bdf(arg, bdf)) {
		log_error("bad PCI address '%s': give DDDD:BB:DD.F, e.g. 0000:00:04.0", arg);
		return -1;
	}
	for (uint32_t i = 0; i < o->ndevices; i++)
		if (!strcmp(o->devices[i], bdf)) {
			log_error("--device %s is given twice", bdf);
			return -1;
		}
	if (o->ndevices == IO_MAX_DEVICES) {
		log_error("more than %d --device: io drives at most %d at once", IO_MAX_DEVICES,
			  IO_MAX_DEVICES);
		return -1;
	}
	memcpy(o->devices[o->ndevices++], bdf, sizeof(bdf));
	return 0;
}

/* Option values, each checked alone; check_sizes checks them together. */
/* The command line as given; sizes are checked once the buffer is known. */
struct io_args {
	struct io_opts *o;
	const char *size_arg, *window_arg;
};

static int on_option(void *ctx, int opt, const char *arg)
{
	struct io_args *a = ctx;
	struct io_opts *o = a->o;
	const char *bad = NULL;

	switch (opt) {
	case 'd':
		return add_device(o, arg);
	case 'e':
		if (!(o->engine = io_engine_find(arg)))
			bad = "engine";
		break;
	case 'n':
		if (parse_u64(arg, &o->nsid) || !o->nsid || o->nsid > UINT32_MAX)
			bad = "nsid";
		o->nsid_given = true;
		break;
	case 'w':
		if (io_workload_parse(arg, &o->workload))
			bad = "workload";
		break;
	case 'A':
		o->allow_write = true;
		break;
	case 'B':
		if (parse_size(arg, &o->bs))
			bad = "bs";
		break;
	case 'Q':
		if (parse_qds(arg, o))
			bad = "qd";
		break;
	case 't':
		if (parse_duration_ns(arg, &o->duration_ns))
			bad = "time";
		break;
	case 'r':
		if (parse_u64(arg, &o->repeat) || !o->repeat || o->repeat > 1000)
			bad = "repeat";
		break;
	case 'b':
		o->buffer_arg = arg;
		if (buffer_parse(arg, &o->buffer))
			bad = "buffer";
		break;
	case 's':
		a->size_arg = arg;
		break;
	case 'O':
		if (parse_size(arg, &o->offset))
			bad = "offset";
		break;
	case 'W':
		a->window_arg = arg;
		break;
	case 'i':
		if (parse_u64(arg, &o->iova) || o->iova % LEAF_4K)
			bad = "iova";
		break;
	case 'm':
		if (mapper_parse(arg, &o->mapper))
			bad = "mapper";
		break;
	case 'V':
		o->verify = true;
		break;
	case 'j':
		o->json = true;
		break;
	case 'f':
		o->force = true;
		break;
	case 'o':
		o->db_path = arg;
		break;
	case 'R':
		o->replace = true;
		break;
	case 'P':
		o->append = true;
		break;
	}
	if (bad) {
		log_error("bad --%s '%s'; see 'iommutrace io --help'", bad, arg);
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct io_opts *o, const char **size_arg,
		      const char **window_arg)
{
	static const struct option long_opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "engine", required_argument, NULL, 'e' },
		{ "nsid", required_argument, NULL, 'n' },
		{ "workload", required_argument, NULL, 'w' },
		{ "allow-write", no_argument, NULL, 'A' },
		{ "bs", required_argument, NULL, 'B' },
		{ "qd", required_argument, NULL, 'Q' },
		{ "time", required_argument, NULL, 't' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "buffer", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 's' },
		{ "offset", required_argument, NULL, 'O' },
		{ "window", required_argument, NULL, 'W' },
		{ "iova", required_argument, NULL, 'i' },
		{ "mapper", required_argument, NULL, 'm' },
		{ "verify", no_argument, NULL, 'V' },
		{ "json", no_argument, NULL, 'j' },
		{ "force", no_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "replace", no_argument, NULL, 'R' },
		{ "append", no_argument, NULL, 'P' },
		{},
	};
	static const struct cli_command cmd = {
		.name = "io",
		.short_opts = "d:e:n:w:t:b:s:m:o:f",
		.long_opts = long_opts,
		.usage = usage,
		.on_option = on_option,
		.operands = CLI_NO_OPERANDS,
	};
	struct io_args a = { .o = o, .size_arg = *size_arg, .window_arg = *window_arg };
	int status;

	if (!cli_parse(&cmd, argc, argv, &a, &status))
		return status == IT_EXIT_OK ? 1 : -1;
	*size_arg = a.size_arg;
	*window_arg = a.window_arg;
	if (!o->ndevices) {
		log_error("io needs --device BDF (an NVMe controller); see 'iommutrace io --help'");
		return -1;
	}
	if (io_workload_writes(o->workload) && (!o->allow_write || !o->nsid_given)) {
		log_error("--workload %s overwrites the namespace's data: it needs --allow-write and "
			  "the namespace named with --nsid N",
			  io_workload_name(o->workload));
		return -1;
	}
	if (io_workload_writes(o->workload) && o->verify) {
		log_error("--verify checks what reads bring back; %s writes the pattern it checks: "
			  "read it back afterwards with --workload randread --verify",
			  io_workload_name(o->workload));
		return -1;
	}
	if (buffer_is_dmabuf(o->buffer.kind)) {
		log_error("io reads into host memory or a bar: window; a %s buffer is a dma-buf, which "
			  "'iommutrace map --import-as' maps",
			  buffer_kind_name(o->buffer.kind));
		return -1;
	}
	if (o->ndevices > 1 && o->buffer.kind == BUF_BAR &&
	    (o->engine != &io_engine_vfio || o->mapper != MAPPER_TYPE1)) {
		log_error(
			"several --device share a bar: window through --engine vfio --mapper type1 "
			"only (iommufd maps a BAR only as a dma-buf of a device it holds itself)");
		return -1;
	}
	if (self_record_check_options(o->db_path, o->replace, o->append))
		return -1;
	return 0;
}

static int check_sizes(struct io_opts *o, const char *size_arg, const char *window_arg)
{
	uint64_t granule = buffer_granule(&o->buffer), need = o->bs * o->max_qd;
	char a[HUMAN_SIZE_LEN], b[HUMAN_SIZE_LEN];

	if (o->bs < 512 || o->bs % 512 || o->bs > MAX_BS) {
		log_error("bad --bs %s: give a multiple of 512 bytes up to 2M",
			  human_size(o->bs, a));
		return -1;
	}
	if (size_arg) {
		if (parse_size(size_arg, &o->size) || !o->size || o->size % granule) {
			log_error("bad --size '%s': give a multiple of the %s buffer's %s pages",
				  size_arg, buffer_kind_name(o->buffer.kind),
				  human_size(granule, a));
			return -1;
		}
	} else {
		uint64_t round = granule > LEAF_2M ? granule : LEAF_2M;

		o->size = (need + round - 1) / round * round;
	}
	if (o->size < need) {
		log_error("a buffer of %s is smaller than bs x qd (%s): give a larger --size",
			  human_size(o->size, a), human_size(need, b));
		return -1;
	}
	o->window = o->size;
	if (window_arg && (parse_size(window_arg, &o->window) || o->window % o->bs ||
			   o->window > o->size || o->window < need)) {
		log_error("bad --window '%s': a multiple of --bs, at least bs x qd (%s), at most the "
			  "buffer's %s",
			  window_arg, human_size(need, a), human_size(o->size, b));
		return -1;
	}
	if (o->offset && (o->buffer.kind != BUF_BAR || o->offset % LEAF_4K)) {
		log_error("bad --offset: only for bar buffers, a multiple of 4 KiB");
		return -1;
	}
	if (!o->iova)
		o->iova = mapper_default_iova(o->size);
	return 0;
}

/* Limits only the device knows, once the engine has opened it. */
static int check_device(const struct io_opts *o, const char *bdf, const struct io_engine *e)
{
	char a[HUMAN_SIZE_LEN], b[HUMAN_SIZE_LEN];

	if (o->bs % e->block_size) {
		log_error("--bs %s is not a multiple of %s namespace %llu's %u-byte blocks",
			  human_size(o->bs, a), bdf, (unsigned long long)o->nsid, e->block_size);
		return -1;
	}
	if (e->max_transfer && o->bs > e->max_transfer) {
		log_error("--bs %s is above %s's largest transfer, %s (MDTS)", human_size(o->bs, a),
			  bdf, human_size(e->max_transfer, b));
		return -1;
	}
	if (o->max_qd > e->max_qd) {
		log_error("--qd %u is above what %s takes on one queue: %u", o->max_qd, bdf,
			  e->max_qd);
		return -1;
	}
	return 0;
}

/* The run as printed and as io -o's recorder stores it (io/io_report.h); a device's engine
 * details once it is open (block_size 0 before). */
static void fill_run(const struct io_opts *o, const struct io_worker *w, struct io_report_run *run)
{
	memset(run, 0, sizeof(*run));
	snprintf(run->engine, sizeof(run->engine), "%s", o->engine->name);
	/* only the vfio engine maps the buffer itself */
	if (o->engine == &io_engine_vfio)
		snprintf(run->mapper, sizeof(run->mapper), "%s", mapper_name(o->mapper));
	snprintf(run->workload, sizeof(run->workload), "%s", io_workload_name(o->workload));
	snprintf(run->buffer, sizeof(run->buffer), "%s", o->buffer_arg);
	snprintf(run->buffer_kind, sizeof(run->buffer_kind), "%s",
		 buffer_kind_name(o->buffer.kind));
	run->nsid = (uint32_t)o->nsid;
	run->bs = (uint32_t)o->bs;
	run->verify = o->verify;
	run->duration_ns = o->duration_ns;
	run->repeat = o->repeat;
	run->size = o->size;
	run->bar_offset = o->offset;
	run->window = o->window;
	run->iova = o->engine == &io_engine_vfio ? o->iova : 0;
	run->ndevices = o->ndevices;
	for (uint32_t i = 0; i < o->ndevices; i++) {
		struct io_report_device *d = &run->devices[i];

		snprintf(d->device, sizeof(d->device), "%s", o->devices[i]);
		snprintf(d->iommu, sizeof(d->iommu), "%s", w[i].iommu);
		d->numa_node = w[i].node;
		d->cpu = w[i].cpu;
		d->iova = run->iova;
		d->bar_offset = o->offset + o->size * i;
		if (!w[i].engine.priv)
			continue;
		snprintf(d->model, sizeof(d->model), "%s", w[i].engine.model);
		snprintf(d->serial, sizeof(d->serial), "%s", w[i].engine.serial);
		d->block_size = w[i].engine.block_size;
		d->blocks = w[i].engine.blocks;
	}
}

/* In io -o's recorder: the command's report, stored with the session. */
static int store_report(sqlite3 *db, int64_t session_id, int report_fd)
{
	struct io_report r;
	int rc = io_report_read(report_fd, &r);

	if (rc > 0) {
		log_warn("the io command reported nothing (it ended before it began); the session "
			 "has no io_runs row");
		return 0;
	}
	if (rc == 0)
		rc = io_report_store(db, session_id, &r);
	io_report_free(&r);
	return rc;
}

/* Before the device leaves its driver: an NVMe controller by its PCI class. */
static int check_nvme_class(const char *root, const char *bdf)
{
	char path[PATH_MAX];
	uint64_t class;

	if (sysfs_path(path, sizeof(path), root, "/sys/bus/pci/devices/%s/class", bdf) ||
	    sysfs_read_hex(path, &class)) {
		log_error("no PCI device %s (%s: %s)", bdf, path, strerror(errno));
		return -1;
	}
	if (class != NVME_PCI_CLASS) {
		log_error("%s is not an NVMe controller (PCI class 0x%06llx, not 0x%06x)", bdf,
			  (unsigned long long)class, NVME_PCI_CLASS);
		return -1;
	}
	return 0;
}

/* How the engine's DMA reaches memory, read before the device leaves its driver: "off" (no IOMMU
 * group), "passthrough" (an identity domain: the uio case with iommu=pt) or "translated" (VFIO's
 * own domain, or the kernel's DMA domain the uring path maps in); "" when sysfs does not say. */
static void iommu_mode(const char *root, const char *bdf, const struct io_engine_ops *engine,
		       char out[16])
{
	char path[PATH_MAX], type[SYSFS_NAME_MAX + 1];

	if (sysfs_path(path, sizeof(path), root, "/sys/bus/pci/devices/%s/iommu_group", bdf)) {
		out[0] = '\0';
		return;
	}
	if (access(path, F_OK)) {
		snprintf(out, 16, "off");
		return;
	}
	if (engine == &io_engine_vfio)
		snprintf(out, 16, "translated");
	else if (sysfs_path(path, sizeof(path), root, "/sys/bus/pci/devices/%s/iommu_group/type",
			    bdf) ||
		 sysfs_read_text(path, type, sizeof(type)))
		out[0] = '\0';
	else
		snprintf(out, 16, "%s", strcmp(type, "identity") ? "translated" : "passthrough");
}

/* Before any device leaves its driver: each is an NVMe controller, and gets a CPU near it. */
static int prepare_workers(const struct io_opts *o, struct io_worker *w)
{
	for (uint32_t i = 0; i < o->ndevices; i++) {
		unsigned on_node = 0;

		if (check_nvme_class(o->sysfs_root, o->devices[i]))
			return -1;
		w[i].bdf = o->devices[i];
		w[i].engine.ops = o->engine;
		iommu_mode(o->sysfs_root, w[i].bdf, o->engine, w[i].iommu);
		device_cpu_pick(o->sysfs_root, w[i].bdf, 0, &w[i].node, &w[i].cpu);
		for (uint32_t j = 0; j < i; j++)
			on_node += w[j].node == w[i].node;
		if (on_node)
			device_cpu_pick(o->sysfs_root, w[i].bdf, on_node, &w[i].node, &w[i].cpu);
	}
	return 0;
}

static int open_engines(const struct io_opts *o, struct io_worker *w)
{
	for (uint32_t i = 0; i < o->ndevices; i++) {
		struct io_engine *e = &w[i].engine;
		struct io_target t = { .bdf = w[i].bdf,
				       .nsid = (uint32_t)o->nsid,
				       .mapper = o->mapper,
				       .buffer = o->buffer,
				       .buffer_size = o->size,
				       .buffer_offset = o->offset,
				       .iova = o->iova,
				       .max_qd = o->max_qd,
				       .max_bs = (uint32_t)o->bs,
				       .writes = io_workload_writes(o->workload),
				       .force = o->force,
				       .stop = &stop_signal,
				       .sysfs_root = o->sysfs_root };

		/* a bar window: one for all, each device its own part (see struct io_target) */
		if (o->buffer.kind == BUF_BAR && o->ndevices > 1) {
			if (i == 0)
				t.bar_window_bytes = o->size * o->ndevices;
			t.peer_window = i ? w[0].engine.window : NULL;
			t.peer_offset = o->size * i;
		}
		if (e->ops->open(e, &t) || check_device(o, w[i].bdf, e))
			return -1;
		log_info("%s: %s (serial %s), namespace %llu: %llu blocks of %u bytes; IOMMU %s; "
			 "worker on CPU %d (NUMA node %d)",
			 w[i].bdf, e->model, e->serial, (unsigned long long)o->nsid,
			 (unsigned long long)e->blocks, e->block_size,
			 w[i].iommu[0] ? w[i].iommu : "unknown", w[i].cpu, w[i].node);
	}
	return 0;
}

/* Closes every engine that was opened; -1 when a device could not be restored. */
static int close_engines(const struct io_opts *o, struct io_worker *w)
{
	int ret = 0;

	/* the last first: the first engine holds a shared bar window */
	for (uint32_t i = o->ndevices; i-- > 0;)
		if (w[i].engine.ops && w[i].engine.ops->close(&w[i].engine))
			ret = -1;
	return ret;
}

/* The progress line on a terminal while a point runs: which point of how many, and its time. */
struct progress {
	const struct io_opts *o;
	size_t step, steps;
	uint32_t qd;
	uint64_t rep;
	bool shown;
};

static void show_progress(void *ctx, uint64_t elapsed_ns)
{
	struct progress *p = ctx;

	fprintf(stderr,
		"\r\033[Kio: point %zu of %zu (qd %u, repeat %llu of %llu): %llu s of %llu s",
		p->step + 1, p->steps, p->qd, (unsigned long long)p->rep + 1,
		(unsigned long long)p->o->repeat, (unsigned long long)(elapsed_ns / 1000000000),
		(unsigned long long)(p->o->duration_ns / 1000000000));
	fflush(stderr);
	p->shown = true;
}

static void clear_progress(struct progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = false;
}

static int run_io(struct io_opts *o)
{
	size_t nsteps = (size_t)o->nqds * o->repeat, n = 0;
	struct io_worker *w = calloc(o->ndevices, sizeof(*w));
	struct io_report_point *rows = calloc(nsteps * o->ndevices, sizeof(*rows));
	struct io_report_run run;
	struct io_output out = { .run = &run, .qds = o->qds, .nqds = o->nqds };
	struct progress prog = { .o = o, .steps = nsteps };
	bool tty = isatty(STDERR_FILENO);
	uint64_t failed = 0, wrong = 0;
	int ret = IT_EXIT_FAILURE;

	stop_on_signals();
	if (!w || !rows) {
		log_error("out of memory");
		goto cleanup;
	}
	for (uint32_t i = 0; i < o->ndevices; i++)
		w[i].node = w[i].cpu = -1;
	fill_run(o, w, &run);
	if ((o->report_fd >= 0 && io_report_write_run(o->report_fd, &run)) ||
	    prepare_workers(o, w) || open_engines(o, w))
		goto cleanup;
	fill_run(o, w, &run);
	if (o->report_fd >= 0 && io_report_write_run(o->report_fd, &run))
		goto cleanup;
	for (uint32_t q = 0; q < o->nqds && !stop_signal; q++) {
		for (uint64_t rep = 0; rep < o->repeat && !stop_signal; rep++) {
			struct io_report_point *step = &rows[n];
			int rc;

			for (uint32_t i = 0; i < o->ndevices; i++) {
				w[i].point = (struct io_point){ .workload = o->workload,
								.bs = (uint32_t)o->bs,
								.qd = o->qds[q],
								.duration_ns = o->duration_ns,
								.window = o->window,
								.verify = o->verify,
								.seed = o->seed + rep * 7919 + q +
									i * 104729 };
			}
			prog.step = q * o->repeat + rep;
			prog.qd = o->qds[q];
			prog.rep = rep;
			rc = io_workers_run(w, o->ndevices, tty ? show_progress : NULL, &prog);
			clear_progress(&prog);
			for (uint32_t i = 0; i < o->ndevices; i++) {
				if (w[i].rc)
					continue;
				rows[n] = w[i].row;
				rows[n].qd = o->qds[q];
				rows[n].repeat_index = (uint32_t)rep;
				rows[n].device_index = i;
				if (o->report_fd >= 0 &&
				    io_report_write_point(o->report_fd, n, &rows[n]))
					goto cleanup;
				failed += rows[n].result.failed;
				wrong += rows[n].result.verify_errors;
				io_output_point(o->json ? stderr : stdout, &out, &rows[n]);
				n++;
			}
			if (rc)
				goto cleanup;
			if (o->ndevices > 1)
				io_output_total(o->json ? stderr : stdout, &out, step, o->ndevices);
		}
	}
	if (o->json) {
		if (io_output_json(stdout, &out, rows, n)) {
			log_error("writing the JSON output failed");
			goto cleanup;
		}
	} else if (n > 1) {
		io_output_table(stdout, &out, rows, n);
	}
	if (stop_signal)
		log_info("stopped by signal %d after %zu of %zu points", (int)stop_signal,
			 n / o->ndevices, nsteps);
	if (failed || wrong)
		log_error("%llu commands failed and %llu reads differed from the disk pattern",
			  (unsigned long long)failed, (unsigned long long)wrong);
	else
		ret = IT_EXIT_OK;
cleanup:
	if (w && close_engines(o, w))
		ret = IT_EXIT_FAILURE;
	free(w);
	free(rows);
	return ret;
}

int cmd_io(int argc, char **argv)
{
	struct io_opts o = { .engine = &io_engine_vfio,
			     .buffer_arg = "anon",
			     .bs = 4096,
			     .duration_ns = 5000000000ull,
			     .repeat = 1,
			     .nsid = 1,
			     .qds = { 1 },
			     .nqds = 1,
			     .max_qd = 1,
			     .seed = 1,
			     .report_fd = child_report_take() };
	const char *size_arg = NULL, *window_arg = NULL;
	int rc = parse_args(argc, argv, &o, &size_arg, &window_arg);

	if (rc)
		return rc > 0 ? IT_EXIT_OK : IT_EXIT_USAGE;
	if (check_sizes(&o, size_arg, window_arg))
		return IT_EXIT_USAGE;
	/* the uring engine needs only access to the namespace's node, which its open checks */
	if (o.engine != &io_engine_uring &&
	    privilege_require(o.engine == &io_engine_vfio ? "io --engine vfio" : "io --engine uio",
			      PRIV_SYS_ADMIN | PRIV_DAC_OVERRIDE | PRIV_IPC_LOCK,
			      "it rebinds the device in sysfs, reads its buffers' physical addresses "
			      "and pins them for DMA"))
		return IT_EXIT_PRIVILEGE;
	if (o.engine == &io_engine_vfio && mapper_available(o.mapper))
		return IT_EXIT_FAILURE;
	if (o.db_path && o.report_fd < 0)
		return self_record_run(argc, argv,
				       &(struct self_record){ .db_path = o.db_path,
							      .replace = o.replace,
							      .append = o.append,
							      .store = store_report });
	return run_io(&o);
}
