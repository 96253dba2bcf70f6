/* `record` (see recorder.h): capture set-up with fallback, the capture loop, and a session that
 * is complete however the loop ends. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "common/clock.h"
#include "common/db.h"
#include "common/db_checkpoint.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "common/privilege.h"
#include "common/schema.h"
#include "common/stop_signal.h"
#include "tracer/aggregates.h"
#include "tracer/bpf_capture.h"
#include "tracer/event_writer.h"
#include "tracer/probe_plan.h"
#include "tracer/recorder.h"
#include "tracer/session_metadata.h"
#include "tracer/tracefs_capture.h"
#include "tracer/traced_command.h"

#define POLL_MS 100
#define COMMIT_EVERY_NS (200 * 1000 * 1000ull)

struct capture {
	struct probe_plan plan;
	struct bpf_capture *bpf;
	struct tracefs_capture *tfs;
	const char *name; /* bpf | tracefs */
};

struct loop_state {
	struct event_writer *writer;
	struct aggregates *aggregates; /* NULL: every call is a record */
	uint64_t flush_interval_ns;
	uint64_t per_kind[IT_EV_KIND_MAX];
	uint64_t lost;
	uint64_t aggregate_lost; /* calls not counted: the aggregates hash was full */
	int failed;
};

/* Returns IT_EXIT_OK, or fail_code when tracefs cannot be used either. */
static int open_tracefs(struct capture *c, const char *why, int fail_code)
{
	char err[256];

	c->tfs = tracefs_capture_start(err, sizeof(err));
	if (!c->tfs) {
		log_error("%s, and tracefs capture failed too: %s", why, err);
		return fail_code;
	}
	probe_plan_use_tracefs(&c->plan, why);
	tracefs_capture_mark_plan(c->tfs, &c->plan);
	c->name = "tracefs";
	return IT_EXIT_OK;
}

/* eBPF when this process and kernel allow it, else tracefs (tracepoints only: no domains and no
 * driver page sizes, which only BPF can see). Returns an enum it_exit. */
static int open_capture(struct capture *c, const struct recorder_opts *o)
{
	char why[320], missing[96];
	const struct probe *map;
	int attached;

	memset(c, 0, sizeof(*c));
	if (o->use_tracefs) {
		probe_plan_build(&c->plan, &(struct probe_plan_opts){ .no_functions = true }, why,
				 sizeof(why));
		return open_tracefs(c, "tracefs requested with --tracefs", IT_EXIT_FAILURE);
	}
	if (!privilege_can_trace_bpf(missing, sizeof(missing))) {
		snprintf(why, sizeof(why), "eBPF needs %s, which this process lacks", missing);
		log_warn("%s: falling back to tracefs (no domains, no driver page sizes)", why);
		return open_tracefs(c, why, IT_EXIT_PRIVILEGE);
	}
	if (probe_plan_build(&c->plan,
			     &(struct probe_plan_opts){ .iommu_tracepoints_only =
								o->tracepoints_only },
			     why, sizeof(why))) {
		log_warn("%s: falling back to tracefs (no domains, no driver page sizes)", why);
		return open_tracefs(c, why, IT_EXIT_BPF);
	}
	c->bpf = bpf_capture_load(&c->plan,
				  &(struct bpf_capture_opts){ .ringbuf_bytes = o->ringbuf_bytes,
							      .mode = o->mode,
							      .threshold_bytes =
								      o->threshold_bytes },
				  why, sizeof(why));
	if (!c->bpf) {
		log_warn("%s: falling back to tracefs (no domains, no driver page sizes)", why);
		return open_tracefs(c, why, IT_EXIT_BPF);
	}
	attached = bpf_capture_attach(c->bpf);
	log_debug("%d probes attached", attached);
	map = probe_plan_find(&c->plan, "iommu:map");
	if (!map || !map->attached) {
		snprintf(why, sizeof(why), "eBPF could not attach iommu:map (%s)",
			 map ? map->reason : "not planned");
		log_warn("%s: falling back to tracefs (no domains, no driver page sizes)", why);
		bpf_capture_close(c->bpf);
		c->bpf = NULL;
		return open_tracefs(c, why, IT_EXIT_BPF);
	}
	c->name = "bpf";
	return IT_EXIT_OK;
}

static void close_capture(struct capture *c)
{
	bpf_capture_close(c->bpf);
	if (c->tfs)
		tracefs_capture_stop(c->tfs);
	c->bpf = NULL;
	c->tfs = NULL;
}

static int on_event(const struct it_event *e, void *ctx)
{
	struct loop_state *st = ctx;

	if (event_writer_add(st->writer, e)) {
		st->failed = 1;
		return -1;
	}
	if (e->h.kind < IT_EV_KIND_MAX)
		st->per_kind[e->h.kind]++;
	return 0;
}

