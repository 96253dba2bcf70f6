/* The io run report: the run and its points pass through the report file as the child wrote them
 * (a point becomes visible only with its count), a foreign or cut file or a point of a device the
 * run does not have is refused, and storing gives io_runs, io_devices, io_points (rates from
 * counts and time, per device) and non-empty latency buckets that add up to the reads, summarized
 * per device and queue depth by io_summary_view and for all devices by io_total_view. */
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
#include "common/schema.h"
#include "io/io_report.h"

static struct io_report_run the_run(void)
{
	struct io_report_run run = { .engine = "vfio",
				     .mapper = "type1",
				     .workload = "randread",
				     .buffer = "anon",
				     .buffer_kind = "anon",
				     .nsid = 1,
				     .bs = 4096,
				     .verify = 1,
				     .ndevices = 2,
				     .duration_ns = 1000000000,
				     .repeat = 2,
				     .size = 2 << 20,
				     .window = 2 << 20,
				     .iova = 1 << 30 };

	run.devices[0] = (struct io_report_device){ .device = "0000:00:04.0",
						    .model = "QEMU NVMe Ctrl",
						    .serial = "x",
						    .iommu = "translated",
						    .block_size = 512,
						    .blocks = 262144,
						    .numa_node = -1,
						    .cpu = 1,
						    .iova = 1 << 30 };
	run.devices[1] = (struct io_report_device){ .device = "0000:00:07.0",
						    .model = "QEMU NVMe Ctrl",
						    .serial = "y",
						    .block_size = 512,
						    .blocks = 262144,
						    .numa_node = -1,
						    .cpu = -1,
						    .iova = 1 << 30 };
	return run;
}

static struct io_report_point *point(uint32_t qd, uint32_t rep, uint32_t dev, uint64_t completed)
{
	struct io_report_point *p = calloc(1, sizeof(*p));

	p->qd = qd;
	p->device_index = dev;
	p->repeat_index = rep;
	p->start_mono_ns = 1000;
	p->end_mono_ns = 1000 + 500000000;
	p->result.elapsed_ns = 500000000; /* half a second */
	p->result.completed = completed;
	p->result.bytes = completed * 4096;
	for (uint64_t i = 0; i < completed; i++)
		lat_hist_add(&p->result.hist, 100000 + i % 2 * 50000); /* 100 or 150 us */
	return p;
}

static void round_trip_and_refusals(void **state)
{
	struct io_report_run run = the_run();
	struct io_report_point *p0 = point(1, 0, 0, 10), *bad = point(1, 0, 2, 10);
	struct io_report r;
	int fd = memfd_create("report", 0);

	assert_true(fd >= 0);
	assert_int_equal(io_report_read(fd, &r), 1); /* nothing written */
	assert_int_equal(io_report_write_run(fd, &run), 0);
	assert_int_equal(io_report_read(fd, &r), 0);
	assert_int_equal(r.npoints, 0); /* the run alone: it failed early */
	io_report_free(&r);
	assert_int_equal(io_report_write_point(fd, 0, p0), 0);
	assert_int_equal(io_report_read(fd, &r), 0);
	assert_int_equal(r.npoints, 1);
	assert_string_equal(r.run.devices[1].serial, "y");
	assert_int_equal(r.points[0].result.completed, 10);
	assert_int_equal(r.points[0].result.hist.count, 10);
	io_report_free(&r);
	assert_int_equal(io_report_write_point(fd, 1, bad), 0); /* a third device's */
	assert_int_equal(io_report_read(fd, &r), -1);
	assert_int_equal(ftruncate(fd, 100), 0); /* cut inside the run */
	assert_int_equal(io_report_read(fd, &r), -1);
	assert_int_equal(pwrite(fd, "X", 1, 0), 1); /* not our magic */
	assert_int_equal(io_report_read(fd, &r), -1);
	close(fd);
	free(p0);
	free(bad);
}

