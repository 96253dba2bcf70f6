/* The map run report: passed through a memfd intact, refused when truncated or foreign, and
 * stored with the pages the leaf rule expects, which map_pages_check_view sets beside the
 * recorded driver pages (the reference study's BAR window, a shifted IOVA, a domain's bitmap). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include "tests/sql_rows.h"
#include "common/db.h"
#include "common/leaf.h"
#include "probes/map_report.h"
#include "common/schema.h"

#define BAR_START 0x800000000ull
#define M246 (246ull << 20)

static struct backing_run bar_run = { .offset = 0,
				      .paddr = BAR_START + M246,
				      .size = 512ull << 20 };

static struct map_report bar_report(void)
{
	struct map_report r = { .mapper = "type1",
				.device = "0000:00:05.0",
				.buffer = "bar:0000:00:05.0/2",
				.buffer_kind = "bar",
				.bar_device = "0000:00:05.0",
				.bar_index = 2,
				.bar_start = BAR_START,
				.bar_offset = M246,
				.size = 512ull << 20,
				.iova = LEAF_1G,
				.vaddr = 0x7f0000000000ull,
				.repeat = 1,
				.maps_done = 1,
				.mapper_pgsize_bitmap = LEAF_4K | LEAF_2M | LEAF_1G,
				.nruns = 1,
				.runs = &bar_run };
	return r;
}

static void round_trip(void **state)
{
	struct map_report in = bar_report(), out;
	int fd = memfd_create("report", 0);

	assert_true(fd >= 0);
	assert_int_equal(map_report_read(fd, &out), 1); /* nothing written yet */
	in.nruns = 0;
	assert_int_equal(map_report_write(fd, &in), 0); /* the parameters first */
	in.nruns = 1;
	in.maps_done = 3;
	assert_int_equal(map_report_write(fd, &in), 0); /* then over it, measured */
	assert_int_equal(map_report_read(fd, &out), 0);
	assert_string_equal(out.buffer, "bar:0000:00:05.0/2");
	assert_int_equal(out.maps_done, 3);
	assert_int_equal(out.nruns, 1);
	assert_memory_equal(out.runs, &bar_run, sizeof(bar_run));
	map_report_free(&out);
	close(fd);
}

static void refuses_truncated_and_foreign(void **state)
{
	struct map_report in = bar_report(), out;
	int fd = memfd_create("report", 0);
	off_t full;

	assert_true(fd >= 0);
	assert_int_equal(map_report_write(fd, &in), 0);
	full = lseek(fd, 0, SEEK_END);
	assert_int_equal(ftruncate(fd, full - 1), 0); /* a run cut short */
	assert_int_equal(map_report_read(fd, &out), -1);
	assert_null(out.runs);
	assert_int_equal(map_report_write(fd, &in), 0);
	assert_int_equal(pwrite(fd, "X", 1, 0), 1); /* not our magic */
	assert_int_equal(map_report_read(fd, &out), -1);
	close(fd);
}

static sqlite3 *session_db(int64_t *sid)
{
	char err[256];
	sqlite3 *db = itdb_open(":memory:", ITDB_CREATE, &it_recorded_schema, err, sizeof(err));

	assert_non_null(db);
	assert_int_equal(itdb_session_begin(db,
					    &(struct itdb_session_info){ .kind = "record",
									 .capture = "bpf" },
					    sid),
			 0);
	return db;
}

static void driver_pages(sqlite3 *db, int64_t sid, uint64_t iova, uint64_t pgsize, uint64_t n)
{
	char sql[256];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO driver_maps(session_id, op, iova, pgsize_bytes,"
		 " pgcount, source) VALUES (%lld, 'map', %llu, %llu, %llu, 'observed')",
		 (long long)sid, (unsigned long long)iova, (unsigned long long)pgsize,
		 (unsigned long long)n);
	assert_int_equal(itdb_exec(db, sql, "test"), 0);
}

/* 512 MiB at BAR offset 246 MiB, IOVA 1 GiB: 2 MiB x 256, as the study's driver wrote it. */
static void stores_bar_window_with_expected_pages(void **state)
{
	struct map_report r = bar_report();
	int64_t sid;
	sqlite3 *db = session_db(&sid);

	assert_int_equal(map_report_store(db, sid, &r), 0);
	assert_string_equal(sql_rows(db,
				     "SELECT mapper, device, buffer_kind, bar_index,"
				     " printf('0x%x', bar_offset_bytes), printf('0x%x', iova),"
				     " iova_given, maps_done, expected_pgsize_source, thp_bytes,"
				     " phys_runs FROM map_runs"),
			    "type1|0000:00:05.0|bar|2|0xf600000|0x40000000|0|1|mapper|NULL|1;");
	assert_string_equal(sql_rows(db,
				     "SELECT printf('0x%x', paddr), size_bytes FROM map_backing"),
			    "0x80f600000|536870912;");
	assert_string_equal(sql_rows(db, "SELECT pgsize_bytes, pgcount FROM map_expected_pages"),
			    "2097152|256;");
	driver_pages(db, sid, LEAF_1G, LEAF_2M, 256);
	driver_pages(db, sid, 0, LEAF_4K, 2); /* outside the run's IOVA range: not counted */
	assert_string_equal(sql_rows(db, "SELECT pgsize_bytes, expected_pages, seen_pages, source,"
					 " agrees FROM map_pages_check_view"),
			    "2097152|256|256|observed|1;");
	itdb_close(db);
}

