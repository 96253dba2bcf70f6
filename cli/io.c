/* `iommutrace io`: reads from an NVMe namespace through an I/O engine (io/engine.h) into a buffer
 * of any kind `map` takes, for each queue depth of a sweep and each repeat, and reports IOPS,
 * bandwidth and latency percentiles per point, then the means per queue depth. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/exit_codes.h"
#include "common/human_size.h"
#include "common/json_writer.h"
#include "common/leaf.h"
#include "common/log.h"
#include "common/parse.h"
#include "common/sysfs_file.h"
#include "common/child_report.h"
#include "common/clock.h"
#include "io/engine.h"
#include "io/io_report.h"
#include "commands.h"
#include "options.h"
#include "self_record.h"
#include "stop_signal.h"

#define MAX_QDS 16
#define MAX_QD 255
#define MAX_BS (2u << 20)	/* one PRP list page per command */
#define NVME_PCI_CLASS 0x010802	/* mass storage, non-volatile memory, NVM Express */

struct io_opts {
	char device[13];
	const struct io_engine_ops *engine;
	enum mapper_kind mapper;
	struct buffer_spec buffer;
	const char *buffer_arg;
	enum io_workload workload;
	uint64_t bs, size, offset, window, iova, duration_ns, repeat, nsid, seed;
	uint32_t qds[MAX_QDS], nqds, max_qd;
	bool verify, json, force, replace;
	const char *db_path;
	int report_fd;			/* -1 unless io -o's recorder runs this */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: iommutrace io --device BDF [--engine vfio|uring|uio] [--nsid N]\n"
"                     [--workload randread|seqread]\n"
"                     [--bs SIZE] [--qd LIST] [--time SECONDS] [--repeat N]\n"
"                     [--buffer KIND] [--size SIZE] [--offset SIZE] [--window SIZE]\n"
"                     [--iova ADDR] [--mapper type1|iommufd] [--verify] [--json]\n"
"                     [-o FILE.db [--replace]] [--force]\n"
"\n"
"Reads from an NVMe namespace into a buffer and measures IOPS, bandwidth and latency, for each\n"
"queue depth of --qd and each repeat. The vfio engine binds the device to vfio-pci, drives it\n"
"with a user-space NVMe driver (admin queue, Identify, one I/O queue pair, PRP lists, completions\n"
"polled without interrupts) and puts it back on its driver afterwards, also on errors and\n"
"SIGINT/SIGTERM/SIGHUP. The uring engine reads through the kernel's nvme driver (io_uring,\n"
"O_DIRECT, one registered buffer), which maps and unmaps every read in the IOMMU. The uio\n"
"engine is the IOMMU-off case: the user-space driver over uio_pci_generic, given physical\n"
"addresses of a hugetlb buffer. Every engine only reads.\n"
"\n"
"  -d, --device BDF      the NVMe controller\n"
"  -e, --engine NAME     vfio (default): the user-space driver over VFIO; uring: the kernel\n"
"                        driver through io_uring on the namespace's block device; uio: the\n"
"                        user-space driver over uio_pci_generic, IOMMU off or passthrough,\n"
"                        hugetlb buffers only\n"
"  -n, --nsid N          namespace (default 1)\n"
"  -w, --workload NAME   randread (default: bs-aligned offsets, uniform over the namespace) or\n"
"                        seqread (from block 0 on, wrapping)\n"
"      --bs SIZE         bytes per command (default 4K), a multiple of the block size, <= 2M\n"
"      --qd LIST         queue depths, e.g. 1,2,4,8,16,32 (default 1; each <= 255)\n"
"  -t, --time SECONDS    per point (default 5; 250ms, 2s, 1m accepted)\n"
"      --repeat N        times each point runs (default 1); the table shows means\n"
"  -b, --buffer KIND     where the data lands: anon (default), thp, hugetlb2m, hugetlb1g, memfd,\n"
"                        or bar:BDF/INDEX (a window of another device's BAR: the GPU-memory case)\n"
"  -s, --size SIZE       of the buffer (default: bs x the deepest qd, rounded up to 2 MiB, or\n"
"                        to the buffer's page size when larger)\n"
"      --offset SIZE     bar: the window's offset into the BAR (default 0)\n"
"      --window SIZE     bytes of the buffer the commands' data addresses cycle through (default:\n"
"                        all of it): with 4 KiB IOMMU pages an IOTLB of 64 entries covers 256 KiB\n"
"      --iova ADDR       IOVA of the buffer (default 1 GiB, or 4 GiB for large buffers)\n"
"  -m, --mapper NAME     type1 (default) or iommufd, as for map (vfio engine)\n"
"      --verify          check every read against the testbed disk's pattern (tests/vm)\n"
"      --json            results as JSON on stdout (progress lines on stderr)\n"
"  -o, --output FILE     record while reading into a new database (as 'iommutrace record -o\n"
"                        FILE -- iommutrace io ...') and store the run with the session\n"
"                        (io_runs, io_points, io_latency_buckets, io_summary_view), so each\n"
"                        point's throughput joins the mappings made during it\n"
"      --replace         with -o: replace an existing FILE\n"
"  -f, --force           take a device whose block devices are mounted or held\n"
"  -v, --verbose         debug messages\n"
"  -h, --help            this text\n"
"\n"
"Needs root (sysfs binding, VFIO, pagemap). exit status: 0 ok, 1 failure (also: a command\n"
"failed or read data that --verify found wrong), 2 bad usage\n");
}

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
		if (o->nqds == MAX_QDS || parse_u64(tok, &qd) || qd < 1 || qd > MAX_QD)
			return -1;
		o->qds[o->nqds++] = (uint32_t)qd;
		if (qd > o->max_qd)
			o->max_qd = (uint32_t)qd;
	}
	return o->nqds ? 0 : -1;
}

