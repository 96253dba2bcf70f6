/* Item 2 of `make bench`: the highest event rate captured into a database file with zero loss,
 * and the rate at which loss starts, through the recorder's real path (bpf_capture_poll ->
 * event_writer -> SQLite, one consumer thread on CPU 0) with a generator thread on CPU 1 driving
 * the map/unmap handlers with the storm of bpf/replay.h (4 KiB maps and unmaps at moving IOVAs),
 * paced at a set rate: ours through replay_map_unmap, REPLAY_BATCH events of the real handlers
 * per BPF_PROG_TEST_RUN, bpftrace's one event per test run of its raw_tp programs. The rate
 * steps up by 1.5x until loss (or until the generator cannot go faster), then bisects. Per
 * capture mode, and for bpftrace (bpftrace_peer.h, its output to a file). Also the recorder's
 * peak RSS. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <bpf/bpf.h>
#include "bench/bpftrace_peer.h"
#include "bench/raw_plan.h"
#include "bench/rows.h"
#include "bpf/replay.h"
#include "common/clock.h"
#include "common/db.h"
#include "common/db_checkpoint.h"
#include "tracer/aggregates.h"
#include "tracer/bpf_capture.h"
#include "tracer/event_writer.h"
#include "tracer/probe_plan.h"
#include "tracer/recorder.h"
#include "cli/db_schema.h"

#define CONSUMER_CPU 0
#define GENERATOR_CPU 1
#define COMMIT_EVERY_S 0.2
#define FIRST_RATE 100000.0
#define MAX_STEPS 14
#define BISECTIONS 3
/* events per test run of replay_map_unmap: at 2 M events/s a run every 16 us, fine enough a step
 * for the pacing, and the test run's own cost (a syscall) spread thin */
#define REPLAY_BATCH 32
/* events test-run one at a time (bpftrace's) between two looks at the clock */
#define PACE_EVERY 32
/* bpftrace -B full leaves at most its stdio buffer unwritten until it exits: a few hundred lines */
#define BPFTRACE_UNFLUSHED_LINES 512

/* Shared by the consumer's thread and the generator's: on cache lines of its own (aligned), and
 * written by the generator only as it stops. When it shared a line with the consumer's counters
 * on the same stack, the generator's pacing loop reading it (and a store after each test run)
 * cost the consumer that line taken back from the other CPU for each event it counted. */
struct __attribute__((aligned(64))) generator {
	int replay_fd; /* ours: replay_map_unmap; -1: map_fd/unmap_fd per event */
	int map_fd, unmap_fd;
	int tracepoint_ctx; /* bpftrace's code: arguments after an 8-byte header */
	double rate, seconds;
	uint64_t sent;
	double elapsed;
	volatile int done;
	int failed;
};

struct step {
	double achieved; /* events/s the generator reached */
	uint64_t sent, delivered, lost;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Waits until event i is due at g->rate; returns 0, or 1 once g->seconds are over. */
static int pace(struct generator *g, uint64_t i, double start)
{
	double t = bench_now() - start;

	while (i > g->rate * t && t < g->seconds)
		t = bench_now() - start;
	return t >= g->seconds;
}

/* Events first to first + count - 1 of the storm; returns 0 or an errno. */
static int replay(struct generator *g, uint64_t first, uint64_t count)
{
	uint64_t args[4] = {}, *a = args + (g->tracepoint_ctx ? 1 : 0);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args,
		    .ctx_size_in = (g->tracepoint_ctx ? 4 : 3) * 8);

	if (g->replay_fd >= 0) {
		args[0] = first;
		args[1] = count;
		opts.ctx_size_in = 2 * 8;
		return bpf_prog_test_run_opts(g->replay_fd, &opts) ? errno : 0;
	}
	for (uint64_t n = first; n < first + count; n++) {
		a[0] = IT_REPLAY_IOVA(n);
		a[1] = IT_REPLAY_UNMAP(n) ? IT_REPLAY_SIZE : IT_REPLAY_PADDR(n);
		a[2] = IT_REPLAY_SIZE;
		if (bpf_prog_test_run_opts(IT_REPLAY_UNMAP(n) ? g->unmap_fd : g->map_fd, &opts))
			return errno;
	}
	return 0;
}

