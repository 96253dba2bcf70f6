/* Item 1 of `make bench`: what the BPF handlers cost per event, by the kernel's own accounting
 * (BPF_ENABLE_STATS: run_time_ns / run_cnt of the program), for our raw_tp map and unmap handlers
 * in each capture mode and for bpftrace's code for the equivalent one-liner (bpftrace_peer.h),
 * both driven by BPF_PROG_TEST_RUN with the same arguments. raw_tp test runs take no repeat
 * count, so each event is one test run; the kernel times only the program, not the syscall. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "bench/bpftrace_peer.h"
#include "bench/raw_plan.h"
#include "bench/rows.h"
#include "tracer/bpf_capture.h"
#include "tracer/probe_plan.h"

#define BATCH 1000
#define ROUNDS 3

/* 4 KiB at one IOVA: the NVMe churn case (below the threshold mode's 2 MiB) */
static const uint64_t map_args[] = { 0x100000000ull, 0x200000000ull, 4096 };
static const uint64_t unmap_args[] = { 0x100000000ull, 4096, 4096 };
/* the same, where a tracepoint program reads them: after the 8-byte common header */
static const uint64_t bt_map_args[] = { 0, 0x100000000ull, 0x200000000ull, 4096 };
static const uint64_t bt_unmap_args[] = { 0, 0x100000000ull, 4096, 4096 };

static const struct {
	enum capture_mode mode;
	const char *name;
} modes[] = {
	{ CAPTURE_PER_EVENT, "per-event" },
	{ CAPTURE_AGGREGATE, "aggregate" },
	{ CAPTURE_THRESHOLD, "threshold" },
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

struct subject {
	int map_fd, unmap_fd;
	struct bpf_capture *cap;	/* ours: drained between batches; NULL: bpftrace */
	uint64_t delivered;
	double map_ns, unmap_ns;	/* best round */
};

static int count_record(const struct it_event *e, void *ctx)
{
	(*(uint64_t *)ctx)++;
	return 0;
}

/* Empties our ring buffer so that every run takes the record path, not the full-buffer one;
 * bpftrace's reader empties its perf buffer on the other CPU meanwhile. */
static void drain(struct subject *s)
{
	if (!s->cap) {
		usleep(1000);
		return;
	}
	while (bpf_capture_poll(s->cap, 0, count_record, &s->delivered) > 0)
		;
}

static int run_stats(int fd, __u64 *ns, __u64 *cnt)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	*ns = info.run_time_ns;
	*cnt = info.run_cnt;
	return 0;
}

/* ns per run of fd over n test runs with args, or NAN */
static double cost(struct subject *s, int fd, const uint64_t *args, size_t nargs, uint64_t n)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = nargs * 8);
	__u64 ns0, cnt0, ns1, cnt1;

	if (run_stats(fd, &ns0, &cnt0))
		return NAN;
	for (uint64_t i = 0; i < n; i++) {
		if (bpf_prog_test_run_opts(fd, &opts)) {
			fprintf(stderr, "bench_handler: BPF_PROG_TEST_RUN failed: %s\n",
				strerror(errno));
			return NAN;
		}
		if (i % BATCH == BATCH - 1)
			drain(s);
	}
	drain(s);
	if (run_stats(fd, &ns1, &cnt1) || cnt1 == cnt0)
		return NAN;
	return (double)(ns1 - ns0) / (double)(cnt1 - cnt0);
}

static void measure(struct subject *s, int bpftrace, uint64_t n)
{
	double m = cost(s, s->map_fd, bpftrace ? bt_map_args : map_args, bpftrace ? 4 : 3, n);
	double u = cost(s, s->unmap_fd, bpftrace ? bt_unmap_args : unmap_args, bpftrace ? 4 : 3, n);

	if (isnan(s->map_ns) || m < s->map_ns)
		s->map_ns = m;
	if (isnan(s->unmap_ns) || u < s->unmap_ns)
		s->unmap_ns = u;
}

