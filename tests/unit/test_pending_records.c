/* The queue of driver records waiting for their event (tracer/pending_records.h): oldest first,
 * each thread's records in order, records taken out of the middle, the gaps closed when the
 * slots run out, many more threads over time than the table of threads holds, and the idle tasks
 * of two CPUs kept apart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "tracer/pending_records.h"

static struct it_event record(uint32_t tid, uint32_t cpu, uint64_t ts)
{
	struct it_event e;

	memset(&e, 0, sizeof(e));
	e.h.kind = IT_EV_DRIVER_MAP;
	e.h.tid = tid;
	e.h.cpu = cpu;
	e.h.ts_ns = ts;
	return e;
}

/* The timestamps of the thread's records, in order, into out; how many. */
static size_t thread_ts(struct pending_records *q, uint32_t tid, uint32_t cpu, uint64_t *out,
			size_t max)
{
	struct it_event_header h = { .tid = tid, .cpu = cpu };
	uint32_t slot = PENDING_NONE;
	size_t n = 0;

	while ((slot = pending_records_next_of_thread(q, &h, slot)) != PENDING_NONE && n < max)
		out[n++] = pending_records_at(q, slot)->h.ts_ns;
	return n;
}

static void threads_in_order(void **state)
{
	struct pending_records *q = pending_records_new(8);
	uint64_t ts[8];
	uint32_t slot;

	(void)state;
	assert_non_null(q);
	assert_int_equal(pending_records_oldest(q), PENDING_NONE);
	for (uint64_t i = 0; i < 6; i++)
		pending_records_push(q, &(struct it_event){ .h = { .tid = i % 2 ? 43 : 42,
								   .cpu = 1,
								   .ts_ns = i } });
	assert_int_equal(thread_ts(q, 42, 0, ts, 8), 3);
	assert_int_equal(ts[0], 0);
	assert_int_equal(ts[1], 2);
	assert_int_equal(ts[2], 4);
	/* the middle one of 42 out: 43's chain and the order stay */
	slot = pending_records_next_of_thread(q, &(struct it_event_header){ .tid = 42 },
					      PENDING_NONE);
	slot = pending_records_next_of_thread(q, &(struct it_event_header){ .tid = 42 }, slot);
	pending_records_remove(q, slot);
	assert_int_equal(thread_ts(q, 42, 0, ts, 8), 2);
	assert_int_equal(ts[1], 4);
	assert_int_equal(pending_records_thread_count(q, &(struct it_event_header){ .tid = 42 }),
			 2);
	assert_int_equal(thread_ts(q, 43, 0, ts, 8), 3);
	/* the oldest out: the next oldest is 43's first */
	pending_records_remove(q, pending_records_oldest(q));
	assert_int_equal(pending_records_at(q, pending_records_oldest(q))->h.ts_ns, 1);
	assert_int_equal(pending_records_count(q), 4);
	assert_int_equal(thread_ts(q, 44, 0, ts, 8), 0);
	pending_records_free(q);
}

/* Many more pushes than slots, half taken out as they come: the gaps are closed, nothing lost,
 * nothing reordered. */