static void *generate(void *arg)
{
	struct generator *g = arg;
	uint64_t batch = g->replay_fd >= 0 ? REPLAY_BATCH : PACE_EVERY, i;
	double start = bench_now();

	pin(GENERATOR_CPU);
	for (i = 0; !pace(g, i, start); i += batch) {
		int err = replay(g, i, batch);

		if (err) {
			g->failed = err;
			break;
		}
	}
	g->sent = i;
	g->elapsed = bench_now() - start;
	g->done = 1;
	return NULL;
}

/* ours */
struct capture_run {
	struct bpf_capture *cap;
	struct event_writer *w;
	struct aggregates *agg; /* counting modes: their counts, flushed as record does */
	uint64_t delivered, lost;
	int failed;
};

static int on_event(const struct it_event *e, void *ctx)
{
	struct capture_run *r = ctx;

	r->delivered++;
	if (event_writer_add(r->w, e)) {
		r->failed = 1;
		return -1;
	}
	return 0;
}

static int add_loss(uint32_t cpu, uint32_t kind, uint64_t lost, void *ctx)
{
	*(uint64_t *)ctx += lost;
	return 0;
}

static uint64_t total_lost(struct bpf_capture *cap)
{
	uint64_t lost = 0;

	bpf_capture_losses(cap, add_loss, &lost);
	return lost;
}

static int start_generator(pthread_t *th, struct generator *g)
{
	g->done = 0;
	g->failed = 0;
	if (pthread_create(th, NULL, generate, g)) {
		fprintf(stderr, "bench_capture: cannot start the generator thread\n");
		return -1;
	}
	return 0;
}

static int finish_generator(pthread_t th, struct generator *g, struct step *s)
{
	pthread_join(th, NULL);
	if (g->failed) {
		fprintf(stderr, "bench_capture: BPF_PROG_TEST_RUN failed: %s\n",
			strerror(g->failed));
		return -1;
	}
	s->sent = g->sent;
	s->achieved = g->sent / g->elapsed;
	return 0;
}

/* The calls counted so far, as of a flush now (0 in per-event mode); r->failed set on an error. */
static uint64_t flush_counted(struct capture_run *r)
{
	if (!r->agg)
		return 0;
	if (aggregates_flush(r->agg, clock_ns(CLOCK_MONOTONIC)) < 0)
		r->failed = 1;
	return aggregates_calls(r->agg);
}

/* A step of ours: the events that reached the writer as records or were counted, against those
 * sent. */
static int step_ours(struct capture_run *r, struct generator *g, struct step *s)
{
	uint64_t delivered0 = r->delivered, counted0 = flush_counted(r), lost0 = total_lost(r->cap);
	double last_commit = bench_now(), last_flush = last_commit;
	int idle = 0;
	pthread_t th;

	if (start_generator(&th, g))
		return -1;
	while (!r->failed && (!g->done || idle < 3)) {
		int n = bpf_capture_poll(r->cap, g->done ? 50 : 10, on_event, r);

		idle = g->done && n == 0 ? idle + 1 : 0;
		if (bench_now() - last_commit >= COMMIT_EVERY_S) {
			if (event_writer_commit(r->w))
				r->failed = 1;
			last_commit = bench_now();
		}
		if (bench_now() - last_flush >= RECORDER_FLUSH_EVERY_NS / 1e9) {
			flush_counted(r);
			last_flush = bench_now();
		}
	}
	if (finish_generator(th, g, s) || r->failed)
		return -1;
	s->delivered = r->delivered - delivered0 + flush_counted(r) - counted0;
	if (r->failed || event_writer_commit(r->w))
		return -1;
	s->lost = total_lost(r->cap) - lost0;
	return 0;
}

static int step_bpftrace(struct bpftrace_peer *p, struct generator *g, struct step *s)
{
	uint64_t lines0 = p->lines, lost0 = p->lost, last = ~0ull;
	pthread_t th;

	if (start_generator(&th, g) || finish_generator(th, g, s))
		return -1;
	/* until bpftrace has written all it will (its output stops growing) */
	for (int stable = 0; stable < 3;) {
		usleep(100 * 1000);
		bpftrace_peer_read_output(p);
		stable = p->lines == last ? stable + 1 : 0;
		last = p->lines;
	}
	s->delivered = p->lines - lines0;
	s->lost = p->lost - lost0;
	return 0;
}

/* No event counted lost, and at most tolerance events missing */
static int lossless(const struct step *s, uint64_t tolerance)
{
	return !s->lost && (s->delivered >= s->sent || s->sent - s->delivered <= tolerance);
}

struct search {
	double lossless_rate; /* highest achieved rate with no loss */
	double lossy_rate; /* lowest achieved rate with loss; 0: none seen */
	int generator_limited;
};