/* Option values, each checked alone; check_sizes checks them together. */
static int parse_args(int argc, char **argv, struct io_opts *o, const char **size_arg,
		      const char **window_arg)
{
	static const struct option long_opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "engine", required_argument, NULL, 'e' },
		{ "nsid", required_argument, NULL, 'n' },
		{ "workload", required_argument, NULL, 'w' },
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
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *device = NULL, *bad = NULL;
	int opt;

	while ((opt = cli_getopt(argc, argv, "d:e:n:w:t:b:s:m:o:fvh", long_opts, "io")) != -1) {
		switch (opt) {
		case 'd': device = optarg; break;
		case 'e': if (!(o->engine = io_engine_find(optarg))) bad = "engine"; break;
		case 'n': if (parse_u64(optarg, &o->nsid) || !o->nsid || o->nsid > UINT32_MAX) bad = "nsid"; break;
		case 'w':
			if (!strcmp(optarg, "randread"))
				o->workload = IO_RANDREAD;
			else if (!strcmp(optarg, "seqread"))
				o->workload = IO_SEQREAD;
			else
				bad = "workload";
			break;
		case 'B': if (parse_size(optarg, &o->bs)) bad = "bs"; break;
		case 'Q': if (parse_qds(optarg, o)) bad = "qd"; break;
		case 't': if (parse_duration_ns(optarg, &o->duration_ns)) bad = "time"; break;
		case 'r': if (parse_u64(optarg, &o->repeat) || !o->repeat || o->repeat > 1000) bad = "repeat"; break;
		case 'b': o->buffer_arg = optarg; if (buffer_parse(optarg, &o->buffer)) bad = "buffer"; break;
		case 's': *size_arg = optarg; break;
		case 'O': if (parse_size(optarg, &o->offset)) bad = "offset"; break;
		case 'W': *window_arg = optarg; break;
		case 'i': if (parse_u64(optarg, &o->iova) || o->iova % LEAF_4K) bad = "iova"; break;
		case 'm': if (mapper_parse(optarg, &o->mapper)) bad = "mapper"; break;
		case 'V': o->verify = true; break;
		case 'j': o->json = true; break;
		case 'f': o->force = true; break;
		case 'o': o->db_path = optarg; break;
		case 'R': o->replace = true; break;
		case 'v': log_verbose++; break;
		case 'h': usage(stdout); return 1;
		default: return -1;
		}
		if (bad) {
			log_error("bad --%s '%s'; see 'iommutrace io --help'", bad, optarg);
			return -1;
		}
	}
	if (optind < argc) {
		log_error("unexpected argument '%s'; see 'iommutrace io --help'", argv[optind]);
		return -1;
	}
	if (!device) {
		log_error("io needs --device BDF (an NVMe controller); see 'iommutrace io --help'");
		return -1;
	}
	if (parse_bdf(device, o->device)) {
		log_error("bad PCI address '%s': give DDDD:BB:DD.F, e.g. 0000:00:04.0", device);
		return -1;
	}
	if (o->replace && !o->db_path) {
		log_error("--replace replaces the -o database; give -o FILE");
		return -1;
	}
	return 0;
}

