/* The io run report: the run and its points pass through the report file as the child wrote them
 * (a point becomes visible only with its count), a foreign or cut file is refused, and storing
 * gives io_runs, io_points (rates from counts and time) and non-empty latency buckets that add up
 * to the reads, summarized per queue depth by io_summary_view. */
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
#include "io/io_report.h"

static struct io_report_run the_run(void)
{
	struct io_report_run run = { .engine = "vfio", .device = "0000:00:04.0",
				     .model = "QEMU NVMe Ctrl", .serial = "x", .mapper = "type1",
				     .workload = "randread", .buffer = "anon", .buffer_kind = "anon",
				     .nsid = 1, .block_size = 512, .bs = 4096, .verify = 1,
				     .blocks = 262144, .duration_ns = 1000000000, .repeat = 2,
				     .size = 2 << 20, .window = 2 << 20, .iova = 1 << 30 };
	return run;
}

static struct io_report_point *point(uint32_t qd, uint32_t rep, uint64_t completed)
{
	struct io_report_point *p = calloc(1, sizeof(*p));

	p->qd = qd;
	p->repeat_index = rep;
	p->start_mono_ns = 1000;
	p->end_mono_ns = 1000 + 500000000;
	p->result.elapsed_ns = 500000000;	/* half a second */
	p->result.completed = completed;
	p->result.bytes = completed * 4096;
	for (uint64_t i = 0; i < completed; i++)
		lat_hist_add(&p->result.hist, 100000 + i % 2 * 50000);	/* 100 or 150 us */
	return p;
}

static void round_trip_and_refusals(void **state)
{
	struct io_report_run run = the_run();
	struct io_report_point *p0 = point(1, 0, 10);
	struct io_report r;
	int fd = memfd_create("report", 0);

	assert_true(fd >= 0);
	assert_int_equal(io_report_read(fd, &r), 1);	/* nothing written */
	assert_int_equal(io_report_write_run(fd, &run), 0);
	assert_int_equal(io_report_read(fd, &r), 0);
	assert_int_equal(r.npoints, 0);			/* the run alone: it failed early */
	io_report_free(&r);
	assert_int_equal(io_report_write_point(fd, 0, p0), 0);
	assert_int_equal(io_report_read(fd, &r), 0);
	assert_int_equal(r.npoints, 1);
	assert_string_equal(r.run.model, "QEMU NVMe Ctrl");
	assert_int_equal(r.points[0].result.completed, 10);
	assert_int_equal(r.points[0].result.hist.count, 10);
	io_report_free(&r);
	assert_int_equal(ftruncate(fd, 100), 0);		/* cut inside the run */
	assert_int_equal(io_report_read(fd, &r), -1);
	assert_int_equal(pwrite(fd, "X", 1, 0), 1);		/* not our magic */
	assert_int_equal(io_report_read(fd, &r), -1);
	close(fd);
	free(p0);
}

static void stores_runs_points_and_buckets(void **state)
{
	struct io_report r = { .run = the_run(), .npoints = 3 };
	struct io_report_point *pts[3] = { point(1, 0, 10), point(1, 1, 20), point(4, 0, 40) };
	char err[256];
	int64_t sid;
	sqlite3 *db = itdb_open(":memory:", ITDB_CREATE, err, sizeof(err));

	assert_non_null(db);
	assert_int_equal(itdb_session_begin(db, &(struct itdb_session_info){
		.kind = "record", .capture = "bpf" }, &sid), 0);
	r.points = calloc(3, sizeof(*r.points));
	for (int i = 0; i < 3; i++)
		r.points[i] = *pts[i];
	assert_int_equal(io_report_store(db, sid, &r), 0);
	assert_string_equal(sql_rows(db, "SELECT engine, device, workload, bs_bytes, buffer_kind,"
				     " bar_offset_bytes, verify, repeat_count FROM io_runs"),
			    "vfio|0000:00:04.0|randread|4096|anon|NULL|1|2;");
	assert_string_equal(sql_rows(db, "SELECT point, qd, repeat_index, completed, failed,"
				     " verify_errors, iops, bandwidth_bytes_per_s, mean_ns FROM io_points"
				     " ORDER BY point"),
			    "0|1|0|10|0|0|20.0|81920.0|125000.0;"
			    "1|1|1|20|0|0|40.0|163840.0|125000.0;"
			    "2|4|0|40|0|0|80.0|327680.0|125000.0;");
	/* 100 us and 150 us fall in two buckets; the buckets hold every read */
	assert_string_equal(sql_rows(db, "SELECT point, count(*), sum(count) FROM io_latency_buckets"
				     " GROUP BY point ORDER BY point"), "0|2|10;1|2|20;2|2|40;");
	assert_string_equal(sql_rows(db, "SELECT count(*) FROM io_latency_buckets"
				     " WHERE NOT (lo_ns <= 100000 AND 100000 <= hi_ns)"
				     " AND NOT (lo_ns <= 150000 AND 150000 <= hi_ns)"), "0;");
	assert_string_equal(sql_rows(db, "SELECT qd, repeats, iops, completed FROM io_summary_view"
				     " ORDER BY qd"), "1|2|30.0|30;4|1|80.0|40;");
	itdb_close(db);
	free(r.points);
	for (int i = 0; i < 3; i++)
		free(pts[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip_and_refusals),
		cmocka_unit_test(stores_runs_points_and_buckets),
	};

	return cmocka_run_group_tests_name("io run report", tests, NULL, NULL);
}