typedef int (*step_fn)(void *ctx, struct generator *g, struct step *s);

static int search_rates(step_fn step, void *ctx, struct generator *g, uint64_t tolerance,
			const char *who, struct search *out)
{
	double ok_req = 0, bad_req = 0;
	int limited = 0;
	struct step s;

	memset(out, 0, sizeof(*out));
	g->rate = FIRST_RATE;
	for (int i = 0; i < MAX_STEPS + BISECTIONS; i++) {
		memset(&s, 0, sizeof(s));
		if (step(ctx, g, &s))
			return -1;
		fprintf(stderr,
			"bench_capture: %s: asked %.0f/s, sent %.0f/s, delivered %llu of %llu, "
			"lost %llu\n",
			who, g->rate, s.achieved, (unsigned long long)s.delivered,
			(unsigned long long)s.sent, (unsigned long long)s.lost);
		if (lossless(&s, tolerance)) {
			ok_req = g->rate;
			if (s.achieved > out->lossless_rate)
				out->lossless_rate = s.achieved;
			/* twice short of the asked rate: the generator's limit, not a passing stall
			 * of a CPU the other load took */
			limited = s.achieved < 0.9 * g->rate ? limited + 1 : 0;
			if (!bad_req && limited == 2) {
				out->generator_limited = 1;
				break;
			}
		} else {
			bad_req = g->rate;
			if (!out->lossy_rate || s.achieved < out->lossy_rate)
				out->lossy_rate = s.achieved;
		}
		if (!bad_req)
			g->rate *= 1.5;
		else if (i >= MAX_STEPS || bad_req - ok_req < 0.05 * bad_req)
			break;
		else
			g->rate = (ok_req + bad_req) / 2;
	}
	return 0;
}

static int step_ours_fn(void *ctx, struct generator *g, struct step *s)
{
	return step_ours(ctx, g, s);
}

static int step_bpftrace_fn(void *ctx, struct generator *g, struct step *s)
{
	return step_bpftrace(ctx, g, s);
}

/* Searches our rates in one mode, recording into dir/capture-MODE.db. */
static int run_ours(struct probe_plan *plan, size_t m, const char *dir, double seconds,
		    struct search *out)
{
	struct capture_run r = {};
	struct generator g = { .seconds = seconds };
	const char *mode = capture_mode_name(bench_modes[m]);
	char path[512], err[256];
	struct db_checkpointer *ckpt = NULL;
	sqlite3 *db = NULL;
	int64_t sid;
	int ret = -1;

	snprintf(path, sizeof(path), "%s/capture-%s.db", dir, mode);
	r.cap = bpf_capture_load(plan,
				 &(struct bpf_capture_opts){ .mode = bench_modes[m],
							     .replay = true },
				 err, sizeof(err));
	if (!r.cap) {
		fprintf(stderr, "bench_capture: %s\n", err);
		return -1;
	}
	g.replay_fd = bpf_capture_prog_fd(r.cap, "replay_map_unmap");
	if (g.replay_fd < 0) {
		fprintf(stderr, "bench_capture: replay_map_unmap was not loaded\n");
		goto out;
	}
	db = itdb_open(path, ITDB_CREATE_FORCE, &iommutrace_schema, err, sizeof(err));
	if (!db) {
		fprintf(stderr, "bench_capture: %s\n", err);
		goto out;
	}
	/* as record: checkpoints on a thread of their own (on the consumer's CPU, whose affinity
	 * it inherits) */
	ckpt = db_checkpointer_start(db, DB_CHECKPOINT_BYTES, err, sizeof(err));
	if (!ckpt) {
		fprintf(stderr, "bench_capture: %s\n", err);
		goto out;
	}
	if (itdb_session_begin(db,
			       &(struct itdb_session_info){ .kind = "record",
							    .capture = "bpf",
							    .trace_clock = "mono" },
			       &sid))
		goto out;
	r.w = event_writer_new(db, sid, NULL);
	if (!r.w)
		goto out;
	if (bench_modes[m] != CAPTURE_PER_EVENT) {
		struct agg_maps maps = bpf_capture_agg_maps(r.cap);

		r.agg = aggregates_new(db, sid, &maps);
		if (!r.agg)
			goto out;
	}
	ret = search_rates(step_ours_fn, &r, &g, 0, mode, out);
	if (!ret && event_writer_finish(r.w))
		ret = -1;
out:
	aggregates_free(r.agg);
	event_writer_free(r.w);
	db_checkpointer_stop(ckpt);
	itdb_close(db);
	bpf_capture_close(r.cap);
	return ret;
}