static void stores_runs_points_and_buckets(void **state)
{
	/* qd 1 twice (repeats 0 and 1) and qd 4 once, each on both devices */
	struct io_report_point *pts[6] = { point(1, 0, 0, 10), point(1, 0, 1, 30),
					   point(1, 1, 0, 20), point(1, 1, 1, 30),
					   point(4, 0, 0, 40), point(4, 0, 1, 60) };
	struct io_report r = { .run = the_run(), .npoints = 6 };
	char err[256];
	int64_t sid;
	sqlite3 *db = itdb_open(":memory:", ITDB_CREATE, &it_recorded_schema, err, sizeof(err));

	assert_non_null(db);
	assert_int_equal(itdb_session_begin(db,
					    &(struct itdb_session_info){ .kind = "record",
									 .capture = "bpf" },
					    &sid),
			 0);
	r.points = calloc(6, sizeof(*r.points));
	for (int i = 0; i < 6; i++)
		r.points[i] = *pts[i];
	assert_int_equal(io_report_store(db, sid, &r), 0);
	assert_string_equal(sql_rows(db,
				     "SELECT engine, device, serial, workload, bs_bytes,"
				     " buffer_kind, bar_offset_bytes, verify, repeat_count, device_count"
				     " FROM io_runs"),
			    "vfio|0000:00:04.0,0000:00:07.0|x|randread|4096|anon|NULL|1|2|2;");
	assert_string_equal(sql_rows(db,
				     "SELECT device_index, device, serial, block_size, iova,"
				     " numa_node, cpu, iommu FROM io_devices ORDER BY device_index"),
			    "0|0000:00:04.0|x|512|1073741824|NULL|1|translated;"
			    "1|0000:00:07.0|y|512|1073741824|NULL|NULL|NULL;");
	assert_string_equal(sql_rows(db,
				     "SELECT point, device_index, qd, repeat_index, completed,"
				     " failed, verify_errors, iops, bandwidth_bytes_per_s, mean_ns"
				     " FROM io_points WHERE point IN (0, 1, 4) ORDER BY point"),
			    "0|0|1|0|10|0|0|20.0|81920.0|125000.0;"
			    "1|1|1|0|30|0|0|60.0|245760.0|125000.0;"
			    "4|0|4|0|40|0|0|80.0|327680.0|125000.0;");
	/* 100 us and 150 us fall in two buckets; the buckets hold every read */
	assert_string_equal(sql_rows(db,
				     "SELECT point, count(*), sum(count) FROM io_latency_buckets"
				     " GROUP BY point ORDER BY point"),
			    "0|2|10;1|2|30;2|2|20;3|2|30;4|2|40;5|2|60;");
	assert_string_equal(sql_rows(db, "SELECT count(*) FROM io_latency_buckets"
					 " WHERE NOT (lo_ns <= 100000 AND 100000 <= hi_ns)"
					 " AND NOT (lo_ns <= 150000 AND 150000 <= hi_ns)"),
			    "0;");
	assert_string_equal(sql_rows(db, "SELECT device, qd, repeats, iops, completed"
					 " FROM io_summary_view ORDER BY qd, device_index"),
			    "0000:00:04.0|1|2|30.0|30;0000:00:07.0|1|2|60.0|60;"
			    "0000:00:04.0|4|1|80.0|40;0000:00:07.0|4|1|120.0|60;");
	/* all devices: per repeat the sums (qd 1: 80 and 100 IOPS), then their mean */
	assert_string_equal(sql_rows(db, "SELECT qd, devices, repeats, iops, completed, mean_ns"
					 " FROM io_total_view ORDER BY qd"),
			    "1|2|2|90.0|90|125000.0;4|2|1|200.0|100|125000.0;");
	itdb_close(db);
	free(r.points);
	for (int i = 0; i < 6; i++)
		free(pts[i]);
}

