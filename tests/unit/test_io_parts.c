/* The engine-independent parts of `io`: the latency histogram's buckets and percentiles, the
 * command cursor (LBAs inside the namespace, per-slot buffer shares that never overlap and cover
 * the window), and the testbed pattern check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "io/lat_hist.h"
#include "io/pattern.h"
#include "io/workload.h"

static void hist_buckets_are_tight(void **state)
{
	uint64_t lo, hi;

	/* every value lies in its bucket, and a bucket is within 1/16 of its values */
	for (uint64_t v = 1; v < (1ull << 40); v = v * 3 + 1) {
		struct lat_hist h = { 0 };
		unsigned i;

		lat_hist_add(&h, v);
		for (i = 0; i < LAT_HIST_BUCKETS && !h.buckets[i]; i++)
			;
		lat_hist_bucket_range(i, &lo, &hi);
		assert_true(lo <= v && v <= hi);
		assert_true((hi - lo) * 16 <= lo);
	}
	lat_hist_bucket_range(0, &lo, &hi);
	assert_int_equal(hi, 0);
	lat_hist_bucket_range(16, &lo, &hi);
	assert_int_equal(lo, 16);
	assert_int_equal(hi, 16);
	lat_hist_bucket_range(32, &lo, &hi);
	assert_int_equal(lo, 32);
	assert_int_equal(hi, 33);
}

static void hist_percentiles(void **state)
{
	struct lat_hist *h = calloc(1, sizeof(*h)), *other = calloc(1, sizeof(*other));

	assert_int_equal(lat_hist_percentile(h, 0.5), 0);
	for (uint64_t v = 1; v <= 1000; v++)
		lat_hist_add(h, v * 1000);	/* 1 us .. 1 ms */
	assert_int_equal(h->count, 1000);
	assert_int_equal(h->sum_ns, 500500000);
	assert_int_equal(h->max_ns, 1000000);
	/* the bucket holding the 500th value (500 us), reported by its upper bound */
	assert_true(lat_hist_percentile(h, 0.5) >= 500000);
	assert_true(lat_hist_percentile(h, 0.5) <= 500000 + 500000 / 16);
	assert_true(lat_hist_percentile(h, 0.99) >= 990000);
	assert_int_equal(lat_hist_percentile(h, 1.0), 1000000);	/* never above the max */
	lat_hist_add(other, 5000000);
	lat_hist_merge(h, other);
	assert_int_equal(h->count, 1001);
	assert_int_equal(h->max_ns, 5000000);
	assert_int_equal(lat_hist_percentile(h, 1.0), 5000000);
	free(h);
	free(other);
}

static void cursor_slots_never_overlap(void **state)
{
	struct io_point p = { .workload = IO_RANDREAD, .bs = 8192, .qd = 3, .window = 10 * 8192,
			      .seed = 42 };
	struct io_cursor c;
	uint64_t owner[10];

	assert_int_equal(io_cursor_init(&c, &p, 512, 1000), 0);
	memset(owner, 0xff, sizeof(owner));
	for (int round = 0; round < 20; round++) {
		for (uint32_t slot = 0; slot < 3; slot++) {
			uint64_t off = io_cursor_next_offset(&c, slot), lba = io_cursor_next_lba(&c);

			assert_int_equal(off % 8192, 0);
			assert_true(off + 8192 <= p.window);
			if (owner[off / 8192] == UINT64_MAX)
				owner[off / 8192] = slot;
			assert_int_equal(owner[off / 8192], slot);	/* one slot per piece */
			assert_int_equal(lba % 16, 0);			/* bs-aligned */
			assert_true(lba + 16 <= 1000);			/* inside the namespace */
		}
	}
	/* 3 slots x 3 pieces each: 9 of the 10 pieces in use */
	for (int i = 0; i < 9; i++)
		assert_true(owner[i] < 3);
	io_cursor_free(&c);
}

static void cursor_sequential_wraps(void **state)
{
	struct io_point p = { .workload = IO_SEQREAD, .bs = 4096, .qd = 1, .window = 4096 };
	struct io_cursor c;

	assert_int_equal(io_cursor_init(&c, &p, 4096, 3), 0);
	assert_int_equal(io_cursor_next_lba(&c), 0);
	assert_int_equal(io_cursor_next_lba(&c), 1);
	assert_int_equal(io_cursor_next_lba(&c), 2);
	assert_int_equal(io_cursor_next_lba(&c), 0);
	io_cursor_free(&c);
}

static void cursor_refuses_what_does_not_fit(void **state)
{
	struct io_point small_window = { .bs = 4096, .qd = 4, .window = 3 * 4096 };
	struct io_point big_read = { .bs = 1 << 20, .qd = 1, .window = 1 << 20 };
	struct io_cursor c;

	assert_int_equal(io_cursor_init(&c, &small_window, 512, 1 << 20), -1);
	assert_int_equal(io_cursor_init(&c, &big_read, 512, 100), -1);
}

static void pattern_matches_and_points_at_mismatch(void **state)
{
	uint8_t buf[3 * PATTERN_SECTOR];

	for (uint64_t s = 0; s < 3; s++) {
		uint8_t *p = buf + s * PATTERN_SECTOR;
		uint64_t n = 1000 + s;

		memcpy(p, &n, 8);	/* x86: little-endian, as the disk holds it */
		memcpy(p + 8, "IOMMUTRC", 8);
		for (unsigned i = 16; i < PATTERN_SECTOR; i++)
			p[i] = (uint8_t)i;
	}
	assert_int_equal(pattern_mismatch(buf, 1000, sizeof(buf)), -1);
	assert_int_equal(pattern_mismatch(buf, 1001, sizeof(buf)), 0);	/* wrong sector */
	buf[PATTERN_SECTOR + 300] ^= 1;
	assert_int_equal(pattern_mismatch(buf, 1000, sizeof(buf)), PATTERN_SECTOR + 300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hist_buckets_are_tight),
		cmocka_unit_test(hist_percentiles),
		cmocka_unit_test(cursor_slots_never_overlap),
		cmocka_unit_test(cursor_sequential_wraps),
		cmocka_unit_test(cursor_refuses_what_does_not_fit),
		cmocka_unit_test(pattern_matches_and_points_at_mismatch),
	};

	return cmocka_run_group_tests_name("io parts", tests, NULL, NULL);
}
