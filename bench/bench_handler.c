/* Item 1 of `make bench`: what the BPF handlers cost per event, by the kernel's own accounting
 * (BPF_ENABLE_STATS: run_time_ns / run_cnt of the program), for our raw_tp map and unmap handlers
 * in each capture mode and for bpftrace's code for the equivalent one-liner (bpftrace_peer.h).
 * raw_tp test runs take no repeat count, so the handlers are measured two ways:
 * - repeated, as the "BPF_PROG_TEST_RUN with repeat" times a loop: our replay program
 *   (bpf/replay.h) runs the handlers' own code on REPLAY_PER_RUN events per test run, and its run
 *   time over those events is the figure with the target;
 * - one event per test run, beside bpftrace's code driven the same way with the same arguments
 *   (its code cannot be looped): the kernel brackets each run with two clock reads, so what an
 *   empty program measures is taken off, and each run starts cold (its own syscall).
 * The counting modes are measured as the recorder runs after its first flush, with their classes
 * in their slots (bpf/iommutrace.h), and before it, in the hash. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench/bpftrace_peer.h"
#include "bpf/replay.h"
#include "bench/raw_plan.h"
#include "bench/rows.h"
#include <stdbool.h>
#include "tracer/aggregates.h"
#include "tracer/bpf_capture.h"
#include "tracer/probe_plan.h"

#define BATCH 1000
/* the repeated figure: events per test run of replay_map_unmap (its most), and how many events
 * between drains of the ring buffer (far below its 16 MiB: every event takes the record path) */
#define REPLAY_PER_RUN IT_REPLAY_MAX_BATCH
#define REPLAY_DRAIN_EVENTS 8192
/* our ring buffers, the recorder's default size, and the records that fill one: each is written
 * through once before the rounds, as a recorder's is after its first 16 MiB (a page written for
 * the first time costs more, most in a VM, and would inflate the first rounds) */
#define RING_BYTES (16u << 20)
#define RING_RECORDS (RING_BYTES / IT_RECORD_BYTES)
#define ROUNDS 4
/* the paced rounds: runs per round, and the pause after each run */
#define PACED_RUNS 5000
#define PACED_GAP_US 100

/* 4 KiB at one IOVA: the NVMe churn case (below the threshold mode's 2 MiB) */
static const uint64_t map_args[] = { 0x100000000ull, 0x200000000ull, 4096 };
static const uint64_t unmap_args[] = { 0x100000000ull, 4096, 4096 };
/* the same, where a tracepoint program reads them: after the 8-byte common header */
static const uint64_t bt_map_args[] = { 0, 0x100000000ull, 0x200000000ull, 4096 };
static const uint64_t bt_unmap_args[] = { 0, 0x100000000ull, 4096, 4096 };

struct subject {
	int map_fd, unmap_fd;
	int replay_fd; /* ours: replay_map_unmap */
	struct bpf_capture *cap; /* ours: drained between batches; NULL: bpftrace */
	uint64_t delivered;
	uint64_t replayed; /* events of the replay storm run so far */
	uint64_t replay_delivered; /* of those, the records drained after replay_cost's runs */
	double map_ns, unmap_ns; /* best round */
	double replay_ns, replay_hash_ns; /* ours, per event repeated; counting: before the flush */
	double map_hash_ns, unmap_hash_ns; /* counting modes: best round before the flush */
	double paced_map_ns; /* per-event and bpftrace: best paced round */
	struct ring_buffer *rb; /* the floor programs': drained between batches */
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
	if (s->rb) {
		ring_buffer__consume(s->rb);
		return;
	}
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

/* ns per run of fd since its statistics read ns0 and cnt0, or NAN when it did not run. */
static double ns_per_run_since(int fd, __u64 ns0, __u64 cnt0)
{
	__u64 ns1, cnt1;

	if (run_stats(fd, &ns1, &cnt1) || cnt1 == cnt0)
		return NAN;
	return (double)(ns1 - ns0) / (double)(cnt1 - cnt0);
}

/* ns per run of fd over n test runs with args, or NAN. gap_us 0: back to back, our ring buffer
 * drained every BATCH runs; else a pause of gap_us after each run and no draining here (a reader
 * thread drains it). */
static double runs_cost(struct subject *s, int fd, const uint64_t *args, size_t nargs, uint64_t n,
			unsigned int gap_us)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = nargs * 8);
	__u64 ns0, cnt0;

	if (run_stats(fd, &ns0, &cnt0))
		return NAN;
	for (uint64_t i = 0; i < n; i++) {
		if (bpf_prog_test_run_opts(fd, &opts)) {
			fprintf(stderr, "bench_handler: BPF_PROG_TEST_RUN failed: %s\n",
				strerror(errno));
			return NAN;
		}
		if (gap_us)
			usleep(gap_us);
		else if (i % BATCH == BATCH - 1)
			drain(s);
	}
	if (!gap_us)
		drain(s);
	return ns_per_run_since(fd, ns0, cnt0);
}

