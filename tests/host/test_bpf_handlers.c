/* The BPF handlers, run by the kernel with BPF_PROG_TEST_RUN on synthetic tracepoint arguments,
 * their records carried through the ring buffer and the event writer into SQLite, and checked
 * value for value. Needs root (CAP_BPF + CAP_PERFMON) and kernel BTF; skips loudly otherwise. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <cmocka.h>
#include "tests/sql_rows.h"
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/db.h"
#include "common/iommu_units.h"
#include "common/privilege.h"
#include "bpf/probe_slots.h"
#include "bpf/replay.h"
#include "tracer/aggregates.h"
#include "tracer/bpf_capture.h"
#include "tracer/event_writer.h"
#include "tracer/probe_plan.h"
#include "common/schema.h"

struct fixture {
	struct probe_plan plan;
	struct bpf_capture *cap;
	sqlite3 *db;
	int64_t sid;
	struct event_writer *w;
	uint64_t delivered;
};

/* Loads f->plan with opts, and opens the database and writer the records go to. */
static struct fixture *load_plan(struct fixture *f, const struct bpf_capture_opts *opts)
{
	char err[256];

	f->cap = bpf_capture_load(&f->plan, opts, err, sizeof(err));
	if (!f->cap)
		fail_msg("load failed: %s", err);
	f->db = itdb_open(":memory:", ITDB_CREATE, &it_recorded_schema, err, sizeof(err));
	assert_non_null(f->db);
	assert_int_equal(itdb_session_begin(f->db,
					    &(struct itdb_session_info){ .kind = "record",
									 .capture = "bpf" },
					    &f->sid),
			 0);
	f->w = event_writer_new(f->db, f->sid,
				&(struct event_writer_opts){ .probe_name = probe_plan_name,
							     .probe_name_ctx = &f->plan });
	assert_non_null(f->w);
	return f;
}

static struct fixture *load_plan_with(const struct probe_plan_opts *plan_opts,
				      const struct bpf_capture_opts *opts)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	assert_int_equal(probe_plan_build(&f->plan, plan_opts, err, sizeof(err)), 0);
	return load_plan(f, opts);
}

static struct fixture *load_with(const struct bpf_capture_opts *opts)
{
	return load_plan_with(&(struct probe_plan_opts){ .raw_tp_only = true,
							 .no_functions = true },
			      opts);
}

static struct fixture *load(size_t ringbuf)
{
	return load_with(&(struct bpf_capture_opts){ .ringbuf_bytes = ringbuf });
}

static int setup(void **state)
{
	*state = load(0);
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	event_writer_free(f->w);
	itdb_close(f->db);
	bpf_capture_close(f->cap);
	free(f);
	return 0;
}

static void fire(struct fixture *f, const char *prog, const uint64_t *args, size_t nargs)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = nargs * 8);
	int fd = bpf_capture_prog_fd(f->cap, prog);

	assert_true(fd >= 0);
	assert_int_equal(bpf_prog_test_run_opts(fd, &opts), 0);
	assert_int_equal(opts.retval, 0);
}

static int on_event(const struct it_event *e, void *ctx)
{
	struct fixture *f = ctx;

	f->delivered++;
	return event_writer_add(f->w, e);
}

static void drain(struct fixture *f)
{
	while (bpf_capture_poll(f->cap, 0, on_event, f) > 0)
		;
	assert_int_equal(event_writer_finish(f->w), 0);
}

static void map_and_unmap_rows(void **state)
{
	struct fixture *f = *state;
	const uint64_t map_args[] = { 0x40000000, 0x480f600000ull, 1ull << 30 };
	const uint64_t unmap_args[] = { 0x40000000, 1ull << 30, 1ull << 30 };
	char expect[256];

	fire(f, "raw_map", map_args, 3);
	fire(f, "raw_unmap", unmap_args, 3);
	drain(f);
	snprintf(expect, sizeof(expect), "%d|%ld|NULL|NULL|1073741824|309495595008|1073741824;",
		 getpid(), (long)syscall(SYS_gettid));
	assert_string_equal(sql_rows(f->db,
				     "SELECT pid, tid, domain_ptr, domain_source, iova, paddr,"
				     " size_bytes FROM maps"),
			    expect);
	assert_string_equal(sql_rows(f->db, "SELECT iova, size_bytes, unmapped_bytes FROM unmaps"),
			    "1073741824|1073741824|1073741824;");
	/* nothing observed the driver here: the leaf rule's pages are stored as derived, for the
	 * map and for the unmap that took the live mapping away */
	assert_string_equal(sql_rows(f->db, "SELECT op, pgsize_bytes, pgcount, source"
					    " FROM driver_maps ORDER BY op"),
			    "map|2097152|512|derived;unmap|2097152|512|derived;");
	/* the comm is this test binary's, the timestamp CLOCK_MONOTONIC-like (non-zero) */
	assert_string_equal(sql_rows(f->db, "SELECT comm, ts_ns > 0 FROM maps"),
			    "host_test_bpf_h|1;");
}

struct named_thread {
	int prog_fd;
	const uint64_t *args;
	size_t nargs;
	long tid;
	int rc;
};

/* Fires the program once from a thread with a 15-character name (the longest a comm holds). */
static void *fire_from_named_thread(void *arg)
{
	struct named_thread *t = arg;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = t->args, .ctx_size_in = t->nargs * 8);

	t->tid = syscall(SYS_gettid);
	t->rc = prctl(PR_SET_NAME, "itrace-worker-1") ? -1 :
							bpf_prog_test_run_opts(t->prog_fd, &opts);
	return NULL;
}

/* fire() from a thread of its own, named itrace-worker-1; returns its tid. */
static long fire_from_other_thread(struct fixture *f, const char *prog, const uint64_t *args,
				   size_t nargs)
{
	struct named_thread t = { .prog_fd = bpf_capture_prog_fd(f->cap, prog),
				  .args = args,
				  .nargs = nargs };
	pthread_t thread;

	assert_true(t.prog_fd >= 0);
	assert_int_equal(pthread_create(&thread, NULL, fire_from_named_thread, &t), 0);
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(t.rc, 0);
	assert_int_not_equal(t.tid, syscall(SYS_gettid));
	return t.tid;
}

/* A record names the thread that made it, not the process's main thread: its own tid, the
 * process's pid, its own comm whole. */