static int capture_poll(struct capture *c, int timeout_ms, struct loop_state *st)
{
	if (c->bpf)
		return bpf_capture_poll(c->bpf, timeout_ms, on_event, st);
	return tracefs_capture_poll(c->tfs, timeout_ms, on_event, st);
}

static int on_bpf_loss(uint32_t cpu, uint32_t kind, uint64_t lost, void *ctx)
{
	struct loop_state *st = ctx;

	st->lost += lost;
	if (event_writer_add_loss(st->writer, cpu, it_event_kind_name(kind), lost, "ringbuf-full"))
		st->failed = 1; /* said */
	return st->failed ? -1 : 0;
}

static int on_aggregate_loss(uint32_t cpu, uint32_t kind, uint64_t lost, void *ctx)
{
	struct loop_state *st = ctx;

	st->aggregate_lost += lost;
	if (event_writer_add_loss(st->writer, cpu, it_event_kind_name(kind), lost,
				  "aggregates-full"))
		st->failed = 1; /* said */
	return st->failed ? -1 : 0;
}

/* Stores what the aggregates grew by since the last flush; 0 or -1 (logged). */
static int flush_aggregates(struct loop_state *st)
{
	return st->aggregates && aggregates_flush(st->aggregates, clock_ns(CLOCK_MONOTONIC)) < 0 ?
		       -1 :
		       0;
}

static int on_tracefs_loss(uint32_t cpu, uint64_t lost, void *ctx)
{
	struct loop_state *st = ctx;

	st->lost += lost;
	return event_writer_add_loss(st->writer, cpu, "any", lost, "tracefs-overrun");
}

/* After the probes are detached: what is still buffered, then the loss counters. */
static int drain_capture(struct capture *c, struct loop_state *st)
{
	uint64_t uncounted;
	int n;

	if (c->bpf) {
		bpf_capture_detach(c->bpf);
		n = bpf_capture_release_held(c->bpf, &uncounted);
		if (n)
			log_warn("counting the driver calls still held at the end failed: %s; their "
				 "counts are missing from map_aggregates",
				 strerror(-n));
		else if (uncounted)
			log_warn("%llu driver calls held on a CPU taken offline during the capture are "
				 "missing from map_aggregates (bpf_map_lookup_percpu_elem, kernel 5.19, "
				 "could not be loaded here)",
				 (unsigned long long)uncounted);
		while ((n = bpf_capture_poll(c->bpf, 0, on_event, st)) > 0)
			;
		if (n < 0 && !st->failed)
			log_error("reading the capture failed: %s", strerror(-n));
		if (n < 0 || st->failed || flush_aggregates(st))
			return -1;
		n = st->aggregates ? bpf_capture_aggregate_losses(c->bpf, on_aggregate_loss, st) :
				     0;
		if (!n)
			n = bpf_capture_losses(c->bpf, on_bpf_loss, st);
		if (n && !st->failed)
			log_error("reading the capture's loss counters failed: %s", strerror(-n));
		return n ? -1 : 0;
	}
	tracefs_capture_disable(c->tfs);
	while ((n = tracefs_capture_poll(c->tfs, 0, on_event, st)) > 0)
		;
	if (n < 0 && !st->failed)
		log_error("reading the capture failed: %s", strerror(-n));
	if (n < 0 || st->failed)
		return -1;
	return tracefs_capture_losses(c->tfs, on_tracefs_loss, st);
}

static char *join_command(char **argv, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (; argv && *argv && used < len; argv++)
		used += snprintf(buf + used, len - used, "%s%s", used ? " " : "", *argv);
	return argv ? buf : NULL;
}

static const char *run_loop(struct capture *c, struct loop_state *st, uint64_t deadline,
			    struct traced_command *cmd)
{
	uint64_t last_commit = clock_ns(CLOCK_MONOTONIC), last_flush = last_commit;

	for (;;) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		int timeout = POLL_MS, n;

		if (stop_signal)
			return "signal";
		if (deadline && now >= deadline)
			return "duration";
		if (cmd && traced_command_poll(cmd))
			return "command-exit";
		if (deadline && deadline - now < (uint64_t)POLL_MS * 1000000)
			timeout = (int)((deadline - now) / 1000000) + 1;
		n = capture_poll(c, timeout, st);
		if (st->failed)
			return "error";
		if (n < 0 && n != -EINTR) {
			log_error("reading the capture failed: %s", strerror(-n));
			return "error";
		}
		if (st->aggregates && now - last_flush >= st->flush_interval_ns) {
			if (flush_aggregates(st))
				return "error";
			last_flush = now;
		}
		if (now - last_commit >= COMMIT_EVERY_NS) {
			if (event_writer_commit(st->writer))
				return "error";
			last_commit = now;
		}
	}
}