static double cost(struct subject *s, int fd, const uint64_t *args, size_t nargs, uint64_t n)
{
	return runs_cost(s, fd, args, nargs, n, 0);
}

/* ns per event of our handlers over at least n events of the replay storm (half maps, half
 * unmaps), REPLAY_PER_RUN per test run, the storm going on from where the last call left it;
 * NAN when a run fails. The two clock reads around each run are spread over its events. */
static double replay_cost(struct subject *s, uint64_t n)
{
	uint64_t runs = (n + REPLAY_PER_RUN - 1) / REPLAY_PER_RUN, delivered;
	__u64 ns0, cnt0;

	if (run_stats(s->replay_fd, &ns0, &cnt0))
		return NAN;
	drain(s);
	delivered = s->delivered;
	for (uint64_t i = 0; i < runs; i++) {
		uint64_t args[2] = { s->replayed, REPLAY_PER_RUN };
		LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));

		if (bpf_prog_test_run_opts(s->replay_fd, &opts)) {
			fprintf(stderr,
				"bench_handler: BPF_PROG_TEST_RUN of replay_map_unmap failed: "
				"%s\n",
				strerror(errno));
			return NAN;
		}
		s->replayed += REPLAY_PER_RUN;
		if ((i + 1) % (REPLAY_DRAIN_EVENTS / REPLAY_PER_RUN) == 0)
			drain(s);
	}
	drain(s);
	s->replay_delivered += s->delivered - delivered;
	return ns_per_run_since(s->replay_fd, ns0, cnt0) / REPLAY_PER_RUN;
}

/* The reader of our ring buffer in the paced rounds, as the recorder reads it: a thread
 * waiting in bpf_capture_poll with the recorder's 100 ms timeout until told to stop. */
struct waiting_reader {
	struct bpf_capture *cap;
	atomic_bool stop;
	uint64_t delivered;
};

static void *waiting_reader_main(void *arg)
{
	struct waiting_reader *r = arg;

	while (!atomic_load(&r->stop))
		if (bpf_capture_poll(r->cap, 100, count_record, &r->delivered) < 0)
			break;
	return NULL;
}

/* ns per run of fd over n test runs with a pause of PACED_GAP_US after each, so that the
 * reader catches up and waits between records, as it does at the rates of real I/O: then a
 * record can wake it, and caches are no longer warm from the run before. Ours (s->cap) with a
 * reader thread waiting in poll; bpftrace (s->cap NULL) with its own reader running. NAN when
 * a run or the reader's start fails. */
static double paced_cost(struct subject *s, int fd, const uint64_t *args, size_t nargs, uint64_t n)
{
	struct waiting_reader reader = { .cap = s->cap };
	pthread_t thread;
	double ns;

	if (!s->cap)
		return runs_cost(s, fd, args, nargs, n, PACED_GAP_US);
	drain(s);
	if (pthread_create(&thread, NULL, waiting_reader_main, &reader)) {
		fprintf(stderr, "bench_handler: cannot start the reader thread\n");
		return NAN;
	}
	usleep(10000); /* into its first wait */
	ns = runs_cost(s, fd, args, nargs, n, PACED_GAP_US);
	atomic_store(&reader.stop, true);
	pthread_join(thread, NULL);
	s->delivered += reader.delivered;
	return ns;
}