/* The same window at an IOVA 4 KiB off: 4 KiB pages only; the 2 MiB pages a wrong driver
 * would have written show up as disagreement on both sizes. */
static void shifted_iova_expects_4k_and_flags_mismatch(void **state)
{
	struct map_report r = bar_report();
	int64_t sid;
	sqlite3 *db = session_db(&sid);

	r.iova = LEAF_1G + LEAF_4K;
	r.iova_given = 1;
	assert_int_equal(map_report_store(db, sid, &r), 0);
	assert_string_equal(sql_rows(db, "SELECT pgsize_bytes, pgcount FROM map_expected_pages"),
			    "4096|131072;");
	driver_pages(db, sid, LEAF_1G + LEAF_4K, LEAF_2M, 256);
	assert_string_equal(sql_rows(db, "SELECT pgsize_bytes, expected_pages, seen_pages, agrees"
					 " FROM map_pages_check_view ORDER BY pgsize_bytes"),
			    "4096|131072|0|0;2097152|0|256|0;");
	itdb_close(db);
}

/* No bitmap from the mapper (iommufd): the recorded domain's, found through the map at the
 * IOVA; scattered host pages give one leaf split per physical run, repeated maps multiply. */
static void domain_bitmap_and_scattered_runs(void **state)
{
	struct backing_run runs[] = {
		{ .offset = 0, .paddr = 0x40000000, .size = LEAF_2M }, /* one 2 MiB page */
		{ .offset = LEAF_2M, .paddr = 0x7000, .size = 3 * LEAF_4K }, /* 4 KiB pages */
	};
	struct map_report r = { .mapper = "iommufd",
				.device = "0000:00:04.0",
				.buffer = "thp",
				.buffer_kind = "thp",
				.size = LEAF_2M + 3 * LEAF_4K,
				.iova = LEAF_1G,
				.repeat = 2,
				.maps_done = 2,
				.thp_bytes = LEAF_2M,
				.nruns = 2,
				.runs = runs };
	int64_t sid;
	sqlite3 *db = session_db(&sid);
	char sql[256];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO domains(session_id, domain_ptr, pgsize_bitmap)"
		 " VALUES (%lld, 4096, %llu); INSERT INTO maps(session_id, ts_ns, domain_ptr, iova,"
		 " paddr, size_bytes) VALUES (%lld, 1, 4096, %llu, 0, 1)",
		 (long long)sid, LEAF_4K | LEAF_2M, (long long)sid, LEAF_1G);
	assert_int_equal(itdb_exec(db, sql, "test"), 0);
	assert_int_equal(map_report_store(db, sid, &r), 0);
	assert_string_equal(sql_rows(db, "SELECT expected_pgsize_bitmap, expected_pgsize_source,"
					 " thp_bytes, hugetlb_bytes, phys_runs FROM map_runs"),
			    "2101248|domain|2097152|0|2;");
	assert_string_equal(sql_rows(db, "SELECT pgsize_bytes, pgcount FROM map_expected_pages"
					 " ORDER BY pgsize_bytes"),
			    "4096|3;2097152|1;");
	driver_pages(db, sid, LEAF_1G, LEAF_2M, 2);
	driver_pages(db, sid, LEAF_1G + LEAF_2M, LEAF_4K, 6);
	assert_string_equal(sql_rows(db, "SELECT pgsize_bytes, expected_pages, agrees"
					 " FROM map_pages_check_view ORDER BY pgsize_bytes"),
			    "4096|6|1;2097152|2|1;");
	itdb_close(db);
}

/* Neither the mapper nor a recorded domain gives page sizes: the run is stored, nothing is
 * expected. */
static void no_bitmap_no_expectation(void **state)
{
	struct map_report r = bar_report();
	int64_t sid;
	sqlite3 *db = session_db(&sid);

	r.mapper_pgsize_bitmap = 0;
	assert_int_equal(map_report_store(db, sid, &r), 0);
	assert_string_equal(sql_rows(db, "SELECT expected_pgsize_bitmap, expected_pgsize_source,"
					 " phys_runs FROM map_runs"),
			    "NULL|NULL|1;");
	assert_string_equal(sql_rows(db, "SELECT count(*) FROM map_expected_pages"), "0;");
	itdb_close(db);
}

/* Two rounds of a vgem-like import, 8 MiB in one DMA segment at 4 GiB each time: the report's
 * segments survive the trip between processes. */
static struct map_segment import_segs[] = {
	{ .repetition = 0, .offset = 0, .dma_addr = 1ull << 32, .length = 8ull << 20 },
	{ .repetition = 1, .offset = 0, .dma_addr = 1ull << 32, .length = 8ull << 20 },
};

