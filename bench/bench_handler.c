/* Item 1 of `make bench`: what the BPF handlers cost per event, by the kernel's own accounting
 * (BPF_ENABLE_STATS: run_time_ns / run_cnt of the program), for our raw_tp map and unmap handlers
 * in each capture mode and for bpftrace's code for the equivalent one-liner (bpftrace_peer.h),
 * both driven by BPF_PROG_TEST_RUN with the same arguments, and for the floor under them (an
 * empty program, one clock read). raw_tp test runs take no repeat count, so each event is one
 * test run; the kernel times only the program, not the syscall. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "bench/bpftrace_peer.h"
#include "bench/raw_plan.h"
#include "bench/rows.h"
#include "tracer/aggregates.h"
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

/* The floor under every handler's figure, measured the same way: an empty raw_tp program
 * (the kernel's timing of a run and the dispatch) in map_fd, one that only reads the clock in
 * unmap_fd. Built from instructions: nothing to compile. */
static int load_floor(struct subject *s)
{
	static const struct bpf_insn empty[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static const struct bpf_insn clock_read[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ktime_get_ns },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	s->map_fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "floor_empty", "GPL", empty,
				  sizeof(empty) / sizeof(empty[0]), NULL);
	s->unmap_fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "floor_clock", "GPL", clock_read,
				    sizeof(clock_read) / sizeof(clock_read[0]), NULL);
	if (s->map_fd < 0 || s->unmap_fd < 0) {
		fprintf(stderr, "bench_handler: loading the floor programs failed: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t runs = bench_env_ull("BENCH_HANDLER_RUNS", 100000);
	const char *bt_out = argv[1];
	struct subject ours[BENCH_NMODES] = {}, bt = { .map_ns = NAN, .unmap_ns = NAN };
	struct subject floor_progs = { .map_fd = -1, .unmap_fd = -1, .map_ns = NAN,
				       .unmap_ns = NAN };
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
	for (size_t m = 0; m < BENCH_NMODES; m++)
		if (load_ours(&ours[m], &plan, bench_modes[m]))
			goto cleanup;
	/* BENCH_NO_PEER=1 (bench/run --profile): ours alone, so that the profile is ours */
	have_peer = !bench_env_ull("BENCH_NO_PEER", 0) &&
		    !bpftrace_peer_start(&peer, bt_out, -1, 4096, err, sizeof(err));
	if (!have_peer && !bench_env_ull("BENCH_NO_PEER", 0))
		bench_note("item 1: no bpftrace peer: %s", err);
	bt.map_fd = have_peer ? peer.map_fd : -1;
	bt.unmap_fd = have_peer ? peer.unmap_fd : -1;
	if (load_floor(&floor_progs))
		goto cleanup;
	for (int round = 0; round < ROUNDS; round++) {
		measure(&floor_progs, 0, runs);
		for (size_t m = 0; m < BENCH_NMODES; m++)
			measure(&ours[m], 0, runs);
		if (have_peer)
			measure(&bt, 1, runs);
	}
	for (size_t m = 0; m < BENCH_NMODES; m++) {
		const char *mode = capture_mode_name(bench_modes[m]);

		snprintf(figure, sizeof(figure), "map handler, %s mode", mode);
		bench_row(1, figure, ours[m].map_ns, "ns/event", "bpftrace", bt.map_ns, "lower",
			  "<=100");
		snprintf(figure, sizeof(figure), "unmap handler, %s mode", mode);
		bench_row(1, figure, ours[m].unmap_ns, "ns/event", "bpftrace", bt.unmap_ns, "lower",
			  "<=100");
	}
	bench_row(1, "floor: an empty raw_tp program", floor_progs.map_ns, "ns/event", NULL, NAN,
		  "lower", NULL);
	bench_row(1, "floor: one bpf_ktime_get_ns()", floor_progs.unmap_ns, "ns/event", NULL, NAN,
		  "lower", NULL);
	bench_note("item 1: the floor rows are what the kernel's own timing reports here for a "
		   "program that does nothing and for one that only reads the clock every record "
		   "is stamped with: the part of each handler's figure no handler can avoid");
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
	for (size_t m = 0; m < BENCH_NMODES; m++)
		bpf_capture_close(ours[m].cap);
	if (floor_progs.map_fd >= 0)
		close(floor_progs.map_fd);
	if (floor_progs.unmap_fd >= 0)
		close(floor_progs.unmap_fd);
	close(stats_fd);
	return ret;
}