static void keep_best(double *best, double ns)
{
	if (isnan(*best) || ns < *best)
		*best = ns;
}

/* Counting modes: publishes the classes counted so far into their slots, as the recorder's
 * flushes do (aggregates_flush). */
static int publish_slots(struct subject *s)
{
	struct agg_maps maps = bpf_capture_agg_maps(s->cap);
	struct agg_snapshot snap = { 0 };
	bool taken[IT_AGG_SLOTS] = { false };
	int ret = agg_snapshot_read(&maps, NULL, &snap);

	if (!ret)
		ret = agg_slots_publish(&maps, &snap, taken);
	agg_snapshot_free(&snap);
	if (ret < 0)
		fprintf(stderr, "bench_handler: publishing the slots failed: %s\n", strerror(-ret));
	return ret < 0 ? -1 : 0;
}

/* One round of n runs of each program; a counting mode's first half of the rounds is measured
 * before its slots are published (in the hash), the second half after. */
static int measure(struct subject *s, int bpftrace, uint64_t n, bool counting, int round)
{
	const uint64_t *margs = bpftrace ? bt_map_args : map_args;
	const uint64_t *uargs = bpftrace ? bt_unmap_args : unmap_args;
	size_t nargs = bpftrace ? 4 : 3;

	if (counting && round < ROUNDS / 2) {
		keep_best(&s->map_hash_ns, cost(s, s->map_fd, margs, nargs, n));
		keep_best(&s->unmap_hash_ns, cost(s, s->unmap_fd, uargs, nargs, n));
		keep_best(&s->replay_hash_ns, replay_cost(s, n));
		return round == ROUNDS / 2 - 1 ? publish_slots(s) : 0;
	}
	keep_best(&s->map_ns, cost(s, s->map_fd, margs, nargs, n));
	keep_best(&s->unmap_ns, cost(s, s->unmap_fd, uargs, nargs, n));
	if (!bpftrace)
		keep_best(&s->replay_ns, replay_cost(s, n));
	if (!counting)
		keep_best(&s->paced_map_ns, paced_cost(s, s->map_fd, margs, nargs, PACED_RUNS));
	return 0;
}

static int load_ours(struct subject *s, struct probe_plan *plan, enum capture_mode mode)
{
	char err[256];

	s->cap = bpf_capture_load(plan,
				  &(struct bpf_capture_opts){ .mode = mode,
							      .replay = true,
							      .ringbuf_bytes = RING_BYTES },
				  err, sizeof(err));
	if (!s->cap) {
		fprintf(stderr, "bench_handler: %s\n", err);
		return -1;
	}
	s->map_fd = bpf_capture_prog_fd(s->cap, "raw_map");
	s->unmap_fd = bpf_capture_prog_fd(s->cap, "raw_unmap");
	s->replay_fd = bpf_capture_prog_fd(s->cap, "replay_map_unmap");
	s->map_ns = s->unmap_ns = s->map_hash_ns = s->unmap_hash_ns = s->paced_map_ns = NAN;
	s->replay_ns = s->replay_hash_ns = NAN;
	return s->map_fd >= 0 && s->unmap_fd >= 0 && s->replay_fd >= 0 ? 0 : -1;
}

/* The parts of every handler's figure that no handler avoids, measured the same way by programs
 * built from instructions (nothing to compile): an empty program (the kernel's timing of a run,
 * taken off every figure), one clock read (every record's timestamp), one ring buffer record
 * reserved and submitted (every record's way out, drained like ours); and each of the two
 * FLOOR_REPEAT times in one run, whose difference from one says what a further one costs in a
 * run already under way, against the first of a run, which starts cold. */