static struct map_report import_report(void)
{
	struct map_report r = { .mapper = "dma_buf",
				.device = "0000:00:04.0",
				.buffer = "vgem",
				.buffer_kind = "vgem",
				.exporter = "drm",
				.size = 8ull << 20,
				.iova = 1ull << 32,
				.repeat = 2,
				.maps_done = 2,
				.nsegs = 2,
				.segs = import_segs };
	return r;
}

static void round_trip_with_segments(void **state)
{
	struct map_report in = import_report(), out;
	int fd = memfd_create("report", 0);

	assert_true(fd >= 0);
	assert_int_equal(map_report_write(fd, &in), 0);
	assert_int_equal(map_report_read(fd, &out), 0);
	assert_string_equal(out.exporter, "drm");
	assert_int_equal(out.nruns, 0);
	assert_int_equal(out.nsegs, 2);
	assert_memory_equal(out.segs, import_segs, sizeof(import_segs));
	map_report_free(&out);
	close(fd);
}

/* User space could not see the import's pages: its physical runs are the maps recorded in the
 * first round's segment (the second round's map at the same IOVA is not a second run), the
 * leaf rule runs over them at their IOVAs (an aligned 4 MiB run: 2 MiB pages; one 4 KiB off:
 * 4 KiB pages), the BAR view places the second run 4 KiB into a BAR, and the check counts the
 * driver pages of both rounds. */
static void import_runs_from_recorded_maps(void **state)
{
	struct map_report r = import_report();
	int64_t sid;
	sqlite3 *db = session_db(&sid);
	char sql[1024];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO domains(session_id, domain_ptr, pgsize_bitmap) VALUES (%lld, 7, %llu);"
		 "INSERT INTO maps(session_id, ts_ns, domain_ptr, iova, paddr, size_bytes) VALUES"
		 " (%lld, 1, 7, 4294967296, 8589934592, 4194304),"
		 " (%lld, 2, 7, 4299161600, 12884905984, 4194304),"
		 " (%lld, 3, 7, 4294967296, 17179869184, 4194304),"
		 " (%lld, 4, 7, 4303355904, 0, 4096);"
		 "INSERT INTO bars(session_id, bdf, bar_index, start_addr, size_bytes, is_64bit,"
		 " prefetchable) VALUES (%lld, '0000:00:05.0', 2, 12884901888, 1073741824, 1, 1)",
		 (long long)sid, LEAF_4K | LEAF_2M, (long long)sid, (long long)sid, (long long)sid,
		 (long long)sid, (long long)sid);
	assert_int_equal(itdb_exec(db, sql, "test"), 0);
	assert_int_equal(map_report_store(db, sid, &r), 0);
	assert_string_equal(sql_rows(db, "SELECT mapper, exporter, dma_segments, phys_source,"
					 " phys_runs, expected_pgsize_source FROM map_runs"),
			    "dma_buf|drm|1|recorded|2|domain;");
	assert_string_equal(sql_rows(db, "SELECT repetition, segment_index, dma_addr, length_bytes"
					 " FROM map_dma_segments ORDER BY repetition"),
			    "0|0|4294967296|8388608;1|0|4294967296|8388608;");
	assert_string_equal(sql_rows(db,
				     "SELECT offset_bytes, paddr_hex, bar_device, bar_index,"
				     " bar_offset_hex FROM map_backing_bars_view ORDER BY offset_bytes"),
			    "0|0x200000000|NULL|NULL|NULL;4194304|0x300001000|0000:00:05.0|2|0x1000;");
	assert_string_equal(sql_rows(db, "SELECT pgsize_bytes, pgcount FROM map_expected_pages"
					 " ORDER BY pgsize_bytes"),
			    "4096|1024;2097152|2;");
	for (int round = 0; round < 2; round++) {
		driver_pages(db, sid, 1ull << 32, LEAF_2M, 2);
		driver_pages(db, sid, (1ull << 32) + (4ull << 20), LEAF_4K, 1024);
	}
	driver_pages(db, sid, (1ull << 32) + (8ull << 20), LEAF_4K, 1); /* past the segment */
	assert_string_equal(sql_rows(db, "SELECT pgsize_bytes, expected_pages, seen_pages, agrees"
					 " FROM map_pages_check_view ORDER BY pgsize_bytes"),
			    "4096|2048|2048|1;2097152|4|4|1;");
	free(r.runs); /* map_report_store's, from the recorded maps; segs are this file's */
	itdb_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(refuses_truncated_and_foreign),
		cmocka_unit_test(stores_bar_window_with_expected_pages),
		cmocka_unit_test(shifted_iova_expects_4k_and_flags_mismatch),
		cmocka_unit_test(domain_bitmap_and_scattered_runs),
		cmocka_unit_test(no_bitmap_no_expectation),
		cmocka_unit_test(round_trip_with_segments),
		cmocka_unit_test(import_runs_from_recorded_maps),
	};

	return cmocka_run_group_tests_name("map run report", tests, NULL, NULL);
}