static void record_names_its_thread(void **state)
{
	struct fixture *f = *state;
	long tid =
		fire_from_other_thread(f, "raw_map", (const uint64_t[]){ 0x1000, 0x2000, 4096 }, 3);
	char expect[128];

	drain(f);
	snprintf(expect, sizeof(expect), "%d|%ld|itrace-worker-1;", getpid(), tid);
	assert_string_equal(sql_rows(f->db, "SELECT pid, tid, comm FROM maps"), expect);
}

/* The domain of the thread's current iommu_map call (set by the fentry/kprobe slot programs,
 * seeded here) is attached to the map record, and the unmap call's domain to the unmap record:
 * kept apart, as an interrupt's unmap may come between a thread's map call and its event. */
static void records_take_domain_of_current_call(void **state)
{
	struct fixture *f = *state;
	const uint64_t map_args[] = { 0x80000000, 0x100000000ull, 4096 };
	const struct it_call_state map_domain = { .domain = 0xffff888123456000ull },
				   unmap_domain = { .domain = 0xffff888100000a00ull };
	uint64_t tid = (uint32_t)syscall(SYS_gettid);
	uint64_t map_key = (uint64_t)IT_CALL_MAP << 32 | tid;
	uint64_t unmap_key = (uint64_t)IT_CALL_UNMAP << 32 | tid;
	int fd = bpf_capture_map_fd(f->cap, "domain_by_call");

	assert_true(fd >= 0);
	assert_int_equal(bpf_map_update_elem(fd, &map_key, &map_domain, BPF_ANY), 0);
	fire(f, "raw_map", map_args, 3);
	/* no attach call: an attach event takes no call's domain */
	fire(f, "raw_attach_device_to_domain", (const uint64_t[]){ 0 }, 1);
	assert_int_equal(bpf_map_update_elem(fd, &unmap_key, &unmap_domain, BPF_ANY), 0);
	fire(f, "raw_unmap", map_args, 3);
	fire(f, "raw_map", map_args, 3);
	drain(f);
	assert_string_equal(sql_rows(f->db, "SELECT domain, domain_source, iova_hex, paddr_hex,"
					    " size_bytes FROM maps_view"),
			    "0xffff888123456000|call|0x80000000|0x100000000|4096;"
			    "0xffff888123456000|call|0x80000000|0x100000000|4096;");
	assert_string_equal(sql_rows(f->db, "SELECT domain, domain_source FROM unmaps_view"),
			    "0xffff888100000a00|call;");
	assert_string_equal(sql_rows(f->db, "SELECT domain_ptr FROM attaches"), "NULL;");
}

static void device_fault_and_flush_rows(void **state)
{
	struct fixture *f = *state;
	const uint64_t attach[] = { 0 };
	const uint64_t group[] = { 7, 0 };
	const uint64_t fault[] = { 0, 0xdead000, 2 };
	const uint64_t qi[] = { 0, (5ull << 16) | 2, 0x40000000ull | 9, 0, 0 };
	const uint64_t flush[] = { 0, 0x1000, 0x1fff, 0x1000, 1, 0 };

	fire(f, "raw_attach_device_to_domain", attach, 1);
	fire(f, "raw_add_device_to_group", group, 2);
	fire(f, "raw_remove_device_from_group", group, 2);
	fire(f, "raw_io_page_fault", fault, 3);
	fire(f, "raw_qi_submit", qi, 5);
	fire(f, "raw_cache_tag_flush_range", flush, 6);
	fire(f, "raw_cache_tag_flush_range_np", flush, 6);
	drain(f);
	assert_string_equal(sql_rows(f->db,
				     "SELECT event, device, group_id, domain_ptr FROM attaches"
				     " ORDER BY ts_ns"),
			    "attach|NULL|NULL|NULL;group_add|NULL|7|NULL;group_remove|NULL|7|NULL;");
	assert_string_equal(sql_rows(f->db, "SELECT device, iova, flags FROM faults"),
			    "NULL|233492480|2;");
	assert_string_equal(sql_rows(f->db,
				     "SELECT event, domain_id, descriptor_type, addr, mask,"
				     " start_addr, end_addr, pages FROM flushes ORDER BY ts_ns"),
			    "qi_submit|5|iotlb|1073741824|9|NULL|NULL|NULL;"
			    "cache_tag_flush_range|0|NULL|4096|0|4096|8191|1;"
			    "cache_tag_flush_range_np|0|NULL|4096|0|4096|8191|1;");
}

/* Seeds the thread's current IOMMU core call of kind call, as the domain slot programs would. */
static void enter_call(struct fixture *f, uint32_t call, uint64_t domain, uint64_t size)
{
	uint64_t key = (uint64_t)call << 32 | (uint32_t)syscall(SYS_gettid);
	struct it_call_state state = { .domain = domain, .size = size };
	int fd = bpf_capture_map_fd(f->cap, "domain_by_call");

	assert_true(fd >= 0);
	assert_int_equal(bpf_map_update_elem(fd, &key, &state, BPF_ANY), 0);
}

static struct aggregates *new_aggregates(struct fixture *f)
{
	struct agg_maps maps = bpf_capture_agg_maps(f->cap);

	return aggregates_new(f->db, f->sid, &maps);
}

/* Reads the aggregates hash into map_aggregates rows stamped flush_ns. */
static void flush(struct fixture *f, uint64_t flush_ns)
{
	struct aggregates *a = new_aggregates(f);

	assert_non_null(a);
	assert_true(aggregates_flush(a, flush_ns) >= 0);
	aggregates_free(a);
}

/* --tracepoints-only: no program records the thread's core calls, so the handlers do not look
 * one up; a call seeded all the same gives the record no domain. */
static void tracepoints_only_looks_up_no_call(void **state)
{
	struct fixture *f =
		load_plan_with(&(struct probe_plan_opts){ .raw_tp_only = true,
							  .iommu_tracepoints_only = true },
			       &(struct bpf_capture_opts){ 0 });
	const uint64_t map_args[] = { 0x80000000, 0x100000000ull, 4096 };

	*state = f;
	assert_false(f->plan.domain_calls);
	enter_call(f, IT_CALL_MAP, 0xffff888123456000ull, 4096);
	fire(f, "raw_map", map_args, 3);
	drain(f);
	assert_string_equal(sql_rows(f->db, "SELECT domain, domain_source FROM maps_view"),
			    "NULL|NULL;");
}

#define DOM "0xffff888123456000"

/* The tracepoints, with the plan of a VT-d machine whose driver's map_pages and unmap_pages are
 * probed (as kprobes: loaded here, never attached nor run), so that the driver calls stand in
 * for the core calls (probe_plan_driver_domains). */