enum floor_id { FLOOR_EMPTY, FLOOR_CLOCK, FLOOR_RINGBUF, FLOOR_CLOCKS, FLOOR_RINGBUFS, FLOORS };
#define FLOOR_REPEAT 10
/* instructions of one ring buffer record (ld_imm64 takes two) */
#define RECORD_INSNS 9

struct floors {
	struct subject drainer; /* cap NULL, rb the ring buffer's reader */
	int ringbuf_fd;
	int fd[FLOORS];
	double ns[FLOORS]; /* best round */
};

static int discard_record(void *ctx, void *data, size_t size)
{
	return 0;
}

/* Appends one bpf_ktime_get_ns() call at *n. */
static void emit_clock(struct bpf_insn *insn, size_t *n)
{
	insn[(*n)++] =
		(struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ktime_get_ns };
}

/* Appends RECORD_INSNS instructions at *n: reserve a record of our size in the ring buffer
 * ringbuf_fd and submit it (nothing when the buffer is full). */
static void emit_record(struct bpf_insn *insn, size_t *n, int ringbuf_fd)
{
	const struct bpf_insn record[RECORD_INSNS] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM,
		  .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = ringbuf_fd },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K,
		  .dst_reg = BPF_REG_2,
		  .imm = sizeof(struct it_event) },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ringbuf_reserve },
		{ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = BPF_REG_0, .off = 3, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ringbuf_submit },
	};

	memcpy(insn + *n, record, sizeof(record));
	*n += RECORD_INSNS;
}

/* Loads a raw_tp program of clocks clock reads and records ring buffer records, returning 0. */
static int load_floor(struct floors *f, enum floor_id id, const char *name, int clocks, int records)
{
	struct bpf_insn insn[FLOOR_REPEAT * RECORD_INSNS + 2];
	size_t n = 0;

	for (int i = 0; i < clocks; i++)
		emit_clock(insn, &n);
	for (int i = 0; i < records; i++)
		emit_record(insn, &n, f->ringbuf_fd);
	insn[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 };
	insn[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	f->fd[id] = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, name, "GPL", insn, n, NULL);
	return f->fd[id] < 0 ? -1 : 0;
}

static int load_floors(struct floors *f)
{
	f->ringbuf_fd =
		bpf_map_create(BPF_MAP_TYPE_RINGBUF, "floor_ringbuf", 0, 0, RING_BYTES, NULL);
	if (f->ringbuf_fd < 0)
		goto fail;
	f->drainer.rb = ring_buffer__new(f->ringbuf_fd, discard_record, NULL, NULL);
	if (!f->drainer.rb || load_floor(f, FLOOR_EMPTY, "floor_empty", 0, 0) ||
	    load_floor(f, FLOOR_CLOCK, "floor_clock", 1, 0) ||
	    load_floor(f, FLOOR_RINGBUF, "floor_record", 0, 1) ||
	    load_floor(f, FLOOR_CLOCKS, "floor_clocks", FLOOR_REPEAT, 0) ||
	    load_floor(f, FLOOR_RINGBUFS, "floor_records", 0, FLOOR_REPEAT))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "bench_handler: loading the floor programs failed: %s\n", strerror(errno));
	return -1;
}

static void free_floors(struct floors *f)
{
	ring_buffer__free(f->drainer.rb);
	for (int i = 0; i < FLOORS; i++)
		if (f->fd[i] >= 0)
			close(f->fd[i]);
	if (f->ringbuf_fd >= 0)
		close(f->ringbuf_fd);
}

