/* The engine-independent parts of `io`: the latency histogram's buckets and percentiles, the
 * command cursor (LBAs inside the namespace, per-slot buffer shares that never overlap and cover
 * the window), the testbed pattern check and fill, workload names, the CPU lists that place
 * workers, and the DMA area the user-space driver needs for a queue depth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "io/device_cpu.h"
#include "io/engine.h"
#include "io/lat_hist.h"
#include "io/nvme_io.h"
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
		lat_hist_add(h, v * 1000); /* 1 us .. 1 ms */
	assert_int_equal(h->count, 1000);
	assert_int_equal(h->sum_ns, 500500000);
	assert_int_equal(h->max_ns, 1000000);
	/* the bucket holding the 500th value (500 us), reported by its upper bound */
	assert_true(lat_hist_percentile(h, 0.5) >= 500000);
	assert_true(lat_hist_percentile(h, 0.5) <= 500000 + 500000 / 16);
	assert_true(lat_hist_percentile(h, 0.99) >= 990000);
	assert_int_equal(lat_hist_percentile(h, 1.0), 1000000); /* never above the max */
	lat_hist_add(other, 5000000);
	lat_hist_merge(h, other);
	assert_int_equal(h->count, 1001);
	assert_int_equal(h->max_ns, 5000000);
	assert_int_equal(lat_hist_percentile(h, 1.0), 5000000);
	free(h);
	/* p99 far below the max: 990 values of 1..990 us and 10 of 50 ms. The 990th value is 990 us:
	 * its bucket's upper bound, not the tail, bounded from both sides */
	h = calloc(1, sizeof(*h));
	for (uint64_t v = 1; v <= 990; v++)
		lat_hist_add(h, v * 1000);
	for (int i = 0; i < 10; i++)
		lat_hist_add(h, 50000000);
	assert_true(lat_hist_percentile(h, 0.99) >= 990000);
	assert_true(lat_hist_percentile(h, 0.99) <= 990000 + 990000 / 16);
	assert_true(lat_hist_percentile(h, 0.999) >= 50000000 - 50000000 / 16);
	free(h);
	free(other);
}