static struct fixture *load_driver_domains(const struct bpf_capture_opts *opts)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	assert_int_equal(probe_plan_build(&f->plan,
					  &(struct probe_plan_opts){ .raw_tp_only = true,
								     .no_functions = true },
					  err, sizeof(err)),
			 0);
	f->plan.iommu_vendors = 1u << IOMMU_VENDOR_INTEL;
	f->plan.probes[f->plan.count++] = (struct probe){ .role = ROLE_DRIVER_MAP,
							  .target = "intel_iommu_map_pages",
							  .vendors = 1u << IOMMU_VENDOR_INTEL,
							  .in_kernel = true,
							  .mech = MECH_KPROBE,
							  .optional = true };
	f->plan.probes[f->plan.count++] = (struct probe){ .role = ROLE_DRIVER_UNMAP,
							  .target = "intel_iommu_unmap_pages",
							  .vendors = 1u << IOMMU_VENDOR_INTEL,
							  .in_kernel = true,
							  .mech = MECH_KPROBE,
							  .optional = true };
	assert_int_equal(probe_plan_driver_domains(&f->plan),
			 1u << IT_CALL_MAP | 1u << IT_CALL_UNMAP);
	return load_plan(f, opts);
}

/* Seeds the last driver call of kind call on every CPU as this thread's, as a map_pages or
 * unmap_pages program would on the CPU it runs on. */
static void enter_driver_call(struct fixture *f, uint32_t call, uint64_t domain, uint64_t iova)
{
	int ncpus = libbpf_num_possible_cpus();
	struct it_driver_call *calls = calloc((size_t)ncpus, sizeof(*calls));
	int fd = bpf_capture_map_fd(f->cap, "driver_calls");

	assert_true(fd >= 0);
	assert_non_null(calls);
	for (int cpu = 0; cpu < ncpus; cpu++)
		calls[cpu] = (struct it_driver_call){ .domain = domain,
						      .iova = iova,
						      .tid = (uint32_t)syscall(SYS_gettid) };
	assert_int_equal(bpf_map_update_elem(fd, &call, calls, BPF_ANY), 0);
	free(calls);
}

/* Where the driver calls give the domain, a map or unmap takes that of the last driver call of
 * its kind on its CPU only when this thread made it and it started inside the event's range: a
 * call elsewhere was another's (an interrupt's on this thread, or one whose event never fired).
 * Else the thread's core call still counts, where one is probed. */
static void driver_call_gives_domain_inside_range(void **state)
{
	struct fixture *f = load_driver_domains(&(struct bpf_capture_opts){ 0 });
	const uint64_t map[] = { 0x80000000, 0x100000000ull, 0x4000 };
	const uint64_t unmap[] = { 0x80000000, 0x4000, 0x4000 };

	*state = f;
	enter_driver_call(f, IT_CALL_MAP, 0xffff888123456000ull, 0x80003000);
	fire(f, "raw_map", map, 3);
	enter_driver_call(f, IT_CALL_MAP, 0xffff888123456000ull, 0x80004000);
	fire(f, "raw_map", map, 3);
	enter_driver_call(f, IT_CALL_MAP, 0xffff888123456000ull, 0x7ffff000);
	fire(f, "raw_map", map, 3);
	enter_call(f, IT_CALL_MAP, 0xffff888100000a00ull, 0);
	fire(f, "raw_map", map, 3);
	/* another thread's driver call, in the range */
	enter_driver_call(f, IT_CALL_MAP, 0xffff888123456000ull, 0x80001000);
	fire_from_other_thread(f, "raw_map", map, 3);
	fire(f, "raw_map", map, 3);
	enter_driver_call(f, IT_CALL_UNMAP, 0xffff888123456000ull, 0x80000000);
	fire(f, "raw_unmap", unmap, 3);
	enter_driver_call(f, IT_CALL_UNMAP, 0xffff888123456000ull, 0x90000000);
	fire(f, "raw_unmap", unmap, 3);
	drain(f);
	assert_string_equal(sql_rows(f->db, "SELECT domain, domain_source FROM maps_view"
					    " ORDER BY map_id"),
			    DOM "|driver;NULL|NULL;NULL|NULL;0xffff888100000a00|call;"
				"NULL|NULL;" DOM "|driver;");
	assert_string_equal(sql_rows(f->db, "SELECT domain, domain_source FROM unmaps_view"
					    " ORDER BY unmap_id"),
			    DOM "|driver;NULL|NULL;");
}

/* The same in the aggregate mode: a counted map or unmap is counted in the domain of its driver
 * call, a map whose driver call lies elsewhere in no domain. */
static void aggregate_mode_counts_in_driver_call_domain(void **state)
{
	struct fixture *f =
		load_driver_domains(&(struct bpf_capture_opts){ .mode = CAPTURE_AGGREGATE });
	const uint64_t map[] = { 0x80000000, 0x100000000ull, 0x4000 };
	const uint64_t unmap[] = { 0x80000000, 0x4000, 0x4000 };

	*state = f;
	enter_driver_call(f, IT_CALL_MAP, 0xffff888123456000ull, 0x80001000);
	fire(f, "raw_map", map, 3);
	enter_driver_call(f, IT_CALL_MAP, 0xffff888123456000ull, 0x80008000);
	fire(f, "raw_map", map, 3);
	enter_driver_call(f, IT_CALL_UNMAP, 0xffff888123456000ull, 0x80002000);
	fire(f, "raw_unmap", unmap, 3);
	drain(f);
	flush(f, 1000);
	assert_string_equal(sql_rows(f->db,
				     "SELECT domain, op, count, bytes FROM map_aggregates_view"
				     " ORDER BY op, domain"),
			    "NULL|map|1|16384;" DOM "|map|1|16384;" DOM "|unmap|1|16384;");
}

/* Sets held_calls, which bpf_capture_attach sets from the driver probes that attached (none
 * attach here): the kinds whose driver calls the threshold mode holds. */
static void set_held_calls(struct fixture *f, uint32_t kinds)
{
	int fd = bpf_capture_map_fd(f->cap, ".bss");
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info), key = 0;

	assert_true(fd >= 0);
	assert_int_equal(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	/* held_calls is the only variable in .bss */
	assert_int_equal(info.value_size, sizeof(kinds));
	assert_int_equal(bpf_map_update_elem(fd, &key, &kinds, BPF_ANY), 0);
}