static void print_summary(const struct loop_state *st, const char *path, double seconds,
			  const char *capture)
{
	uint64_t total = 0;

	for (int k = 0; k < IT_EV_KIND_MAX; k++)
		total += st->per_kind[k];
	printf("recorded %llu events in %.1f s through %s into %s: %llu maps, %llu unmaps, "
	       "%llu driver page records, %llu attach/group events, %llu faults, %llu flushes; "
	       "%llu lost\n",
	       (unsigned long long)total, seconds, capture, path,
	       (unsigned long long)st->per_kind[IT_EV_MAP],
	       (unsigned long long)st->per_kind[IT_EV_UNMAP],
	       (unsigned long long)(st->per_kind[IT_EV_DRIVER_MAP] +
				    st->per_kind[IT_EV_DRIVER_UNMAP] +
				    st->per_kind[IT_EV_DRIVER_MAP_RANGE]),
	       (unsigned long long)(st->per_kind[IT_EV_ATTACH] + st->per_kind[IT_EV_GROUP_ADD] +
				    st->per_kind[IT_EV_GROUP_REMOVE]),
	       (unsigned long long)st->per_kind[IT_EV_FAULT],
	       (unsigned long long)(st->per_kind[IT_EV_QI_SUBMIT] +
				    st->per_kind[IT_EV_CACHE_TAG_FLUSH]),
	       (unsigned long long)st->lost);
	if (st->aggregates)
		printf("calls counted instead of recorded: %llu (map_aggregates); %llu not counted "
		       "(aggregates hash full)\n",
		       (unsigned long long)aggregates_calls(st->aggregates),
		       (unsigned long long)st->aggregate_lost);
	if (st->aggregate_lost)
		log_warn("%llu calls were not counted (the aggregates hash was full); the losses "
			 "table has them per CPU",
			 (unsigned long long)st->aggregate_lost);
	if (st->lost && !strcmp(capture, "bpf"))
		log_warn("%llu events were lost (ring buffer full); the losses table has them per "
			 "CPU: use a larger --ring-size",
			 (unsigned long long)st->lost);
	else if (st->lost)
		log_warn("%llu events were lost (tracefs buffer overrun); the losses table has them "
			 "per CPU",
			 (unsigned long long)st->lost);
}

/* The capture_settings row: tracefs records every call whatever the mode asked; counts are
 * stored every flush_interval_ns. */
static int store_capture_mode(sqlite3 *db, int64_t sid, const struct capture *c,
			      const struct recorder_opts *o, uint64_t flush_interval_ns)
{
	struct bpf_capture_opts used = { .mode = c->bpf ? o->mode : CAPTURE_PER_EVENT,
					 .threshold_bytes = o->threshold_bytes };

	if (o->mode != CAPTURE_PER_EVENT && !c->bpf && !o->use_tracefs)
		log_warn("tracefs records every call: --mode %s applies to eBPF capture only",
			 capture_mode_name(o->mode));
	return capture_settings_store(db, sid, &used, flush_interval_ns);
}