/* A version 3 file's io tables gain version 4's columns, and io_devices is filled from io_runs. */
static void migrates_version_3_io_tables(void **state)
{
	char dir[] = "/tmp/iommutrace-io-XXXXXX", path[128], err[256], version[16];
	int64_t sid;
	sqlite3 *db;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/v3.db", dir);
	db = itdb_open(path, ITDB_CREATE, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	assert_int_equal(itdb_session_begin(db,
					    &(struct itdb_session_info){ .kind = "record",
									 .capture = "bpf" },
					    &sid),
			 0);
	assert_int_equal(sid, 1);
	/* version 3's io tables, as it made them, with one run and one point */
	assert_int_equal(
		itdb_exec(db,
			  "DROP VIEW io_summary_view; DROP VIEW io_total_view; DROP TABLE io_devices;"
			  " DROP TABLE io_points; DROP TABLE io_runs;"
			  " CREATE TABLE io_runs (session_id INTEGER PRIMARY KEY, engine TEXT NOT NULL,"
			  "  device TEXT NOT NULL, model TEXT, serial TEXT, nsid INTEGER NOT NULL,"
			  "  block_size INTEGER, blocks INTEGER, workload TEXT NOT NULL, bs_bytes INTEGER NOT NULL,"
			  "  duration_ns INTEGER NOT NULL, repeat_count INTEGER NOT NULL, mapper TEXT,"
			  "  buffer TEXT NOT NULL, buffer_kind TEXT NOT NULL, size_bytes INTEGER NOT NULL,"
			  "  bar_offset_bytes INTEGER, window_bytes INTEGER NOT NULL, iova INTEGER,"
			  "  verify INTEGER NOT NULL);"
			  " CREATE TABLE io_points (session_id INTEGER NOT NULL, point INTEGER NOT NULL,"
			  "  qd INTEGER NOT NULL, repeat_index INTEGER NOT NULL, start_mono_ns INTEGER NOT NULL,"
			  "  end_mono_ns INTEGER NOT NULL, elapsed_ns INTEGER NOT NULL,"
			  "  completed INTEGER NOT NULL, failed INTEGER NOT NULL, verify_errors INTEGER,"
			  "  bytes INTEGER NOT NULL, iops REAL, bandwidth_bytes_per_s REAL, mean_ns REAL,"
			  "  p50_ns INTEGER, p90_ns INTEGER, p99_ns INTEGER, p999_ns INTEGER, max_ns INTEGER,"
			  "  PRIMARY KEY (session_id, point));"
			  " CREATE VIEW io_summary_view AS SELECT session_id, qd FROM io_points;"
			  " INSERT INTO io_runs VALUES (1, 'vfio', '0000:00:04.0', 'M', 'S', 1, 512, 100,"
			  "  'randread', 4096, 1, 1, 'type1', 'anon', 'anon', 2097152, NULL, 2097152,"
			  "  1073741824, 0);"
			  " INSERT INTO io_points VALUES (1, 0, 4, 0, 1, 2, 1, 10, 0, NULL, 40960, 10.0, 40960.0,"
			  "  100.0, 1, 1, 1, 1, 1);"
			  " UPDATE meta SET value = '3' WHERE key = 'schema_version'",
			  "test"),
		0);
	itdb_close(db);
	db = itdb_open(path, ITDB_APPEND, &it_recorded_schema, err, sizeof(err));
	assert_non_null(db);
	snprintf(version, sizeof(version), "%d;", IT_SCHEMA_VERSION);
	assert_string_equal(sql_rows(db, "SELECT value FROM meta WHERE key = 'schema_version'"),
			    version);
	assert_string_equal(sql_rows(db,
				     "SELECT device_index, device, model, iova FROM io_devices"),
			    "0|0000:00:04.0|M|1073741824;");
	assert_string_equal(sql_rows(db,
				     "SELECT device, device_index, qd, iops FROM io_summary_view"),
			    "0000:00:04.0|0|4|10.0;");
	assert_string_equal(sql_rows(db, "SELECT device_count FROM io_runs"), "1;");
	itdb_close(db);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip_and_refusals),
		cmocka_unit_test(stores_runs_points_and_buckets),
		cmocka_unit_test(migrates_version_3_io_tables),
	};

	return cmocka_run_group_tests_name("io run report", tests, NULL, NULL);
}