/* Seeds, on every CPU, thread tid's driver calls of kind call into domain as held by the
 * threshold mode's map_pages or unmap_pages program until their core call's event; busy: as if
 * a program were holding or letting go there (the event then runs nested in it). */
static void hold_driver_calls(struct fixture *f, uint32_t call, uint64_t domain, uint32_t tid,
			      const struct it_driver_chunk *chunks, uint32_t n, uint32_t busy)
{
	int ncpus = libbpf_num_possible_cpus();
	struct it_driver_call *calls = calloc((size_t)ncpus, sizeof(*calls));
	int fd = bpf_capture_map_fd(f->cap, "driver_calls");

	assert_true(fd >= 0 && n <= IT_PENDING_DRIVER_CALLS);
	assert_non_null(calls);
	for (int cpu = 0; cpu < ncpus; cpu++) {
		calls[cpu] = (struct it_driver_call){ .domain = domain,
						      .iova = chunks[n - 1].iova,
						      .tid = tid,
						      .npending = n,
						      .busy = busy };
		memcpy(calls[cpu].pending, chunks, n * sizeof(*chunks));
	}
	assert_int_equal(bpf_map_update_elem(fd, &call, calls, BPF_ANY), 0);
	free(calls);
}

/* The held driver calls of kind call on cpu */
static uint32_t held_driver_calls_on(struct fixture *f, uint32_t call, int cpu)
{
	int ncpus = libbpf_num_possible_cpus();
	struct it_driver_call *calls = calloc((size_t)ncpus, sizeof(*calls));
	uint32_t n;

	assert_non_null(calls);
	assert_true(cpu >= 0 && cpu < ncpus);
	assert_int_equal(bpf_map_lookup_elem(bpf_capture_map_fd(f->cap, "driver_calls"), &call,
					     calls),
			 0);
	n = calls[cpu].npending;
	free(calls);
	return n;
}

/* The held driver calls of kind call on this CPU (the test runs pinned to one) */
static uint32_t held_driver_calls(struct fixture *f, uint32_t call)
{
	return held_driver_calls_on(f, call, sched_getcpu());
}

/* Threshold mode (64 KiB) where the driver calls give the domain, so that no core call says its
 * size first: the driver calls the map_pages/unmap_pages programs held go with their call's
 * event, as rows of a big call and counted for a small one; a held call outside the event's
 * range (of a call whose event never came) is counted. An event that finds nothing held for it
 * (another thread's calls stay held; its own were let go elsewhere) is flagged so that no pages
 * are derived on top of the counted ones; one nested in a hold or let-go leaves what is held. */
static void threshold_mode_releases_held_driver_calls(void **state)
{
	struct fixture *f = load_driver_domains(
		&(struct bpf_capture_opts){ .mode = CAPTURE_THRESHOLD, .threshold_bytes = 65536 });
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	const struct it_driver_chunk big[] = {
		{ .iova = 0x80200000, .paddr = 0x100200000ull, .pgsize = 4096, .pgcount = 1 },
		{ .iova = 0x80201000, .paddr = 0x100201000ull, .pgsize = 4096, .pgcount = 15 },
	};
	const struct it_driver_chunk small[] = {
		{ .iova = 0x80001000, .paddr = 0x100002000ull, .pgsize = 4096, .pgcount = 1 },
	};
	const struct it_driver_chunk stale_and_big[] = {
		{ .iova = 0x90000000, .paddr = 0x200000000ull, .pgsize = 4096, .pgcount = 2 },
		{ .iova = 0x80400000, .paddr = 0x100400000ull, .pgsize = 65536, .pgcount = 1 },
	};
	const struct it_driver_chunk stale[] = {
		{ .iova = 0x90000000, .paddr = 0x200000000ull, .pgsize = 4096, .pgcount = 1 },
	};
	const struct it_driver_chunk first_page[] = {
		{ .iova = 0x80200000, .paddr = 0x100200000ull, .pgsize = 4096, .pgcount = 1 },
	};
	const struct it_driver_chunk page_of_big_unmap[] = {
		{ .iova = 0x80400000, .pgsize = 4096, .pgcount = 1 },
	};
	const uint64_t big_map[] = { 0x80200000, 0x100200000ull, 65536 };
	const uint64_t small_map[] = { 0x80001000, 0x100002000ull, 4096 };
	const uint64_t third_map[] = { 0x80400000, 0x100400000ull, 65536 };
	const uint64_t unmap[] = { 0x80400000, 4096, 65536 };
	cpu_set_t one, all;

	*state = f;
	set_held_calls(f, 1u << IT_CALL_MAP | 1u << IT_CALL_UNMAP);
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	hold_driver_calls(f, IT_CALL_MAP, 0xffff888123456000ull, tid, big, 2, 0);
	fire(f, "raw_map", big_map, 3);
	assert_int_equal(held_driver_calls(f, IT_CALL_MAP), 0);
	hold_driver_calls(f, IT_CALL_MAP, 0xffff888123456000ull, tid, small, 1, 0);
	fire(f, "raw_map", small_map, 3);
	hold_driver_calls(f, IT_CALL_MAP, 0xffff888123456000ull, tid, stale_and_big, 2, 0);
	fire(f, "raw_map", third_map, 3);
	hold_driver_calls(f, IT_CALL_UNMAP, 0xffff888123456000ull, tid, page_of_big_unmap, 1, 0);
	fire(f, "raw_unmap", unmap, 3);
	assert_int_equal(held_driver_calls(f, IT_CALL_UNMAP), 0);
	hold_driver_calls(f, IT_CALL_MAP, 0xffff888123456000ull, tid + 1, small, 1, 0);
	fire(f, "raw_map", big_map, 3);
	assert_int_equal(held_driver_calls(f, IT_CALL_MAP), 1);
	hold_driver_calls(f, IT_CALL_MAP, 0xffff888123456000ull, tid, stale, 1, 0);
	fire(f, "raw_map", big_map, 3);
	hold_driver_calls(f, IT_CALL_MAP, 0xffff888123456000ull, tid, first_page, 1, 1);
	fire(f, "raw_map", big_map, 3);
	assert_int_equal(held_driver_calls(f, IT_CALL_MAP), 1);
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
	drain(f);
	flush(f, 1000);
	assert_string_equal(sql_rows(f->db, "SELECT map_id, domain, domain_source, iova_hex"
					    " FROM maps_view ORDER BY map_id"),
			    "1|" DOM "|driver|0x80200000;2|" DOM "|driver|0x80400000;"
			    "3|NULL|NULL|0x80200000;4|NULL|NULL|0x80200000;"
			    "5|" DOM "|driver|0x80200000;");
	/* no pages derived for maps 3 and 4, whose driver calls were counted; map 5's held call
	 * stayed held (nested), so its pages are derived */
	assert_string_equal(sql_rows(f->db, "SELECT op, map_id, unmap_id, iova, pgsize_bytes,"
					    " pgcount, source FROM driver_maps ORDER BY rowid"),
			    "map|1|NULL|2149580800|4096|1|observed;"
			    "map|1|NULL|2149584896|4096|15|observed;"
			    "map|2|NULL|2151677952|65536|1|observed;"
			    "unmap|NULL|1|2151677952|4096|1|observed;"
			    "map|5|NULL|2149580800|4096|16|derived;");
	assert_string_equal(sql_rows(f->db,
				     "SELECT domain, op, call_size_class, pgsize_bytes,"
				     " align_log2, count, bytes, pages FROM map_aggregates_view"
				     " ORDER BY op, size_log2, align_log2"),
			    DOM "|driver_map|4 KiB|4096|12|1|4096|1;" DOM
				"|driver_map|4 KiB|4096|28|1|4096|1;" DOM
				"|driver_map|8 KiB|4096|28|1|8192|2;" DOM
				"|map|4 KiB|0|12|1|4096|0;");
}