int recorder_run(const struct recorder_opts *o)
{
	struct capture cap = {};
	struct loop_state st = {};
	struct traced_command cmd = {};
	struct session_metadata meta = {};
	struct itdb_session_end end = {};
	struct db_checkpointer *ckpt = NULL;
	char err[512], command[4096];
	sqlite3 *db = NULL;
	int64_t sid = 0;
	int ret = IT_EXIT_FAILURE, have_cmd = o->command && o->command[0];
	uint64_t start, deadline = 0;

	/* the output is checked first and created last, so that a capture that cannot start
	 * leaves an existing file (even with --force) and the directory as they were */
	if (o->append ?
		    itdb_check_append(o->db_path, err, sizeof(err)) :
		    itdb_check_create(o->db_path, o->force, o->force_option, err, sizeof(err))) {
		log_error("%s", err);
		return IT_EXIT_FAILURE;
	}
	stop_on_signals();
	/* a traced command that died before it was released must not take the recorder with it */
	signal(SIGPIPE, SIG_IGN);
	if (have_cmd && traced_command_fork(&cmd, o->command))
		goto cleanup;
	ret = open_capture(&cap, o);
	if (ret != IT_EXIT_OK)
		goto cleanup;
	ret = IT_EXIT_FAILURE;
	db = itdb_open(o->db_path,
		       o->append ? ITDB_APPEND :
		       o->force	 ? ITDB_CREATE_FORCE :
				   ITDB_CREATE,
		       o->schema, err, sizeof(err));
	if (!db) {
		log_error("%s", err);
		goto cleanup;
	}
	/* the capture loop must not wait for the checkpoints' syncs: the ring buffer fills */
	ckpt = db_checkpointer_start(db, DB_CHECKPOINT_BYTES, err, sizeof(err));
	if (!ckpt)
		log_debug("checkpoints stay on the capture's thread: %s", err);
	if (session_metadata_collect(&meta, o->sysfs_root))
		goto cleanup;
	start = clock_ns(CLOCK_MONOTONIC);
	if (itdb_session_begin(db,
			       &(struct itdb_session_info){
				       .kind = "record",
				       .capture = cap.name,
				       .trace_clock = "mono",
				       .boot_cmdline =
					       meta.boot_cmdline[0] ? meta.boot_cmdline : NULL,
				       .derive_pgsize_bitmap = meta.pgsize_bitmap,
				       .command =
					       join_command(o->command, command, sizeof(command)),
				       .start_mono_ns = start,
				       .start_wall_ns = clock_ns(CLOCK_REALTIME) },
			       &sid))
		goto cleanup;
	st.flush_interval_ns =
		o->flush_interval_ns ? o->flush_interval_ns : RECORDER_FLUSH_EVERY_NS;
	if (session_metadata_store(db, sid, &meta, &cap.plan) ||
	    store_capture_mode(db, sid, &cap, o, st.flush_interval_ns))
		goto cleanup;
	if (cap.bpf && o->mode != CAPTURE_PER_EVENT) {
		struct agg_maps maps = bpf_capture_agg_maps(cap.bpf);

		st.aggregates = aggregates_new(db, sid, &maps);
		if (!st.aggregates)
			goto cleanup;
	}
	st.writer = event_writer_new(db, sid,
				     &(struct event_writer_opts){ .fallback_pgsize_bitmap =
									  meta.pgsize_bitmap,
								  .probe_name = probe_plan_name,
								  .probe_name_ctx = &cap.plan });
	if (!st.writer)
		goto cleanup;
	if (stop_signal) {
		end.end_reason = "signal";
		goto finish;
	}
	if (have_cmd && traced_command_start(&cmd, o->command[0])) {
		end.end_reason = "error";
		goto finish;
	}
	if (o->duration_ns)
		deadline = start + o->duration_ns;
	end.end_reason = run_loop(&cap, &st, deadline, have_cmd ? &cmd : NULL);
finish:
	if (have_cmd) {
		traced_command_stop(&cmd, 2000);
		end.has_exit_status = cmd.exited;
		end.command_exit_status = traced_command_exit_code(&cmd);
	}
	if (!st.failed && drain_capture(&cap, &st))
		end.end_reason = "error";
	end.end_mono_ns = clock_ns(CLOCK_MONOTONIC);
	end.events_total = event_writer_count(st.writer);
	end.events_lost = st.lost + st.aggregate_lost;
	if (event_writer_finish(st.writer))
		goto cleanup;
	db_checkpointer_stop(ckpt);
	ckpt = NULL;
	if (o->store_extra && o->store_extra(db, sid, o->store_extra_ctx))
		end.end_reason = "error";
	if (itdb_session_end(db, sid, &end) ||
	    itdb_exec(db, it_capture_index_sql, "create the capture's indexes") ||
	    (o->finish && o->finish(db, sid)))
		goto cleanup;
	print_summary(&st, o->db_path, (end.end_mono_ns - start) / 1e9, cap.name);
	if (have_cmd && end.has_exit_status)
		log_info("command exited with status %d", end.command_exit_status);
	if (o->command_status)
		*o->command_status = end.has_exit_status ? end.command_exit_status : -1;
	ret = strcmp(end.end_reason, "error") ? IT_EXIT_OK : IT_EXIT_FAILURE;
cleanup:
	if (have_cmd && !cmd.exited)
		traced_command_stop(&cmd, 2000);
	aggregates_free(st.aggregates);
	event_writer_free(st.writer);
	db_checkpointer_stop(ckpt);
	close_capture(&cap);
	session_metadata_free(&meta);
	if (itdb_close(db))
		ret = IT_EXIT_FAILURE;
	return ret;
}

int recorder_list_probes(const struct recorder_opts *o)
{
	struct capture cap;
	int ret = open_capture(&cap, o);

	probe_plan_print(&cap.plan, stdout);
	if (ret == IT_EXIT_OK && cap.bpf)
		printf("\ncapture: eBPF; kprobes %s; fentry %s\n",
		       cap.plan.have_kprobes ? "available" : "absent (no kprobe PMU)",
		       cap.plan.fentry_works ? "works" : "refused or untried");
	else if (ret == IT_EXIT_OK)
		printf("\ncapture: tracefs (tracepoints only)\n");
	close_capture(&cap);
	return ret;
}