static void gaps_closed(void **state)
{
	struct pending_records *q = pending_records_new(4);
	uint64_t ts[8], expect = 0;

	(void)state;
	for (uint64_t i = 0; i < 1000; i++) {
		uint32_t slot;

		if (pending_records_full(q)) {
			slot = pending_records_oldest(q);
			assert_int_equal(pending_records_at(q, slot)->h.ts_ns, expect);
			pending_records_remove(q, slot);
			expect += 2;
		}
		slot = pending_records_push(q, &(struct it_event){
						       .h = { .tid = 7, .ts_ns = i, .cpu = 0 } });
		/* every odd record is taken out at once, from the thread's end */
		if (i % 2)
			pending_records_remove(q, slot);
	}
	/* the last push (999) found it full and was taken out: 994, 996, 998 stay */
	assert_int_equal(pending_records_count(q), 3);
	assert_int_equal(thread_ts(q, 7, 0, ts, 8), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(ts[i], 994 + 2 * i);
	/* the thread's count followed every push, removal and closing of gaps */
	assert_int_equal(pending_records_thread_count(q, &(struct it_event_header){ .tid = 7 }), 3);
	while (pending_records_count(q))
		pending_records_remove(q, pending_records_oldest(q));
	assert_int_equal(pending_records_oldest(q), PENDING_NONE);
	assert_int_equal(pending_records_thread_count(q, &(struct it_event_header){ .tid = 7 }), 0);
	pending_records_free(q);
}

/* Threads come and go, far more of them over time than the table of threads holds (one and a
 * half times the limit): each thread's records and count stay exact, a thread whose records all
 * went has none, and one that comes back starts a chain again. */
static void many_threads_over_time(void **state)
{
	struct pending_records *q = pending_records_new(4);
	struct it_event_header h = { 0 };
	uint64_t ts[8];

	(void)state;
	for (uint32_t i = 0; i < 1000; i++) {
		/* threads 1 to 3 come back every few records; the others are new each time */
		uint32_t tid = i % 5 == 0 ? 1 + i / 5 % 3 : 100 + i;
		uint32_t slot;

		if (pending_records_full(q))
			pending_records_remove(q, pending_records_oldest(q));
		slot = pending_records_push(q,
					    &(struct it_event){ .h = { .tid = tid, .ts_ns = i } });
		/* a new thread's record is mostly taken out at once */
		if (tid >= 100 && i % 4)
			pending_records_remove(q, slot);
	}
	/* held: 992 (thread 1092), 995 (thread 2), 996 (thread 1096) */
	assert_int_equal(pending_records_count(q), 3);
	h.tid = 2;
	assert_int_equal(pending_records_thread_count(q, &h), 1);
	assert_int_equal(thread_ts(q, 2, 0, ts, 8), 1);
	assert_int_equal(ts[0], 995);
	assert_int_equal(thread_ts(q, 1092, 0, ts, 8), 1);
	assert_int_equal(ts[0], 992);
	h.tid = 1;
	assert_int_equal(pending_records_thread_count(q, &h), 0);
	assert_int_equal(pending_records_next_of_thread(q, &h, PENDING_NONE), PENDING_NONE);
	h.tid = 3;
	assert_int_equal(pending_records_thread_count(q, &h), 0);
	/* thread 1 back: a chain of its own again */
	pending_records_push(q, &(struct it_event){ .h = { .tid = 1, .ts_ns = 2000 } });
	pending_records_remove(q, pending_records_oldest(q));
	pending_records_push(q, &(struct it_event){ .h = { .tid = 1, .ts_ns = 2001 } });
	assert_int_equal(thread_ts(q, 1, 0, ts, 8), 2);
	assert_int_equal(ts[0], 2000);
	assert_int_equal(ts[1], 2001);
	assert_int_equal(pending_records_at(q, pending_records_oldest(q))->h.ts_ns, 995);
	assert_int_equal(pending_records_count(q), 4);
	pending_records_free(q);
}

/* tid 0: the idle task of each CPU is a thread of its own */
static void idle_tasks_by_cpu(void **state)
{
	struct pending_records *q = pending_records_new(4);
	struct it_event a = record(0, 0, 10), b = record(0, 1, 20);
	uint64_t ts[4];

	(void)state;
	pending_records_push(q, &a);
	pending_records_push(q, &b);
	assert_int_equal(thread_ts(q, 0, 1, ts, 4), 1);
	assert_int_equal(ts[0], 20);
	assert_int_equal(thread_ts(q, 0, 0, ts, 4), 1);
	assert_int_equal(ts[0], 10);
	/* a real thread numbered like the idle key is not confused with it */
	assert_int_equal(thread_ts(q, 1u << 31, 0, ts, 4), 0);
	pending_records_free(q);
	assert_null(pending_records_new(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(threads_in_order),
		cmocka_unit_test(gaps_closed),
		cmocka_unit_test(many_threads_over_time),
		cmocka_unit_test(idle_tasks_by_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