/* A threshold capture (64 KiB) as its end finds it: on every CPU a 4 KiB map driver call and a
 * 2-page unmap driver call held, the probes detached. */
static struct fixture *load_held_at_the_end(void)
{
	static const struct it_driver_chunk map[] = {
		{ .iova = 0x80001000, .paddr = 0x100002000ull, .pgsize = 4096, .pgcount = 1 },
	};
	static const struct it_driver_chunk unmap[] = {
		{ .iova = 0x80008000, .pgsize = 4096, .pgcount = 2 },
	};
	struct fixture *f = load_driver_domains(
		&(struct bpf_capture_opts){ .mode = CAPTURE_THRESHOLD, .threshold_bytes = 65536 });

	set_held_calls(f, 1u << IT_CALL_MAP | 1u << IT_CALL_UNMAP);
	hold_driver_calls(f, IT_CALL_MAP, 0xffff888123456000ull, 1, map, 1, 0);
	hold_driver_calls(f, IT_CALL_UNMAP, 0xffff888123456000ull, 1, unmap, 1, 0);
	bpf_capture_detach(f->cap);
	return f;
}

/* What the threshold mode still holds when the probes are detached is counted, on every CPU:
 * those calls' events will not come. */
static void threshold_mode_counts_calls_held_at_the_end(void **state)
{
	struct fixture *f = load_held_at_the_end();
	char expect[256];
	/* a possible CPU that is not online is let go from another where the kernel can
	 * (release_held_driver_calls_of loaded), else its entries stay as seeded, said uncounted */
	int online = (int)sysconf(_SC_NPROCESSORS_ONLN), possible = libbpf_num_possible_cpus();
	int ncpus = bpf_capture_prog_fd(f->cap, "release_held_driver_calls_of") >= 0 ? possible :
										       online;
	uint64_t uncounted, held;

	*state = f;
	for (int cpu = 0; cpu < possible; cpu++) {
		assert_int_equal(bpf_capture_held_calls(f->cap, cpu, &held), 0);
		assert_int_equal(held, 2);
	}
	assert_int_equal(bpf_capture_held_calls(f->cap, possible, &held), -EINVAL);
	assert_int_equal(bpf_capture_release_held(f->cap, &uncounted), 0);
	assert_int_equal(uncounted, (uint64_t)(possible - ncpus) * 2);
	for (int cpu = 0; cpu < possible; cpu++) {
		assert_int_equal(bpf_capture_held_calls(f->cap, cpu, &held), 0);
		assert_int_equal(held, cpu < ncpus ? 0 : 2);
	}
	assert_int_equal(held_driver_calls(f, IT_CALL_MAP), 0);
	assert_int_equal(held_driver_calls(f, IT_CALL_UNMAP), 0);
	drain(f);
	flush(f, 1000);
	/* every CPU let go counted its own */
	snprintf(expect, sizeof(expect),
		 DOM "|driver_map|4096|%d|%d|%d;" DOM "|driver_unmap|4096|%d|%d|%d;", ncpus,
		 ncpus * 4096, ncpus, ncpus, ncpus * 8192, ncpus * 2);
	assert_string_equal(sql_rows(f->db, "SELECT domain, op, pgsize_bytes, count, bytes, pages"
					    " FROM map_aggregates_view ORDER BY op"),
			    expect);
}

/* A CPU taken offline during the capture cannot run the release; where the kernel has
 * bpf_map_lookup_percpu_elem, release_held_driver_calls_of lets that CPU's held calls go from
 * another, counted there, and leaves the other CPUs' alone. */