int main(int argc, char **argv)
{
	uint64_t runs = bench_env_ull("BENCH_HANDLER_RUNS", 100000);
	const char *bt_out = argv[1];
	struct subject ours[BENCH_NMODES] = {},
		       bt = { .map_ns = NAN, .unmap_ns = NAN, .paced_map_ns = NAN };
	struct floors floors = { .ringbuf_fd = -1 };
	double timing, clock_first, clock_further;
	struct bpftrace_peer peer = {};
	struct probe_plan plan;
	char err[256], figure[96];
	int stats_fd, ret = 1, have_peer = 0;

	for (int i = 0; i < FLOORS; i++) {
		floors.fd[i] = -1;
		floors.ns[i] = NAN;
	}
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
	if (load_floors(&floors))
		goto cleanup;
	/* the ring buffers written through once (the counting modes write none) */
	cost(&floors.drainer, floors.fd[FLOOR_RINGBUFS], map_args, 3, RING_RECORDS / FLOOR_REPEAT);
	for (size_t m = 0; m < BENCH_NMODES; m++)
		if (bench_modes[m] == CAPTURE_PER_EVENT)
			replay_cost(&ours[m], RING_RECORDS);
	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < FLOORS; i++)
			keep_best(&floors.ns[i],
				  cost(&floors.drainer, floors.fd[i], map_args, 3, runs));
		for (size_t m = 0; m < BENCH_NMODES; m++)
			if (measure(&ours[m], 0, runs, bench_modes[m] != CAPTURE_PER_EVENT, round))
				goto cleanup;
		if (have_peer)
			measure(&bt, 1, runs, false, round);
	}
	/* every figure net of the timing: what the empty program measured */
	timing = floors.ns[FLOOR_EMPTY];
	clock_first = floors.ns[FLOOR_CLOCK] - timing;
	clock_further = (floors.ns[FLOOR_CLOCKS] - floors.ns[FLOOR_CLOCK]) / (FLOOR_REPEAT - 1);
	for (size_t m = 0; m < BENCH_NMODES; m++) {
		const char *mode = capture_mode_name(bench_modes[m]);
		bool counting = bench_modes[m] != CAPTURE_PER_EVENT;

		snprintf(figure, sizeof(figure), "map and unmap handlers, %s mode, %d per test run",
			 mode, REPLAY_PER_RUN);
		bench_row(1, figure, ours[m].replay_ns, "ns/event", NULL, NAN, "lower", "<=100");
		if (counting) {
			snprintf(figure, sizeof(figure),
				 "map and unmap handlers, %s mode, %d per "
				 "test run, before the first flush",
				 mode, REPLAY_PER_RUN);
			bench_row(1, figure, ours[m].replay_hash_ns, "ns/event", NULL, NAN, "lower",
				  NULL);
		}
		snprintf(figure, sizeof(figure), "map handler, %s mode, one per test run", mode);
		bench_row(1, figure, ours[m].map_ns - timing, "ns/event", "bpftrace",
			  bt.map_ns - timing, "lower", NULL);
		snprintf(figure, sizeof(figure), "unmap handler, %s mode, one per test run", mode);
		bench_row(1, figure, ours[m].unmap_ns - timing, "ns/event", "bpftrace",
			  bt.unmap_ns - timing, "lower", NULL);
		if (!counting) {
			snprintf(figure, sizeof(figure),
				 "map handler, %s mode, paced, reader waiting", mode);
			bench_row(1, figure, ours[m].paced_map_ns - timing, "ns/event", "bpftrace",
				  bt.paced_map_ns - timing, "lower", NULL);
			continue;
		}
		snprintf(figure, sizeof(figure),
			 "map handler, %s mode, one per test run, before "
			 "the first flush",
			 mode);
		bench_row(1, figure, ours[m].map_hash_ns - timing, "ns/event", NULL, NAN, "lower",
			  NULL);
		snprintf(figure, sizeof(figure),
			 "unmap handler, %s mode, one per test run, before "
			 "the first flush",
			 mode);
		bench_row(1, figure, ours[m].unmap_hash_ns - timing, "ns/event", NULL, NAN, "lower",
			  NULL);
	}
	bench_row(1, "bpf_ktime_get_ns(), the first of a test run", clock_first, "ns/event", NULL,
		  NAN, "lower", NULL);
	bench_row(1, "bpf_ktime_get_ns(), each further one in the same run", clock_further,
		  "ns/event", NULL, NAN, "lower", NULL);
	bench_row(1, "ring buffer record reserved and submitted, the first of a test run",
		  floors.ns[FLOOR_RINGBUF] - timing, "ns/event", NULL, NAN, "lower", NULL);
	bench_row(1, "ring buffer record reserved and submitted, each further one in the same run",
		  (floors.ns[FLOOR_RINGBUFS] - floors.ns[FLOOR_RINGBUF]) / (FLOOR_REPEAT - 1),
		  "ns/event", NULL, NAN, "lower", NULL);
	bench_row(1, "the timing itself: an empty raw_tp program", timing, "ns/event", NULL, NAN,
		  "lower", NULL);
	bench_note("item 1: %d per test run (the target's figure, as a test run with a repeat "
		   "count times its loop): replay_map_unmap runs the handlers' own code on %d events per "
		   "BPF_PROG_TEST_RUN, 4 KiB maps and their unmaps in turn at moving IOVAs "
		   "(bpf/replay.h), the ring buffer drained every %d; its run time over those "
		   "events. Per-event mode: %llu records delivered of %llu events%s",
		   REPLAY_PER_RUN, REPLAY_PER_RUN, REPLAY_DRAIN_EVENTS,
		   (unsigned long long)ours[0].replay_delivered,
		   (unsigned long long)ours[0].replayed, /* bench_modes[0] */
		   ours[0].replay_delivered == ours[0].replayed ?
			   "" :
			   " (FEWER: some runs took the full buffer's cheaper path)");
	bench_note("item 1: one per test run (beside bpftrace, whose code cannot be looped): "
		   "each figure is net of the timing: the kernel brackets each test run with two "
		   "clock reads, and what it reports for an empty program (%.1f ns here) is taken "
		   "off every figure, ours and bpftrace's; as measured, per-event map %.1f, unmap "
		   "%.1f ns. Each run is a syscall of its own and starts cold: the first clock read "
		   "of a run costs %.1f ns here, each further one %.1f",
		   timing, ours[0].map_ns, ours[0].unmap_ns, clock_first,
		   clock_further); /* bench_modes[0] */
	bench_note(
		"item 1: the clock read and ring buffer rows are what every record costs, "
		"whatever it holds; the counting modes do neither. They count a class in its slot once a flush of "
		"the recorder (every second) has published it, in the per-CPU hash before");
	bench_note("item 1: paced: %d runs per round with %d us after each, our reader waiting "
		   "in bpf_capture_poll(100 ms) as the recorder's does (bpftrace's: its own): the "
		   "reader has caught up before each record, as at the rates of real I/O, and "
		   "caches are no longer warm from the run before. Our handlers wake the reader "
		   "once per sixteenth of the ring buffer, not per record",
		   PACED_RUNS, PACED_GAP_US);
	if (have_peer) {
		bpftrace_peer_stop(&peer);
		bench_note("item 1: bpftrace 0.17's own code for the one-liner (tags %s the running "
			   "bpftrace's), run as raw_tp into its perf buffer; it printed %llu lines, "
			   "lost %llu",
			   peer.tags_match ? "equal" : "DIFFER from",
			   (unsigned long long)peer.lines, (unsigned long long)peer.lost);
	}
	bench_note("item 1: best of %d rounds of %llu BPF_PROG_TEST_RUNs per program, and of "
		   "%llu events %d per run (counting modes: best of the first %d before the flush, of "
		   "the other %d after), 4 KiB map/unmap; kernel run_time_ns/run_cnt "
		   "(BPF_ENABLE_STATS)",
		   ROUNDS, (unsigned long long)runs, (unsigned long long)runs, REPLAY_PER_RUN,
		   ROUNDS / 2, ROUNDS - ROUNDS / 2);
	ret = 0;
cleanup:
	if (ret && have_peer)
		bpftrace_peer_stop(&peer);
	for (size_t m = 0; m < BENCH_NMODES; m++)
		bpf_capture_close(ours[m].cap);
	free_floors(&floors);
	close(stats_fd);
	return ret;
}