static int load_ours(struct subject *s, struct probe_plan *plan, enum capture_mode mode)
{
	char err[256];

	s->cap = bpf_capture_load(plan, &(struct bpf_capture_opts){ .mode = mode }, err,
				  sizeof(err));
	if (!s->cap) {
		fprintf(stderr, "bench_handler: %s\n", err);
		return -1;
	}
	s->map_fd = bpf_capture_prog_fd(s->cap, "raw_map");
	s->unmap_fd = bpf_capture_prog_fd(s->cap, "raw_unmap");
	s->map_ns = s->unmap_ns = NAN;
	return s->map_fd >= 0 && s->unmap_fd >= 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	uint64_t runs = bench_env_ull("BENCH_HANDLER_RUNS", 100000);
	const char *bt_out = argv[1];
	struct subject ours[NMODES] = {}, bt = { .map_ns = NAN, .unmap_ns = NAN };
	struct bpftrace_peer peer = {};
	struct probe_plan plan;
	char err[256], figure[96];
	int stats_fd, ret = 1, have_peer;

	if (argc != 2) {
		fprintf(stderr, "usage: bench_handler BPFTRACE_OUTPUT_FILE (bench/run runs it)\n");
		return 2;
	}
	if (bench_raw_plan("bench_handler", &plan))
		return 1;
	/* the kernel times programs only while this fd is open: closing it (or exiting) restores
	 * kernel.bpf_stats_enabled to what it was */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "bench_handler: cannot enable BPF run-time statistics: %s\n",
			strerror(errno));
		return 1;
	}
	for (size_t m = 0; m < NMODES; m++)
		if (load_ours(&ours[m], &plan, modes[m].mode))
			goto cleanup;
	/* BENCH_NO_PEER=1 (bench/run --profile): ours alone, so that the profile is ours */
	have_peer = !bench_env_ull("BENCH_NO_PEER", 0) &&
		    !bpftrace_peer_start(&peer, bt_out, -1, 4096, err, sizeof(err));
	if (!have_peer && !bench_env_ull("BENCH_NO_PEER", 0))
		bench_note("item 1: no bpftrace peer: %s", err);
	bt.map_fd = have_peer ? peer.map_fd : -1;
	bt.unmap_fd = have_peer ? peer.unmap_fd : -1;
	for (int round = 0; round < ROUNDS; round++) {
		for (size_t m = 0; m < NMODES; m++)
			measure(&ours[m], 0, runs);
		if (have_peer)
			measure(&bt, 1, runs);
	}
	for (size_t m = 0; m < NMODES; m++) {
		/* a mode the BPF side does not implement yet still sends every 4 KiB record */
		if (m && ours[m].delivered >= 2 * runs * ROUNDS) {
			bench_note("item 1: %s mode: every record still reaches the ring buffer (the BPF "
				   "side does not implement this mode yet): not reported", modes[m].name);
			continue;
		}
		snprintf(figure, sizeof(figure), "map handler, %s mode", modes[m].name);
		bench_row(1, figure, ours[m].map_ns, "ns/event", "bpftrace", bt.map_ns, "lower",
			  "<=100");
		snprintf(figure, sizeof(figure), "unmap handler, %s mode", modes[m].name);
		bench_row(1, figure, ours[m].unmap_ns, "ns/event", "bpftrace", bt.unmap_ns, "lower",
			  "<=100");
	}
	if (have_peer) {
		bpftrace_peer_stop(&peer);
		bench_note("item 1: bpftrace 0.17's own code for the one-liner (tags %s the running "
			   "bpftrace's), run as raw_tp into its perf buffer; it printed %llu lines, "
			   "lost %llu", peer.tags_match ? "equal" : "DIFFER from",
			   (unsigned long long)peer.lines, (unsigned long long)peer.lost);
	}
	bench_note("item 1: best of %d rounds of %llu BPF_PROG_TEST_RUNs per program, 4 KiB map/unmap; "
		   "kernel run_time_ns/run_cnt (BPF_ENABLE_STATS)", ROUNDS,
		   (unsigned long long)runs);
	ret = 0;
cleanup:
	for (size_t m = 0; m < NMODES; m++)
		bpf_capture_close(ours[m].cap);
	close(stats_fd);
	return ret;
}