static void threshold_mode_counts_calls_held_on_another_cpu(void **state)
{
	struct fixture *f = load_held_at_the_end();
	int ncpus = libbpf_num_possible_cpus(), here;
	uint64_t other;
	cpu_set_t one, all;

	*state = f;
	if (bpf_capture_prog_fd(f->cap, "release_held_driver_calls_of") < 0) {
		printf("SKIP: this kernel lacks bpf_map_lookup_percpu_elem: no release of held calls\n");
		skip();
	}
	/* run here, on one CPU, for the next one (this one where there is no other) */
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	here = sched_getcpu();
	CPU_ZERO(&one);
	CPU_SET(here, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	other = (uint64_t)((here + 1) % ncpus);
	fire(f, "release_held_driver_calls_of", &other, 1);
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
	for (int cpu = 0; cpu < ncpus; cpu++) {
		assert_int_equal(held_driver_calls_on(f, IT_CALL_MAP, cpu), cpu != (int)other);
		assert_int_equal(held_driver_calls_on(f, IT_CALL_UNMAP, cpu), cpu != (int)other);
	}
	drain(f);
	flush(f, 1000);
	assert_string_equal(sql_rows(f->db, "SELECT domain, op, pgsize_bytes, count, bytes, pages"
					    " FROM map_aggregates_view ORDER BY op"),
			    DOM "|driver_map|4096|1|4096|1;" DOM "|driver_unmap|4096|1|8192|2;");
}

/* Threshold mode (64 KiB here): maps and unmaps from the threshold on are rows (an unmap also
 * when it took away that much for a smaller request), smaller ones are counted per class with
 * their exact bytes; invalidations without a size are counted, flushes by their range's size;
 * attach events stay rows. */
static void threshold_mode_rows_and_counts(void **state)
{
	struct fixture *f = load_with(
		&(struct bpf_capture_opts){ .mode = CAPTURE_THRESHOLD, .threshold_bytes = 65536 });
	const uint64_t small_map[] = { 0x80001000, 0x100002000ull, 4096 };
	const uint64_t odd_map[] = { 0x80010000, 0x100010000ull, 12288 };
	const uint64_t big_map[] = { 0x80200000, 0x100200000ull, 65536 };
	const uint64_t small_unmap[] = { 0x80001000, 4096, 4096 };
	const uint64_t big_unmap[] = { 0x80200000, 65536, 65536 };
	/* a page-sized request that took away the large page around it (VFIO type1 on AMD-Vi) */
	const uint64_t page_of_big_unmap[] = { 0x80400000, 4096, 65536 };
	const uint64_t qi[] = { 0, 2, 0x40000000ull, 0, 0 };
	const uint64_t small_flush[] = { 0, 0x1000, 0x1fff, 0x1000, 1, 0 };
	const uint64_t big_flush[] = { 0, 0x100000, 0x1fffff, 0x100000, 256, 8 };

	*state = f;
	enter_call(f, IT_CALL_MAP, 0xffff888123456000ull, 4096);
	for (int i = 0; i < 3; i++)
		fire(f, "raw_map", small_map, 3);
	fire(f, "raw_map", odd_map, 3);
	fire(f, "raw_map", big_map, 3);
	enter_call(f, IT_CALL_UNMAP, 0xffff888123456000ull, 4096);
	fire(f, "raw_unmap", small_unmap, 3);
	fire(f, "raw_unmap", small_unmap, 3);
	fire(f, "raw_unmap", big_unmap, 3);
	fire(f, "raw_unmap", page_of_big_unmap, 3);
	fire(f, "raw_qi_submit", qi, 5);
	fire(f, "raw_cache_tag_flush_range", small_flush, 6);
	fire(f, "raw_cache_tag_flush_range", big_flush, 6);
	fire(f, "raw_attach_device_to_domain", (const uint64_t[]){ 0 }, 1);
	drain(f);
	flush(f, 1000);
	assert_string_equal(sql_rows(f->db, "SELECT domain, size_bytes FROM maps_view"),
			    DOM "|65536;");
	assert_string_equal(sql_rows(f->db, "SELECT domain, size_bytes, unmapped_bytes"
					    " FROM unmaps_view ORDER BY unmap_id"),
			    DOM "|65536|65536;" DOM "|4096|65536;");
	assert_string_equal(sql_rows(f->db, "SELECT event, pages FROM flushes"),
			    "cache_tag_flush_range|256;");
	assert_string_equal(sql_rows(f->db, "SELECT event FROM attaches"), "attach;");
	assert_string_equal(sql_rows(f->db, "SELECT DISTINCT flush_ns FROM map_aggregates"),
			    "1000;");
	assert_string_equal(sql_rows(f->db, "SELECT domain, op, call_size_class, pgsize_bytes,"
					    " align_log2, count, bytes, pages"
					    " FROM map_aggregates_view ORDER BY op, size_log2"),
			    "NULL|cache_tag_flush|4 KiB|0|12|1|4096|1;" DOM
			    "|map|4 KiB|0|12|3|12288|0;" DOM "|map|8 KiB|0|16|1|12288|0;"
			    "NULL|qi_submit|NULL|0|0|1|0|0;" DOM "|unmap|4 KiB|0|12|2|8192|0;");
}

/* Aggregate mode: every map and unmap is counted, big or small, none is a row; counters are
 * cumulative, and a second flush stores only what grew since the first. */
static void aggregate_mode_counts_all_and_flushes_growth(void **state)
{
	struct fixture *f = load_with(&(struct bpf_capture_opts){ .mode = CAPTURE_AGGREGATE });
	const uint64_t small_map[] = { 0x80001000, 0x100002000ull, 4096 };
	const uint64_t big_map[] = { 0x40000000, 0x480f600000ull, 1ull << 30 };
	struct aggregates *a;

	*state = f;
	fire(f, "raw_map", small_map, 3);
	fire(f, "raw_map", big_map, 3);
	a = new_aggregates(f);
	assert_non_null(a);
	assert_int_equal(aggregates_flush(a, 1), 2);
	fire(f, "raw_map", small_map, 3);
	fire(f, "raw_map", small_map, 3);
	assert_int_equal(aggregates_flush(a, 2), 1);
	assert_int_equal(aggregates_flush(a, 3), 0);
	assert_int_equal(aggregates_calls(a), 4);
	aggregates_free(a);
	drain(f);
	assert_string_equal(sql_rows(f->db, "SELECT COUNT(*) FROM maps"), "0;");
	assert_string_equal(sql_rows(f->db, "SELECT flush_ns, size_log2, align_log2, count, bytes"
					    " FROM map_aggregates ORDER BY flush_ns, size_log2"),
			    "1|12|12|1|4096;1|30|21|1|1073741824;2|12|12|2|8192;");
}

/* Two classes of 4 KiB-or-larger map whose slots are the same, into a and b. */
static void colliding_map_classes(struct it_agg_key *a, struct it_agg_key *b)
{
	for (uint32_t i = 0; i < 13 * 19; i++)
		for (uint32_t j = i + 1; j < 13 * 19; j++) {
			*a = (struct it_agg_key){ .op = IT_EV_MAP,
						  .size_log2 = 12 + i / 19,
						  .align_log2 = 12 + i % 19 };
			*b = (struct it_agg_key){ .op = IT_EV_MAP,
						  .size_log2 = 12 + j / 19,
						  .align_log2 = 12 + j % 19 };
			if (it_agg_slot_of(a) == it_agg_slot_of(b))
				return;
		}
	fail_msg("no two map classes share a slot");
}

static void fire_class(struct fixture *f, const struct it_agg_key *k, int times)
{
	const uint64_t args[] = { 1ull << k->align_log2, 1ull << k->align_log2,
				  1ull << k->size_log2 };

	for (int i = 0; i < times; i++)
		fire(f, "raw_map", args, 3);
}

/* The classes a flush reads are published into their slots, where the programs count them from
 * then on; the first of two classes that share a slot takes it, the other keeps counting in the
 * hash; each flush still stores every call once. */
static void flushed_classes_count_in_their_slots(void **state)
{
	struct fixture *f = load_with(&(struct bpf_capture_opts){ .mode = CAPTURE_AGGREGATE });
	struct agg_maps maps = bpf_capture_agg_maps(f->cap);
	int ncpus = libbpf_num_possible_cpus();
	struct it_agg_value *percpu = calloc((size_t)ncpus, sizeof(*percpu));
	struct it_agg_key a, b, *first;
	struct it_agg_slot_key slot;
	struct aggregates *agg;
	uint64_t in_slot = 0;
	uint32_t at;
	char expect[128];

	*state = f;
	assert_non_null(percpu);
	colliding_map_classes(&a, &b);
	at = it_agg_slot_of(&a);
	first = memcmp(&a, &b, sizeof(a)) < 0 ? &a : &b;
	fire_class(f, &a, 3);
	fire_class(f, &b, 2);
	agg = new_aggregates(f);
	assert_non_null(agg);
	assert_int_equal(aggregates_flush(agg, 1), 2);
	assert_int_equal(bpf_map_lookup_elem(maps.slot_keys_fd, &at, &slot), 0);
	assert_int_equal(slot.ready, 1);
	assert_memory_equal(&slot.key, first, sizeof(slot.key));
	fire_class(f, &a, 4);
	fire_class(f, &b, 6);
	assert_int_equal(bpf_map_lookup_elem(maps.slot_counts_fd, &at, percpu), 0);
	for (int cpu = 0; cpu < ncpus; cpu++)
		in_slot += percpu[cpu].count;
	assert_int_equal(in_slot, first == &a ? 4 : 6);
	assert_int_equal(aggregates_flush(agg, 2), 2);
	assert_int_equal(aggregates_calls(agg), 15);
	aggregates_free(agg);
	free(percpu);
	snprintf(expect, sizeof(expect), "%u|%u|7;%u|%u|8;", a.size_log2, a.align_log2, b.size_log2,
		 b.align_log2);
	assert_string_equal(sql_rows(f->db, "SELECT size_log2, align_log2, SUM(count)"
					    " FROM map_aggregates GROUP BY 1, 2"
					    " ORDER BY MIN(flush_ns), SUM(count)"),
			    expect);
}

static int count_overflow(uint32_t cpu, uint32_t kind, uint64_t lost, void *ctx)
{
	uint64_t *total = ctx;

	(void)cpu;
	assert_int_equal(kind, IT_EV_MAP);
	*total += lost;
	return 0;
}

/* A full aggregates hash: the classes it holds keep counting, the calls of a class it cannot add
 * are counted as lost, so that counted + lost is every call. */
static void full_aggregates_count_overflow(void **state)
{
	struct fixture *f = load_with(
		&(struct bpf_capture_opts){ .mode = CAPTURE_AGGREGATE, .aggregate_entries = 2 });
	uint64_t args[] = { 0x1000, 0x2000, 4096 }, lost = 0;
	struct aggregates *a;

	*state = f;
	for (uint64_t size = 4096; size <= 16384; size *= 2) {
		args[2] = size;
		fire(f, "raw_map", args, 3);
		fire(f, "raw_map", args, 3);
	}
	a = new_aggregates(f);
	assert_non_null(a);
	assert_int_equal(aggregates_flush(a, 1), 2);
	assert_int_equal(aggregates_calls(a), 4);
	aggregates_free(a);
	assert_int_equal(bpf_capture_aggregate_losses(f->cap, count_overflow, &lost), 0);
	assert_int_equal(lost, 2);
	drain(f);
}

static int count_loss(uint32_t cpu, uint32_t kind, uint64_t lost, void *ctx)
{
	uint64_t *total = ctx;

	assert_int_equal(kind, IT_EV_MAP);
	*total += lost;
	return 0;
}

/* A full ring buffer: every record not delivered is counted as lost, none silently. */
static void full_ring_buffer_counts_every_loss(void **state)
{
	struct fixture *f = load(4096);
	const uint64_t map_args[] = { 0x1000, 0x2000, 4096 };
	uint64_t lost = 0;

	for (int i = 0; i < 100; i++)
		fire(f, "raw_map", map_args, 3);
	drain(f);
	assert_int_equal(bpf_capture_losses(f->cap, count_loss, &lost), 0);
	assert_true(f->delivered > 0 && f->delivered < 100);
	assert_int_equal(f->delivered + lost, 100);
	*state = f;
}

/* Whether the capture's reader is woken (its epoll fd readable) within wait_ms */
static bool woken(struct fixture *f, int wait_ms)
{
	struct epoll_event ev;
	int fd = bpf_capture_epoll_fd(f->cap);

	assert_true(fd >= 0);
	return epoll_wait(fd, &ev, 1, wait_ms) == 1;
}

/* The handlers wake the reader only when the records waiting reach another sixteenth of the ring
 * buffer, not for each record that finds it caught up (the ring buffer's own rule); a poll that
 * times out still delivers the records below that mark. */
static void reader_is_woken_per_sixteenth_of_the_ring(void **state)
{
	struct fixture *f = load(64 << 10);
	const uint64_t map_args[] = { 0x1000, 0x2000, 4096 };
	const size_t mark = (64 << 10) / 16, record = IT_RECORD_BYTES;
	uint64_t below = 0;

	*state = f;
	assert_false(woken(f, 0));
	fire(f, "raw_map", map_args, 3);
	assert_false(woken(f, 20));
	assert_int_equal(bpf_capture_poll(f->cap, 1, on_event, f), 1);
	/* from empty again: the records below the mark wake no one, the one reaching it does */
	while ((below + 1) * record < mark) {
		fire(f, "raw_map", map_args, 3);
		below++;
	}
	assert_false(woken(f, 20));
	fire(f, "raw_map", map_args, 3);
	assert_true(woken(f, 1000));
	drain(f);
	assert_int_equal(f->delivered, below + 2);
}

static int count_event(const struct it_event *e, void *ctx)
{
	(void)e;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* A reader that handlers outrun gets back to its loop: one poll delivers at most its budget,
 * leaving the rest for the next, each record delivered once. */
static void poll_delivers_at_most_its_budget(void **state)
{
	struct fixture *f = *state;
	const uint64_t map_args[] = { 0x1000, 0x2000, 4096 };
	uint64_t counted = 0;

	assert_true((BPF_CAPTURE_POLL_BUDGET + 5) * IT_RECORD_BYTES < (16u << 20));
	for (int i = 0; i < BPF_CAPTURE_POLL_BUDGET + 5; i++)
		fire(f, "raw_map", map_args, 3);
	/* the budget holds for a poll that waits (the handlers woke it) and for one that does
	 * not, and is per call */
	assert_int_equal(bpf_capture_poll(f->cap, 10, count_event, &counted),
			 BPF_CAPTURE_POLL_BUDGET);
	assert_int_equal(counted, BPF_CAPTURE_POLL_BUDGET);
	assert_int_equal(bpf_capture_poll(f->cap, 0, count_event, &counted), 5);
	assert_int_equal(bpf_capture_poll(f->cap, 0, count_event, &counted), 0);
	assert_int_equal(counted, BPF_CAPTURE_POLL_BUDGET + 5);
	for (int i = 0; i < BPF_CAPTURE_POLL_BUDGET + 1; i++)
		fire(f, "raw_map", map_args, 3);
	assert_int_equal(bpf_capture_poll(f->cap, 0, count_event, &counted),
			 BPF_CAPTURE_POLL_BUDGET);
	assert_int_equal(bpf_capture_poll(f->cap, 0, count_event, &counted), 1);
}

/* The benchmark's replay program runs the map and unmap handlers on the storm of replay.h, events
 * first to first + count - 1, at most IT_REPLAY_MAX_BATCH of them per run; the recorder, which
 * does not ask for it, does not load it. */
static void replay_runs_the_handlers_on_the_storm(void **state)
{
	const uint64_t args[] = { 6, 4 }, too_many[] = { 0, IT_REPLAY_MAX_BATCH + 5 };
	struct fixture *f = load_with(&(struct bpf_capture_opts){ 0 });
	char expect[256];

	assert_true(bpf_capture_prog_fd(f->cap, "replay_map_unmap") < 0);
	teardown((void **)&f);
	*state = f = load_with(&(struct bpf_capture_opts){ .replay = true });
	fire(f, "replay_map_unmap", args, 2);
	drain(f);
	assert_int_equal(f->delivered, 4);
	snprintf(expect, sizeof(expect), "%llu|%llu|4096;%llu|%llu|4096;", IT_REPLAY_IOVA(6ull),
		 IT_REPLAY_PADDR(6ull), IT_REPLAY_IOVA(8ull), IT_REPLAY_PADDR(8ull));
	assert_string_equal(sql_rows(f->db,
				     "SELECT iova, paddr, size_bytes FROM maps ORDER BY map_id"),
			    expect);
	snprintf(expect, sizeof(expect), "%llu|4096|4096;%llu|4096|4096;", IT_REPLAY_IOVA(7ull),
		 IT_REPLAY_IOVA(9ull));
	assert_string_equal(sql_rows(f->db, "SELECT iova, size_bytes, unmapped_bytes FROM unmaps"
					    " ORDER BY unmap_id"),
			    expect);
	fire(f, "replay_map_unmap", too_many, 2);
	while (bpf_capture_poll(f->cap, 0, count_event, &f->delivered) > 0)
		;
	assert_int_equal(f->delivered, 4 + IT_REPLAY_MAX_BATCH);
}

/* A program the kernel will not load (here: tp_btf on a tracepoint this kernel lacks) is left out
 * with its reason, and the others load. */
static void refused_program_is_left_out(void **state)
{
	struct probe_plan plan;
	struct bpf_capture *cap;
	struct probe *p = NULL;
	char err[256];

	assert_int_equal(probe_plan_build(&plan, &(struct probe_plan_opts){ .no_functions = true },
					  err, sizeof(err)),
			 0);
	for (size_t i = 0; i < plan.count; i++)
		if (plan.probes[i].mech == MECH_NONE)
			p = &plan.probes[i];
	if (!p) {
		printf("SKIP: every tracepoint of the plan exists on this kernel: none to force\n");
		skip();
	}
	p->mech = MECH_TP_BTF;
	cap = bpf_capture_load(&plan, NULL, err, sizeof(err));
	assert_non_null(cap);
	assert_int_equal(p->mech, MECH_NONE);
	assert_non_null(strstr(p->reason, "tp_btf program refused by the kernel"));
	assert_true(bpf_capture_prog_fd(cap, "btf_map") >= 0);
	bpf_capture_close(cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(map_and_unmap_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(record_names_its_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(records_take_domain_of_current_call, setup,
						teardown),
		cmocka_unit_test_teardown(tracepoints_only_looks_up_no_call, teardown),
		cmocka_unit_test_setup_teardown(device_fault_and_flush_rows, setup, teardown),
		cmocka_unit_test_teardown(full_ring_buffer_counts_every_loss, teardown),
		cmocka_unit_test_teardown(reader_is_woken_per_sixteenth_of_the_ring, teardown),
		cmocka_unit_test_setup_teardown(poll_delivers_at_most_its_budget, setup, teardown),
		cmocka_unit_test_teardown(threshold_mode_rows_and_counts, teardown),
		cmocka_unit_test_teardown(driver_call_gives_domain_inside_range, teardown),
		cmocka_unit_test_teardown(aggregate_mode_counts_in_driver_call_domain, teardown),
		cmocka_unit_test_teardown(threshold_mode_releases_held_driver_calls, teardown),
		cmocka_unit_test_teardown(threshold_mode_counts_calls_held_at_the_end, teardown),
		cmocka_unit_test_teardown(threshold_mode_counts_calls_held_on_another_cpu,
					  teardown),
		cmocka_unit_test_teardown(aggregate_mode_counts_all_and_flushes_growth, teardown),
		cmocka_unit_test_teardown(flushed_classes_count_in_their_slots, teardown),
		cmocka_unit_test_teardown(full_aggregates_count_overflow, teardown),
		cmocka_unit_test_teardown(replay_runs_the_handlers_on_the_storm, teardown),
		cmocka_unit_test(refused_program_is_left_out),
	};
	char missing[96];

	if (!privilege_can_trace_bpf(missing, sizeof(missing))) {
		printf("SKIP: BPF handler tests need %s (run as root)\n", missing);
		return 77;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		printf("SKIP: BPF handler tests need kernel BTF (/sys/kernel/btf/vmlinux)\n");
		return 77;
	}
	return cmocka_run_group_tests_name("BPF handlers (BPF_PROG_TEST_RUN)", tests, NULL, NULL);
}