static void cursor_slots_never_overlap(void **state)
{
	struct io_point p = { .workload = IO_RANDREAD,
			      .bs = 8192,
			      .qd = 3,
			      .window = 10 * 8192,
			      .seed = 42 };
	struct io_cursor c;
	uint64_t owner[10];

	assert_int_equal(io_cursor_init(&c, &p, 512, 1000), 0);
	memset(owner, 0xff, sizeof(owner));
	for (int round = 0; round < 20; round++) {
		for (uint32_t slot = 0; slot < 3; slot++) {
			uint64_t off = io_cursor_next_offset(&c, slot),
				 lba = io_cursor_next_lba(&c);

			assert_int_equal(off % 8192, 0);
			assert_true(off + 8192 <= p.window);
			if (owner[off / 8192] == UINT64_MAX)
				owner[off / 8192] = slot;
			assert_int_equal(owner[off / 8192], slot); /* one slot per piece */
			assert_int_equal(lba % 16, 0); /* bs-aligned */
			assert_true(lba + 16 <= 1000); /* inside the namespace */
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

		memcpy(p, &n, 8); /* x86: little-endian, as the disk holds it */
		memcpy(p + 8, "IOMMUTRC", 8);
		for (unsigned i = 16; i < PATTERN_SECTOR; i++)
			p[i] = (uint8_t)i;
	}
	assert_int_equal(pattern_mismatch(buf, 1000, sizeof(buf)), -1);
	assert_int_equal(pattern_mismatch(buf, 1001, sizeof(buf)), 0); /* wrong sector */
	buf[PATTERN_SECTOR + 300] ^= 1;
	assert_int_equal(pattern_mismatch(buf, 1000, sizeof(buf)), PATTERN_SECTOR + 300);
}

/* What the write workloads write is what --verify accepts, sector numbers and all. */
static void pattern_fill_is_what_verify_accepts(void **state)
{
	uint8_t buf[4 * PATTERN_SECTOR];

	memset(buf, 0xaa, sizeof(buf));
	pattern_fill(buf, 77, sizeof(buf));
	assert_int_equal(pattern_mismatch(buf, 77, sizeof(buf)), -1);
	assert_int_equal(pattern_mismatch(buf + PATTERN_SECTOR, 78, 3 * PATTERN_SECTOR), -1);
	assert_int_equal(pattern_mismatch(buf, 76, sizeof(buf)), 0);
	assert_memory_equal(buf + 8, "IOMMUTRC", 8);
	assert_int_equal(buf[3 * PATTERN_SECTOR], 80);
}

static void workload_names(void **state)
{
	static const char *const names[] = { "randread", "seqread", "randwrite", "seqwrite" };
	enum io_workload w;

	for (int i = 0; i < 4; i++) {
		assert_int_equal(io_workload_parse(names[i], &w), 0);
		assert_string_equal(io_workload_name(w), names[i]);
		assert_int_equal(io_workload_writes(w), i >= 2);
		assert_int_equal(io_workload_random(w), i % 2 == 0);
	}
	assert_int_equal(io_workload_parse("write", &w), -1);
	assert_int_equal(io_workload_parse("", &w), -1);
}

static void cpulists(void **state)
{
	cpu_set_t set;

	assert_int_equal(cpulist_parse("0-3,8,10-11\n", &set), 0);
	assert_int_equal(CPU_COUNT(&set), 7);
	assert_true(CPU_ISSET(8, &set) && CPU_ISSET(11, &set) && !CPU_ISSET(9, &set));
	assert_int_equal(cpuset_nth(&set, 0), 0);
	assert_int_equal(cpuset_nth(&set, 4), 8);
	assert_int_equal(cpuset_nth(&set, 6), 11);
	assert_int_equal(cpuset_nth(&set, 7), 0); /* wraps */
	assert_int_equal(cpulist_parse("", &set), 0); /* a node without CPUs */
	assert_int_equal(cpuset_nth(&set, 0), -1);
	assert_int_equal(cpulist_parse("3-1", &set), -1);
	assert_int_equal(cpulist_parse("1,,2", &set), -1);
	assert_int_equal(cpulist_parse("x", &set), -1);
	assert_int_equal(cpulist_parse("99999", &set), -1);
}

/* Queues of qd + 1 entries, three pages of admin structures, PRP lists only past one page per
 * command (64 bytes for 128 KiB, a page for 2 MiB), all rounded up to 2 MiB. */
static void driver_dma_area_sizes(void **state)
{
	const uint64_t mib2 = 2ull << 20;

	assert_int_equal(nvme_io_dma_bytes(32, 4096), mib2);
	assert_int_equal(nvme_io_dma_bytes(255, 2 << 20), mib2); /* 3 + 4 + 1 + 255 pages */
	assert_int_equal(nvme_io_dma_bytes(511, 2 << 20), 2 * mib2); /* 3 + 8 + 2 + 511 */
	/* 2047: SQ 32 pages, CQ 8, lists 2047 x 256 bytes = 128 pages; 3 + 32 + 8 + 128 */
	assert_int_equal(nvme_io_dma_bytes(2047, 128 << 10), mib2);
	/* NVME_IO_MAX_QD: SQ 4 MiB and CQ 1 MiB, no lists for 4 KiB reads */
	assert_int_equal(nvme_io_dma_bytes(NVME_IO_MAX_QD, 4096), 3 * mib2);
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
		cmocka_unit_test(pattern_fill_is_what_verify_accepts),
		cmocka_unit_test(workload_names),
		cmocka_unit_test(cpulists),
		cmocka_unit_test(driver_dma_area_sizes),
	};

	return cmocka_run_group_tests_name("io parts", tests, NULL, NULL);
}