static double mib(long kib)
{
	return kib / 1024.0;
}

int main(int argc, char **argv)
{
	const char *dir = argv[1];
	double seconds = bench_env_ull("BENCH_STEP_MS", 2000) / 1000.0;
	struct search ours[BENCH_NMODES], bt = {};
	struct bpftrace_peer peer = {};
	struct probe_plan plan;
	struct rusage usage;
	char err[256], figure[96], bt_out[512];
	int have_peer, done[BENCH_NMODES] = {};
	long ours_rss_kib = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: bench_capture OUTPUT_DIR (bench/run runs it)\n");
		return 2;
	}
	if (bench_raw_plan("bench_capture", &plan))
		return 1;
	pin(CONSUMER_CPU);
	for (size_t m = 0; m < BENCH_NMODES; m++) {
		int ret = run_ours(&plan, m, dir, seconds, &ours[m]);

		if (ret < 0)
			return 1;
		done[m] = !ret;
		if (!m) {
			getrusage(RUSAGE_SELF, &usage);
			ours_rss_kib = usage.ru_maxrss;
		}
	}
	/* bpftrace: its reader on the consumer's CPU, a 16 MiB perf buffer like our ring buffer */
	snprintf(bt_out, sizeof(bt_out), "%s/capture-bpftrace.out", dir);
	/* BENCH_NO_PEER=1 (bench/run --profile): ours alone, so that the profile is ours */
	have_peer = !bench_env_ull("BENCH_NO_PEER", 0) &&
		    !bpftrace_peer_start(&peer, bt_out, CONSUMER_CPU, 4096, err, sizeof(err));
	if (!have_peer && !bench_env_ull("BENCH_NO_PEER", 0))
		bench_note("item 2: no bpftrace peer: %s", err);
	else if (have_peer) {
		struct generator g = { .replay_fd = -1,
				       .map_fd = peer.map_fd,
				       .unmap_fd = peer.unmap_fd,
				       .tracepoint_ctx = 1,
				       .seconds = seconds };

		if (search_rates(step_bpftrace_fn, &peer, &g, BPFTRACE_UNFLUSHED_LINES, "bpftrace",
				 &bt))
			have_peer = 0;
		bpftrace_peer_stop(&peer);
	}
	for (size_t m = 0; m < BENCH_NMODES; m++) {
		const char *mode = capture_mode_name(bench_modes[m]);

		if (!done[m])
			continue;
		snprintf(figure, sizeof(figure), "lossless capture into the DB, %s mode", mode);
		bench_row(2, figure, ours[m].lossless_rate, "events/s",
			  have_peer ? "bpftrace" : NULL, bt.lossless_rate, "higher",
			  m ? NULL : ">=1000000");
		if (ours[m].lossy_rate) {
			snprintf(figure, sizeof(figure), "loss starts, %s mode", mode);
			bench_row(2, figure, ours[m].lossy_rate, "events/s",
				  have_peer && bt.lossy_rate ? "bpftrace" : NULL, bt.lossy_rate,
				  "higher", NULL);
		}
		if (ours[m].generator_limited)
			bench_note("item 2: %s mode: no loss up to the generator's limit, %.0f events/s "
				   "(one generator core)",
				   mode, ours[m].lossless_rate);
	}
	if (have_peer && bt.generator_limited)
		bench_note("item 2: bpftrace: no loss up to the generator's limit, %.0f events/s",
			   bt.lossless_rate);
	bench_row(2, "recorder peak RSS, per-event capture", mib(ours_rss_kib), "MiB",
		  have_peer ? "bpftrace" : NULL, mib(peer.usage.ru_maxrss), "lower", NULL);
	bench_note("item 2: 2 CPUs here: consumer (writer into SQLite, with its checkpointer thread; "
		   "bpftrace's reader) on CPU %d, "
		   "generator (alternating 4 KiB map/unmap: ours %d events of the real handlers per "
		   "BPF_PROG_TEST_RUN of replay_map_unmap, bpftrace's one per test run of its "
		   "programs) on CPU %d; steps of %.1f s; 16 MiB ring buffer, 16 MiB per-CPU perf "
		   "buffer for bpftrace; loss = the kernel's drop counters (ours), \"Lost N events\" "
		   "and missing lines (bpftrace)",
		   CONSUMER_CPU, REPLAY_BATCH, GENERATOR_CPU, seconds);
	return 0;
}