static int check_sizes(struct io_opts *o, const char *size_arg, const char *window_arg)
{
	uint64_t granule = buffer_granule(o->buffer.kind), need = o->bs * o->max_qd;
	char a[HUMAN_SIZE_LEN], b[HUMAN_SIZE_LEN];

	if (o->bs < 512 || o->bs % 512 || o->bs > MAX_BS) {
		log_error("bad --bs %s: give a multiple of 512 bytes up to 2M", human_size(o->bs, a));
		return -1;
	}
	if (size_arg) {
		if (parse_size(size_arg, &o->size) || !o->size || o->size % granule) {
			log_error("bad --size '%s': give a multiple of the %s buffer's %s pages",
				  size_arg, buffer_kind_name(o->buffer.kind), human_size(granule, a));
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
			  "buffer's %s", window_arg, human_size(need, a), human_size(o->size, b));
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

static double iops_of(const struct io_result *r)
{
	return r->elapsed_ns ? (double)r->completed * 1e9 / (double)r->elapsed_ns : 0;
}

static double mib_s_of(const struct io_result *r)
{
	return r->elapsed_ns ? (double)r->bytes * 1e9 / (double)r->elapsed_ns / 1048576.0 : 0;
}

static double mean_us_of(const struct io_result *r)
{
	return r->hist.count ? (double)r->hist.sum_ns / (double)r->hist.count / 1000.0 : 0;
}

static void print_point(FILE *f, const struct io_opts *o, const struct io_report_point *p)
{
	const struct lat_hist *h = &p->result.hist;
	char bs[HUMAN_SIZE_LEN];

	fprintf(f, "%s %s %s bs=%s qd=%u rep %llu/%llu: %.0f IOPS, %.1f MiB/s, mean %.1f us, "
		   "p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f us; %llu completed, %llu failed",
		o->engine->name, o->device, o->workload == IO_RANDREAD ? "randread" : "seqread",
		human_size(o->bs, bs), p->qd, (unsigned long long)p->repeat_index + 1,
		(unsigned long long)o->repeat, iops_of(&p->result), mib_s_of(&p->result), mean_us_of(&p->result),
		lat_hist_percentile(h, 0.5) / 1e3, lat_hist_percentile(h, 0.9) / 1e3,
		lat_hist_percentile(h, 0.99) / 1e3, lat_hist_percentile(h, 0.999) / 1e3,
		h->max_ns / 1e3, (unsigned long long)p->result.completed,
		(unsigned long long)p->result.failed);
	if (o->verify)
		fprintf(f, ", %llu wrong", (unsigned long long)p->result.verify_errors);
	fputc('\n', f);
	fflush(f);
}

/* Means over the repeats, one line per queue depth. */
static void print_table(const struct io_opts *o, const struct io_report_point *rows, size_t n)
{
	printf("\n%-5s %12s %10s %10s %10s %10s\n", "qd", "IOPS", "MiB/s", "mean_us", "p99_us",
	       "failed");
	for (uint32_t q = 0; q < o->nqds; q++) {
		double iops = 0, mib = 0, mean = 0, p99 = 0;
		uint64_t failed = 0, k = 0;

		for (size_t i = 0; i < n; i++) {
			if (rows[i].qd != o->qds[q] || i / o->repeat != q)
				continue;
			iops += iops_of(&rows[i].result);
			mib += mib_s_of(&rows[i].result);
			mean += mean_us_of(&rows[i].result);
			p99 += lat_hist_percentile(&rows[i].result.hist, 0.99) / 1e3;
			failed += rows[i].result.failed;
			k++;
		}
		if (k)
			printf("%-5u %12.0f %10.1f %10.1f %10.1f %10llu\n", o->qds[q], iops / k,
			       mib / k, mean / k, p99 / k, (unsigned long long)failed);
	}
}

static void write_json(const struct io_opts *o, const struct io_engine *e,
		       const struct io_report_point *rows, size_t n)
{
	struct json_writer w;

	json_init(&w, stdout);
	json_begin_object(&w, NULL);
	json_string(&w, "engine", o->engine->name);
	json_string(&w, "device", o->device);
	json_string(&w, "model", e->model);
	json_int(&w, "nsid", (int64_t)o->nsid);
	json_string(&w, "workload", o->workload == IO_RANDREAD ? "randread" : "seqread");
	json_int(&w, "bs_bytes", (int64_t)o->bs);
	json_string(&w, "buffer", o->buffer_arg);
	json_int(&w, "window_bytes", (int64_t)o->window);
	if (o->engine == &io_engine_vfio)	/* the one engine that maps the buffer itself */
		json_hex(&w, "iova", o->iova);
	json_begin_array(&w, "points");
	for (size_t i = 0; i < n; i++) {
		const struct io_result *r = &rows[i].result;

		json_begin_object(&w, NULL);
		json_int(&w, "qd", rows[i].qd);
		json_int(&w, "repeat", (int64_t)rows[i].repeat_index);
		json_int(&w, "elapsed_ns", (int64_t)r->elapsed_ns);
		json_int(&w, "completed", (int64_t)r->completed);
		json_int(&w, "failed", (int64_t)r->failed);
		json_int(&w, "bytes", (int64_t)r->bytes);
		json_int(&w, "iops", (int64_t)(iops_of(r) + 0.5));
		json_int(&w, "mean_ns", r->hist.count ? (int64_t)(r->hist.sum_ns / r->hist.count) : 0);
		json_int(&w, "p50_ns", (int64_t)lat_hist_percentile(&r->hist, 0.5));
		json_int(&w, "p90_ns", (int64_t)lat_hist_percentile(&r->hist, 0.9));
		json_int(&w, "p99_ns", (int64_t)lat_hist_percentile(&r->hist, 0.99));
		json_int(&w, "p999_ns", (int64_t)lat_hist_percentile(&r->hist, 0.999));
		json_int(&w, "max_ns", (int64_t)r->hist.max_ns);
		if (o->verify)
			json_int(&w, "verify_errors", (int64_t)r->verify_errors);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	json_finish(&w);
}

/* Limits only the device knows, once the engine has opened it. */
static int check_device(const struct io_opts *o, const struct io_engine *e)
{
	char a[HUMAN_SIZE_LEN], b[HUMAN_SIZE_LEN];

	if (o->bs % e->block_size) {
		log_error("--bs %s is not a multiple of namespace %llu's %u-byte blocks",
			  human_size(o->bs, a), (unsigned long long)o->nsid, e->block_size);
		return -1;
	}
	if (e->max_transfer && o->bs > e->max_transfer) {
		log_error("--bs %s is above %s's largest transfer, %s (MDTS)", human_size(o->bs, a),
			  o->device, human_size(e->max_transfer, b));
		return -1;
	}
	return 0;
}

/* The run as io -o's recorder stores it (io/io_report.h); e: the opened engine, or NULL. */
static void report_run(const struct io_opts *o, const struct io_engine *e,
		       struct io_report_run *run)
{
	memset(run, 0, sizeof(*run));
	snprintf(run->engine, sizeof(run->engine), "%s", o->engine->name);
	snprintf(run->device, sizeof(run->device), "%s", o->device);
	/* only the vfio engine maps the buffer itself */
	if (o->engine == &io_engine_vfio)
		snprintf(run->mapper, sizeof(run->mapper), "%s", mapper_name(o->mapper));
	snprintf(run->workload, sizeof(run->workload), "%s",
		 o->workload == IO_RANDREAD ? "randread" : "seqread");
	snprintf(run->buffer, sizeof(run->buffer), "%s", o->buffer_arg);
	snprintf(run->buffer_kind, sizeof(run->buffer_kind), "%s",
		 buffer_kind_name(o->buffer.kind));
	if (e) {
		snprintf(run->model, sizeof(run->model), "%s", e->model);
		snprintf(run->serial, sizeof(run->serial), "%s", e->serial);
		run->block_size = e->block_size;
		run->blocks = e->blocks;
	}
	run->nsid = (uint32_t)o->nsid;
	run->bs = (uint32_t)o->bs;
	run->verify = o->verify;
	run->duration_ns = o->duration_ns;
	run->repeat = o->repeat;
	run->size = o->size;
	run->bar_offset = o->offset;
	run->window = o->window;
	run->iova = o->engine == &io_engine_vfio ? o->iova : 0;
}

static int write_report_run(const struct io_opts *o, const struct io_engine *e)
{
	struct io_report_run run;

	if (o->report_fd < 0)
		return 0;
	report_run(o, e, &run);
	return io_report_write_run(o->report_fd, &run);
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
static int check_nvme_class(const char *bdf)
{
	char path[96];
	uint64_t class;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/class", bdf);
	if (sysfs_read_hex(path, &class)) {
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

static int run_io(struct io_opts *o)
{
	struct io_engine e = { .ops = o->engine };
	struct io_target t = { .bdf = o->device, .nsid = (uint32_t)o->nsid, .mapper = o->mapper,
			       .buffer = o->buffer, .buffer_size = o->size,
			       .buffer_offset = o->offset, .iova = o->iova, .max_qd = o->max_qd,
			       .force = o->force, .stop = &stop_signal };
	size_t npoints = (size_t)o->nqds * o->repeat, n = 0;
	struct io_report_point *rows = calloc(npoints, sizeof(*rows));
	uint64_t failed = 0, wrong = 0;
	int ret = IT_EXIT_FAILURE;

	stop_on_signals();
	if (!rows) {
		log_error("out of memory");
		return IT_EXIT_FAILURE;
	}
	if (write_report_run(o, NULL) || check_nvme_class(o->device) || e.ops->open(&e, &t) ||
	    check_device(o, &e) || write_report_run(o, &e))
		goto cleanup;
	log_info("%s: %s (serial %s), namespace %llu: %llu blocks of %u bytes", o->device, e.model,
		 e.serial, (unsigned long long)o->nsid, (unsigned long long)e.blocks, e.block_size);
	for (uint32_t q = 0; q < o->nqds && !stop_signal; q++) {
		for (uint64_t rep = 0; rep < o->repeat && !stop_signal; rep++) {
			struct io_point p = { .workload = o->workload, .bs = (uint32_t)o->bs,
					      .qd = o->qds[q], .duration_ns = o->duration_ns,
					      .window = o->window, .verify = o->verify,
					      .seed = o->seed + rep * 7919 + q };
			struct io_report_point *row = &rows[n];

			row->qd = o->qds[q];
			row->repeat_index = (uint32_t)rep;
			row->start_mono_ns = clock_ns(CLOCK_MONOTONIC);
			if (e.ops->run(&e, &p, &row->result))
				goto cleanup;
			row->end_mono_ns = clock_ns(CLOCK_MONOTONIC);
			if (o->report_fd >= 0 && io_report_write_point(o->report_fd, n, row))
				goto cleanup;
			n++;
			failed += row->result.failed;
			wrong += row->result.verify_errors;
			print_point(o->json ? stderr : stdout, o, row);
		}
	}
	if (o->json)
		write_json(o, &e, rows, n);
	else if (n > 1)
		print_table(o, rows, n);
	if (stop_signal)
		log_info("stopped by signal %d after %zu of %zu points", (int)stop_signal, n, npoints);
	if (failed || wrong)
		log_error("%llu commands failed and %llu reads differed from the disk pattern",
			  (unsigned long long)failed, (unsigned long long)wrong);
	else
		ret = IT_EXIT_OK;
cleanup:
	if (e.ops->close(&e))
		ret = IT_EXIT_FAILURE;
	free(rows);
	return ret;
}

int cmd_io(int argc, char **argv)
{
	struct io_opts o = { .engine = &io_engine_vfio, .buffer_arg = "anon", .bs = 4096,
			     .duration_ns = 5000000000ull, .repeat = 1, .nsid = 1,
			     .qds = { 1 }, .nqds = 1, .max_qd = 1, .seed = 1,
			     .report_fd = child_report_take() };
	const char *size_arg = NULL, *window_arg = NULL;
	int rc = parse_args(argc, argv, &o, &size_arg, &window_arg);

	if (rc)
		return rc > 0 ? IT_EXIT_OK : IT_EXIT_USAGE;
	if (check_sizes(&o, size_arg, window_arg))
		return IT_EXIT_USAGE;
	if (o.engine == &io_engine_vfio && mapper_available(o.mapper))
		return IT_EXIT_FAILURE;
	if (o.db_path && o.report_fd < 0)
		return self_record_run(argc, argv, &(struct self_record){
			.db_path = o.db_path, .replace = o.replace, .store = store_report });
	return run_io(&o);
}
